// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import CNu11Sys
import Foundation
import Nu11Format
import Nu11Media
import Nu11Vault

struct View: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "view",
        abstract: "Show a photo without leaving plaintext on persistent disk.",
        discussion: """
            In a terminal that speaks the kitty or iTerm2 image protocol the image is shown inline \
            (from memory). Otherwise $NU11VLT_VIEWER gets it as /proc/self/fd/N (an anonymous \
            memory file: nothing in any folder), or xdg-open gets a 0600 file in a private RAM \
            folder ($XDG_RUNTIME_DIR/nu11vlt or /dev/shm), removed when it exits or on Ctrl-C. \
            Use a viewer that stays in the foreground (e.g. NU11VLT_VIEWER="feh"); xdg-open may \
            return at once, and then the file is gone before the viewer reads it.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Flag(name: .long, help: "Show inline with the kitty/iTerm2 image protocol.") var inline = false
    @Flag(name: .customLong("no-inline"), help: "Never show inline; always use the viewer.") var noInline = false
    @Argument(help: "The item ID (or a unique prefix of 4+ hex digits).", transform: ItemRef.parse) var id: ItemRef

    func run() throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            let env = ProcessInfo.processInfo.environment
            let protocolName = env["TERM"] == "xterm-kitty" || env["KITTY_WINDOW_ID"] != nil ? "kitty"
                : env["TERM_PROGRAM"] == "iTerm.app" ? "iterm2" : nil
            if !noInline && (inline || (env["NU11VLT_VIEWER"] == nil && protocolName != nil)) {
                let name = protocolName ?? "kitty"
                // First paint: the sealed screen preview (small, decrypted at once); then the
                // full image replaces it (kitty: same image ID, cursor left in place).
                // (iTerm2 cannot replace an inline image in place: it gets the full image only.)
                let item = try vault.items.item(id)
                if name == "kitty", item.thumbnail, let preview = try? vault.photos.thumbnail(id, size: .preview) {
                    try InlineImage.show(preview.bytes, protocolName: name, imageID: 7, keepCursor: true)
                }
                var sink = MemorySink()
                try vault.items.export(id, to: &sink)
                var bytes = sink.bytes
                defer { secureZero(&bytes) }
                try InlineImage.show(bytes, protocolName: name, imageID: 7)
                return
            }
            try ShmViewer.show(vault: vault, id: id, viewer: env["NU11VLT_VIEWER"])
        }
    }
}
