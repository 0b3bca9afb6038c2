// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

/// Editors keep copies of what they edit: vim's swap file, backup, undo file and viminfo
/// (whose registers hold the inserted text), neovim's ShaDa. For the vi family the note is
/// opened with all of them off, as `pass` does; other editors are named in `note --help`.
enum EditorTraces {
    static let viFamily: Set<String> = ["vi", "vim", "vim.basic", "vim.tiny", "vim.nox", "vim.gtk3", "nvim", "view", "vimdiff", "rvim", "gvim"]

    /// The editor command with the options that make a vi-family editor keep nothing.
    static func forgetful(_ command: String) -> String {
        let program = command.split(separator: " ").first.map { String($0.split(separator: "/").last ?? $0) } ?? ""
        guard viFamily.contains(program) else { return command }
        return command + " -n -i NONE --cmd 'set nobackup nowritebackup noundofile noswapfile' -c 'set viminfo= nobackup nowritebackup noundofile'"
    }
}

/// Gets a note body: from stdin when it is not a terminal, else from $EDITOR on a 0600
/// file in a private folder on RAM (see PlaintextSpool), removed on every exit path.
enum NoteEditor {
    static func body(initial: [UInt8]) throws -> [UInt8] {
        if isatty(0) == 0 { return try readBounded(fd: 0, label: "stdin") }
        let file = try PlaintextSpool.create(initial, suffix: ".txt")
        defer { PlaintextSpool.destroy(file) }
        let env = ProcessInfo.processInfo.environment
        let editor = EditorTraces.forgetful(env["VISUAL"] ?? env["EDITOR"] ?? "vi")
        let status = try Child.run(shellCommand: editor, argument: file.path, label: "editor")
        guard status == 0 else {
            throw Nu11Error(.io, "the editor exited with status \(status); nothing was saved",
                            remedy: .frontEnd("save and quit the editor normally"))
        }
        let fd = open(file.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw Nu11Error(.io, "the editor's file disappeared; nothing was saved", remedy: .frontEnd("try again")) }
        defer { close(fd) }
        return try readBounded(fd: fd, label: file.path)
    }

    /// Everything `fd` yields, up to the note size limit; the read buffer is zeroed.
    static func readBounded(fd: Int32, label: String) throws -> [UInt8] {
        var sink = MemorySink()
        var source = FileDescriptorStream(fd: fd, label: label)
        var buffer = [UInt8](repeating: 0, count: 65536)
        defer { secureZero(&buffer) }
        while true {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            try buffer.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            guard sink.bytes.count <= Notes.maxNoteBytes else {
                throw Nu11Error(.invalidArgument, "the note is larger than 16 MiB", remedy: .frontEnd("import it as a file instead"))
            }
        }
        return sink.bytes
    }
}
