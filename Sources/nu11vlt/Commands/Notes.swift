// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Note: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "note",
        abstract: "Encrypted notes: add, list, show, edit, delete.",
        discussion: """
            The body comes from $VISUAL or $EDITOR, else `vi` (a 0600 file in a private RAM-backed folder, $XDG_RUNTIME_DIR/nu11vlt or /dev/shm, \
            removed afterwards, also on Ctrl-C) or, when stdin is not a terminal, from stdin. Titles are stored encrypted.

            vi, vim and neovim are started with swap, backup and undo files and viminfo/ShaDa off, so they keep no copy of the note. \
            Other editors may: nano (with `set backup` or `set historylog`), emacs (auto-save #files#, backups~), \
            gedit and VS Code (session and backup folders) can write the note's text under your home folder. \
            Prefer vi, or pipe the note through stdin.
            """,
        subcommands: [Add.self, ListNotes.self, Show.self, Edit.self, DeleteNote.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Write a new note.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Option(name: .long, help: "The title. Other users can see it in /proc/PID/cmdline while the command runs (it is stored sealed); --title-fd keeps it out of argv.")
        var title = ""
        @Option(name: .customLong("title-fd"), help: ArgumentHelp("Read the title from this descriptor (one line) instead of argv.", valueName: "n"))
        var titleFD: Int32?
        @Option(name: .long, help: ArgumentHelp("Fade (self-destruct) after: 30s, 10m, 24h, 7d, or default.", valueName: "duration"))
        var fade: String?
        @OptionGroup var output: JSONOption

        func validate() throws {
            if titleFD != nil && !title.isEmpty { throw ValidationError("use either --title or --title-fd") }
            if pin.pinStdin && isatty(0) == 0 { throw ValidationError("--pin-stdin cannot be used when the body comes from stdin; use --pin-fd") }
            if let fade, fade != "default" { try Failure.usage { _ = try DurationText.parse(fade) } }
        }

        func run() throws {
            try Failure.run {
                let title = try titleFD.map { try PINReader.readName(fd: $0, what: "title") } ?? self.title
                let vault = try openVault(location, pin)
                let body = try NoteEditor.body(initial: [])
                let note = try vault.notes.addNote(title: title, body: body, fade: try fadeSeconds(fade, settings: vault.settings))
                if output.json { try Output.json(NoteJSON(note)) } else { print(note.id) }
            }
        }
    }

    struct ListNotes: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List notes.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let notes = try openVault(location, pin).notes.list()
                if output.json { return try Output.json(NoteJSON.all(notes)) }
                let formatter = Output.localTime
                for note in notes {
                    let fade = note.fadesAt.map { "  (fades \(formatter.string(from: $0)))" } ?? ""
                    print("\(note.id)  \(formatter.string(from: note.created))  \(note.title.isEmpty ? "(untitled)" : Output.escaped(note.title))\(fade)")
                }
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Print a note's body.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The note ID (or a unique prefix of 4+ hex digits).", transform: ItemRef.parse) var id: ItemRef
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin)
                var body = try vault.notes.noteBody(id)
                defer { secureZero(&body) }
                guard output.json else { return Output.stdout(body) }
                let item = try vault.items.item(id)
                let note = try vault.notes.list().first { $0.id == item.id }
                try Output.json(Results.NoteBody(id: item.id.hex, name: item.name, size: item.size, created: item.created,
                                                 fadesAt: note?.fadesAt, body: String(decoding: body, as: UTF8.self)))
            }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "edit", abstract: "Edit a note in $EDITOR (or replace its body from stdin).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Option(name: .long, help: "A new title. Other users can see it in /proc/PID/cmdline while the command runs; --title-fd keeps it out of argv.")
        var title: String?
        @Option(name: .customLong("title-fd"), help: ArgumentHelp("Read the new title from this descriptor (one line) instead of argv.", valueName: "n"))
        var titleFD: Int32?
        @Argument(help: "The note ID (or a unique prefix of 4+ hex digits).", transform: ItemRef.parse) var id: ItemRef
        @OptionGroup var output: JSONOption

        func validate() throws {
            if titleFD != nil && title != nil { throw ValidationError("use either --title or --title-fd") }
            if pin.pinStdin && isatty(0) == 0 { throw ValidationError("--pin-stdin cannot be used when the body comes from stdin; use --pin-fd") }
        }

        func run() throws {
            try Failure.run {
                let title = try titleFD.map { try PINReader.readName(fd: $0, what: "title") } ?? self.title
                let vault = try openVault(location, pin)
                var old = try vault.notes.noteBody(id)
                defer { secureZero(&old) }
                var body = try NoteEditor.body(initial: old)
                defer { secureZero(&body) }
                let saved = try vault.notes.updateNote(id, body: body, title: title)
                if output.json { return try Output.json(NoteJSON(saved)) }
                print("saved \(saved.id) (the edited note has a new ID and key; the old version was shredded)")
            }
        }
    }

    struct DeleteNote: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete notes (crypto-shredding).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Flag(name: .long, help: "Overwrite the file first.") var secure = false
        @Argument(help: "Note IDs (or unique prefixes of 4+ hex digits).", transform: ItemRef.parse) var ids: [ItemRef]
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin)
                let full = try ids.map { try Results.fullID(vault, $0) }
                try vault.items.delete(ids, secure: secure ? true : nil)
                if output.json {
                    try Output.json(Results.Deleted(deleted: full, mode: (secure || vault.settings.deletionMode == .secure) ? "secure" : "standard"))
                } else {
                    for id in full { print("deleted \(id)") }
                }
            }
        }
    }
}

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
