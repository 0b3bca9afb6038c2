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
