import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct View: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a photo without leaving plaintext on persistent disk.",
        discussion: """
            In a terminal that speaks the kitty or iTerm2 image protocol the image is shown inline \
            (from memory). Otherwise it is decrypted to a 0600 file in /dev/shm (RAM), handed to \
            $NU11VLT_VIEWER (or xdg-open), and removed when the viewer exits. Use a viewer that \
            stays in the foreground (e.g. NU11VLT_VIEWER="feh"); xdg-open may return at once.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Flag(name: .long, help: "Show inline with the kitty/iTerm2 image protocol.") var inline = false
    @Flag(name: .customLong("no-inline"), help: "Never show inline; always use the viewer.") var noInline = false
    @Argument(help: "The item ID.") var id: String

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
        FileHandle.standardOutput.write(Data(out.utf8))
    }
}

/// Decrypts into RAM-backed /dev/shm (never persistent disk) and removes it after the viewer.
enum ShmViewer {
    static func show(vault: Vault, id: String, viewer: String?) throws {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDir), isDir.boolValue else {
            throw Nu11Error(.io, "/dev/shm is not available, and nu11vlt never writes plaintext to persistent disk",
                            remedy: "export to a RAM-backed folder yourself, or use a kitty/iTerm2 terminal with --inline")
        }
        let item = try vault.item(id)
        let ext = (item.name as NSString).pathExtension
        let path = "/dev/shm/nu11vlt-view-\(Hex.encode(SecureRandom.bytes(8)))" + (ext.isEmpty ? "" : ".\(ext)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try vault.export(id, toFile: path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        let command = viewer ?? "xdg-open"
        // The path is passed as $1, never interpolated into the command string.
        process.arguments = ["-c", "\(command) \"$1\"", "nu11vlt-view", path]
        do {
            try process.run()
        } catch {
            throw Nu11Error(.notFound, "cannot start the viewer '\(command)'",
                            remedy: "set NU11VLT_VIEWER to an image viewer, e.g. feh")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Nu11Error(.io, "the viewer '\(command)' exited with status \(process.terminationStatus)",
                            remedy: "check NU11VLT_VIEWER")
        }
    }
}
