// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import CNu11Sys
import Foundation
import Nu11Format
import Nu11Vault

/// The vault a `nu11vlt shell` session opened: the commands it runs use it instead of
/// unlocking again. Set and cleared on the main thread only (the CLI is single-threaded).
enum ShellSession {
    nonisolated(unsafe) static var vault: Vault?
    nonisolated(unsafe) static var location: VaultLocation?
    /// In the unlock agent: whether the client that sent the running command has a terminal
    /// (its stdin, passed to us, is then that terminal, where a question can be answered).
    nonisolated(unsafe) static var clientTerminal = false

    /// Commands that run in the shell's process, on its unlocked vault. Every other command
    /// (those that need the PIN itself, a fresh unlock, or no vault at all) runs as its own
    /// `nu11vlt` process, which asks for what it needs.
    static let allowed: [any ParsableCommand.Type] = [
        Import.self, List.self, Export.self, Delete.self, View.self, Album.self, Album.Create.self, Album.Rename.self,
        Album.ListAlbums.self, Album.DeleteAlbum.self, Album.Move.self, Note.self, Note.Add.self, Note.ListNotes.self,
        Note.Show.self, Note.Edit.self, Note.DeleteNote.self, LogCommand.self, Thumbnail.self, Thumbnails.self, Rotate.self,
        IdentityCommand.self, ShareCommand.self,
        Fade.self, Fade.Set.self, SettingsCommand.self, SettingsCommand.ListSettings.self, SettingsCommand.Get.self,
        SettingsCommand.SetSetting.self, Status.self, Check.self,
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
            Commands are typed without `nu11vlt`: every command runs; import, list, export, delete, view, album, \
            note, log, fade, settings, status, check, thumbnail(s), identity and share on the unlocked vault, the others (pin, \
            rekey, recovery, tpm, fido2, wipe…) as their own process, which asks for the PIN again. `~` and \
            `~/…` name your home folder; Tab completes commands, item IDs and paths. The history (↑/↓) stays \
            in memory and never reaches disk. After lock.idle without input (a setting, 5 min by default; \
            0 = never) the vault is locked and the shell ends. Other nu11vlt commands and the desktop app can \
            use the vault while the shell is open.
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
            // Commands typed here (and those it starts as processes) name this vault when they
            // are given no --vault or --keystore: the paths, never a secret.
            setenv("NU11VLT_VAULT", location.location.vaultRoot, 1)
            setenv("NU11VLT_KEYSTORE", location.location.keyStoreRoot, 1)
            defer {
                ShellSession.vault = nil
                vault.lock()
            }
            let idle = vault.settings.lockIdle
            Output.note("nu11vlt: unlocked; type commands without `nu11vlt` (`help` lists them); Ctrl-D locks and leaves")
            let editor = LineEditor(prompt: "nu11vlt> ", complete: ShellCompletion.candidates)
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
                        print("commands: every nu11vlt command (\(ShellCompletion.commands.joined(separator: ", "))); exit (or Ctrl-D) locks and leaves; add --help to a command for its options")
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
        guard let command = try? Nu11vlt.parseAsRoot(words) else {
            _ = CommandRunner.execute(words, hint: "add --help to the command")  // prints the usage error
            return
        }
        if type(of: command) == Shell.self {
            Failure.printError("the shell is open already (hint: type the command itself)")
        } else if ShellSession.allowed.contains(where: { $0 == type(of: command) }) {
            _ = CommandRunner.execute(words, hint: "add --help to the command")
        } else {
            ShellProcess.run(words)
        }
    }
}

/// A command the shell does not run in its own process: `nu11vlt WORDS…` as a child on the
/// same terminal (it asks for its PIN itself); Ctrl-C goes to it, not to the shell.
enum ShellProcess {
    static func run(_ words: [String]) {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            Failure.printError("cannot find the nu11vlt program (hint: run `nu11vlt \(words.first ?? "")` in another terminal)")
            return
        }
        var cArgs = ([exe] + words).map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        fflush(nil)
        let old = signal(SIGINT, SIG_IGN)
        defer { signal(SIGINT, old) }
        var pid: Int32 = 0
        let rc = nu11_spawn_self(exe, &cArgs, [0, 1, 2], 3, 0, &pid)
        guard rc == 0 else {
            Failure.printError("cannot start nu11vlt \(words.first ?? ""): \(String(cString: strerror(rc))) (hint: run it in another terminal)")
            return
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}
