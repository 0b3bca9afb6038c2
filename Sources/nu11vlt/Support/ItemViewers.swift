// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import CNu11Sys
import Foundation
import Nu11Format
import Nu11Media
import Nu11Vault

enum InlineImage {
    /// kitty takes PNG only: images are re-encoded in memory (long side ≤ 2048 px).
    static func show(_ bytes: [UInt8], protocolName: String, imageID: Int? = nil, keepCursor: Bool = false) throws {
        if protocolName == "iterm2" {
            let encoded = Data(bytes).base64EncodedString()
            Output.stdout(Array("\u{1B}]1337;File=inline=1;size=\(bytes.count):\(encoded)\u{07}\n".utf8))
            return
        }
        var png: [UInt8]
        do {
            png = try ImageHelper.shared.png(bytes, maxSide: 2048)
        } catch {
            throw Nu11Error(.invalidArgument, "the item is not an image nu11vlt can show inline (\(error.reason))",
                            remedy: .frontEnd("pass --no-inline to hand it to a viewer"))
        }
        defer { secureZero(&png) }
        Output.stdout(Array((KittyGraphics.escape(png: png, id: imageID, keepCursor: keepCursor) + (keepCursor ? "" : "\n")).utf8))
    }
}

/// Hands the plaintext to a viewer without persistent disk: a memfd the viewer opens as
/// /proc/self/fd/N when NU11VLT_VIEWER names one (nothing in any folder at all), else a
/// file in the private RAM folder (PlaintextSpool) for xdg-open, removed on every exit path.
enum ShmViewer {
    static func show(vault: Vault, id: ItemRef, viewer: String?) throws {
        let item = try vault.items.item(id)
        var sink = MemorySink()
        try vault.items.export(id, to: &sink)
        var bytes = sink.bytes
        defer { secureZero(&bytes) }
        let command = viewer ?? "xdg-open"
        if viewer == nil && !ShmViewer.onPath("xdg-open") {
            throw Nu11Error(.notFound, "there is no viewer to show \(item.name) with: xdg-open is not installed",
                            remedy: .frontEnd("install xdg-utils (sudo apt install xdg-utils), or set NU11VLT_VIEWER to a viewer that stays in the foreground (e.g. NU11VLT_VIEWER=feh), or export it: nu11vlt export \(item.id.hex) -o FILE"))
        }
        if let program = command.split(separator: " ").first.map(String.init), !program.contains("="), !["exec", "command", "nohup"].contains(program),
           !(program.contains("/") ? access(program, X_OK) == 0 : ShmViewer.onPath(program)) {
            throw Nu11Error(.notFound, "the viewer '\(command)' was not found", remedy: .frontEnd("check NU11VLT_VIEWER: it names a program on PATH (e.g. feh, mpv, eog)"))
        }
        let status: Int32
        let memfd = viewer == nil ? -1 : nu11_memfd("nu11vlt-view")
        if memfd >= 0 {
            defer { close(memfd) }
            var out = FileDescriptorStream(fd: memfd, label: "memfd")
            try out.write(bytes)
            _ = lseek(memfd, 0, SEEK_SET)
            status = try Child.run(shellCommand: command, argument: "/proc/self/fd/3", label: "viewer", keeping: memfd)
        } else {
            let ext = (item.name as NSString).pathExtension
            let file = try PlaintextSpool.create(bytes, suffix: ext.isEmpty || ext.count > 8 ? "" : "." + ext)
            defer { PlaintextSpool.destroy(file) }
            status = try Child.run(shellCommand: command, argument: file.path, label: "viewer")
        }
        if status == 127 {
            throw Nu11Error(.notFound, "the viewer '\(command)' was not found", remedy: .frontEnd("check NU11VLT_VIEWER: it names a program on PATH (e.g. feh, mpv, eog)"))
        }
        guard status == 0 else {
            throw Nu11Error(.io, "the viewer '\(command)' exited with status \(status)", remedy: .frontEnd("check NU11VLT_VIEWER"))
        }
    }

    /// Whether `program` is an executable file in one of PATH's folders.
    static func onPath(_ program: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
    }
}
