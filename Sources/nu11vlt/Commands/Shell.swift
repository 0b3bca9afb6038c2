// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

/// The vault a `nu11vlt shell` session opened: the commands it runs use it instead of
/// unlocking again. Set and cleared on the main thread only (the CLI is single-threaded).
enum ShellSession {
    nonisolated(unsafe) static var vault: Vault?
    nonisolated(unsafe) static var location: VaultLocation?

    /// Commands that work inside the shell: those that open the vault with its PIN and nothing
    /// else. Commands that need the PIN itself, a fresh unlock, or no vault at all run outside.
    static let allowed: [any ParsableCommand.Type] = [
        Import.self, List.self, Export.self, Delete.self, View.self, Album.self, Album.Create.self, Album.Rename.self,
        Album.ListAlbums.self, Album.DeleteAlbum.self, Album.Move.self, Note.self, Note.Add.self, Note.ListNotes.self,
        Note.Show.self, Note.Edit.self, Note.DeleteNote.self, LogCommand.self, Thumbnail.self, Thumbnails.self,
        IdentityCommand.self, ShareCommand.self,
    ]

    /// The session's vault for `location`, or nil outside a shell.
    static func current(for location: VaultLocation) throws -> Vault? {
        guard let vault else { return nil }
        guard location == self.location else {
            throw Nu11Error(.invalidArgument, "this shell is open on another vault", remedy: .frontEnd("leave out --vault and --keystore inside the shell"))
        }
        return vault
    }
}

struct Shell: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Unlock once, then run commands at a nu11vlt> prompt (Ctrl-D ends; locked after lock.idle).",
        discussion: """
            Commands are typed without `nu11vlt`: list, export ID… -o DIR, import, delete, album, note, log, view, \
            thumbnail(s), identity, share. The history (↑/↓) stays in memory and never reaches disk. After lock.idle without input \
            (a setting, 5 min by default; 0 = never) the vault is locked and the shell ends. Other nu11vlt commands \
            and the desktop app can use the vault while the shell is open.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions

    func run() throws {
        try Failure.run {
            guard ShellSession.vault == nil else {
                throw Nu11Error(.invalidArgument, "the shell is open already", remedy: .frontEnd("type the command itself"))
            }
            let vault = try openVault(location, pin)
            // As the desktop app does: the vault's lock is taken per command, so other nu11vlt
            // commands (and a sweep timer) are not held up while the prompt waits.
            vault.releaseLockBetweenOperations()
            ShellSession.vault = vault
            ShellSession.location = location.location
            defer {
                ShellSession.vault = nil
                vault.lock()
            }
            let idle = vault.settings.lockIdle
            Output.note("nu11vlt: unlocked; type commands without `nu11vlt` (`help` lists them); Ctrl-D locks and leaves")
            let editor = LineEditor(prompt: "nu11vlt> ")
            while true {
                switch editor.read(idle: idle) {
                case .end:
                    Output.note("nu11vlt: locked")
                    return
                case .idle:
                    Output.note("nu11vlt: locked after \(DurationText.format(idle)) without input (lock.idle); the shell has ended")
                    return
                case .line(let text):
                    let words: [String]
                    do { words = try ShellWords.split(text) } catch let error as Nu11Error {
                        Failure.printError(Remedies.line(error))
                        continue
                    }
                    guard let first = words.first else { continue }
                    if ["exit", "quit", "lock"].contains(first) {
                        Output.note("nu11vlt: locked")
                        return
                    }
                    if first == "help" && words.count == 1 {
                        print("commands: import, list, export, delete, view, album, note, log, thumbnail, thumbnails; exit (or Ctrl-D) locks and leaves; add --help to a command for its options")
                        continue
                    }
                    Self.runOne(first == "nu11vlt" ? Array(words.dropFirst()) : words)
                    if vault.isLocked {
                        Output.note("nu11vlt: the vault was locked; the shell has ended")
                        return
                    }
                }
            }
        }
    }

    /// Runs one command line; its errors are printed as outside the shell, and the shell goes on.
    static func runOne(_ words: [String]) {
        if let unknown = CommandNames.unknown(words) {
            Failure.printError(unknown)
            return
        }
        do {
            var command = try Nu11vlt.parseAsRoot(words)
            guard ShellSession.allowed.contains(where: { $0 == type(of: command) }) else {
                let name = words.first ?? ""
                Failure.printError("`\(name)` does not run inside the shell (hint: run `nu11vlt \(name)` in another terminal, or leave the shell with Ctrl-D)")
                return
            }
            // Under the vault's lock, as the app's operations are: the session first follows
            // what another process changed (a rotation, a new PIN or recovery phrase), so it
            // never seals under retired keys or to a replaced phrase.
            if let vault = ShellSession.vault {
                try vault.exclusive { try command.run() }
            } else {
                try command.run()
            }
        } catch is ExitCode {
            // Failure.run printed the one-line error.
        } catch {
            if Nu11vlt.exitCode(for: error) == .success {
                print(Nu11vlt.fullMessage(for: error))
                return
            }
            let text = Nu11vlt.message(for: error).split(whereSeparator: \.isNewline).joined(separator: " ")
            Failure.printError(text.contains("(hint:") ? text : "\(text) (hint: add --help to the command)")
        }
    }
}
