import ArgumentParser
import CNu11Sys
import Foundation
import Nu11Format
import Nu11Vault

struct View: ParsableCommand {
    static let configuration = CommandConfiguration(
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
                var sink = MemorySink()
                try vault.export(id, to: &sink)
                try InlineImage.show(sink.bytes, protocolName: protocolName ?? "kitty")
                return
            }
            try ShmViewer.show(vault: vault, id: id, viewer: env["NU11VLT_VIEWER"])
        }
    }
}

enum InlineImage {
    static func show(_ bytes: [UInt8], protocolName: String) throws {
        let encoded = Data(bytes).base64EncodedString()
        var out = ""
        if protocolName == "iterm2" {
            out = "\u{1B}]1337;File=inline=1;size=\(bytes.count):\(encoded)\u{07}\n"
        } else {
            let chunks = stride(from: 0, to: encoded.count, by: 4096).map { start -> Substring in
                let a = encoded.index(encoded.startIndex, offsetBy: start)
                let b = encoded.index(a, offsetBy: min(4096, encoded.count - start))
                return encoded[a..<b]
            }
            for (i, chunk) in chunks.enumerated() {
                let more = i < chunks.count - 1 ? 1 : 0
                out += i == 0 ? "\u{1B}_Ga=T,f=100,m=\(more);\(chunk)\u{1B}\\" : "\u{1B}_Gm=\(more);\(chunk)\u{1B}\\"
            }
            out += "\n"
        }
        Output.stdout(Array(out.utf8))
    }
}

/// Hands the plaintext to a viewer without persistent disk: a memfd the viewer opens as
/// /proc/self/fd/N when NU11VLT_VIEWER names one (nothing in any folder at all), else a
/// file in the private RAM folder (PlaintextSpool) for xdg-open, removed on every exit path.
enum ShmViewer {
    static func show(vault: Vault, id: ItemRef, viewer: String?) throws {
        let item = try vault.item(id)
        var sink = MemorySink()
        try vault.export(id, to: &sink)
        var bytes = sink.bytes
        defer { secureZero(&bytes) }
        let command = viewer ?? "xdg-open"
        let status: Int32
        let memfd = viewer == nil ? -1 : nu11_memfd("nu11vlt-view")
        if memfd >= 0 {
            defer { close(memfd) }
            var out = FileDescriptorStream(fd: memfd, label: "memfd")
            try out.write(bytes)
            _ = lseek(memfd, 0, SEEK_SET)
            status = try Child.run(shellCommand: command, argument: "/proc/self/fd/\(memfd)", label: "viewer")
        } else {
            let ext = (item.name as NSString).pathExtension
            let file = try PlaintextSpool.create(bytes, suffix: ext.isEmpty || ext.count > 8 ? "" : "." + ext)
            defer { PlaintextSpool.destroy(file) }
            status = try Child.run(shellCommand: command, argument: file.path, label: "viewer")
        }
        guard status == 0 else {
            throw Nu11Error(.io, "the viewer '\(command)' exited with status \(status)", remedy: "check NU11VLT_VIEWER")
        }
    }
}
