// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Release
import Nu11Vault

@main
struct Nu11vlt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nu11vlt",
        abstract: "A zero-network encrypted vault for photos and notes.",
        discussion: """
            Items are encrypted with ChaCha20-Poly1305 (c2sp.org/chunked-encryption), one random \
            key per item, wrapped by domain keys that your PIN/passphrase unlocks through Argon2id. \
            Nothing ever touches the network.

            Exit codes: 0 success, 1 other failure, 3 wrong PIN, 4 not found, 5 damaged or \
            tampered data, 6 vault busy or locked out, 7 unsupported version or cost, 8 bound to \
            another key store, 9 the TPM (absent, failing, another machine's, changed PCRs), 64 bad \
            usage or input, 74 I/O error (e.g. disk full).

            \(Nu11Release.name) \(Nu11Release.version), \(Nu11Release.license).
            """,
        version: Nu11Release.version,  // the VERSION file, stamped at build time
        // Grouped in --help as a user looks for them; each command lives in Commands/<name>.swift.
        // `agent-serve` (hidden) is started by `unlock`.
        subcommands: [AgentServe.self],
        groupedSubcommands: [
            CommandGroup(name: "Items", subcommands: [Import.self, List.self, Export.self, View.self, Thumbnail.self, Rotate.self, Delete.self,
                                                      Album.self, Note.self, Fade.self]),
            CommandGroup(name: "Sharing", subcommands: [ShareCommand.self, IdentityCommand.self, DeviceCommand.self]),
            CommandGroup(name: "Session", subcommands: [Init.self, Status.self, Shell.self, Unlock.self, Lock.self, SettingsCommand.self,
                                                        LogCommand.self]),
            CommandGroup(name: "Keys and credentials", subcommands: [Pin.self, Rekey.self, RecoveryCommand.self, Recover.self,
                                                                     TPMCommand.self, FIDO2Command.self, Skeleton.self, Checkin.self]),
            CommandGroup(name: "Care and backups", subcommands: [Check.self, Thumbnails.self, Sweep.self, Backup.self,
                                                                 ArchiveCommand.self, WipeCommand.self]),
        ])

    static func main() {
        Hygiene.apply()
        if let bad = Arguments.firstNonUTF8() {
            Failure.printError("argument \(bad.index) is not UTF-8 text (\(bad.shown)); a file name in another encoding cannot be named here (hint: rename it, e.g. with convmv, or pipe it: nu11vlt import --name NAME - < FILE)")
            Foundation.exit(64)
        }
        if let unknown = CommandNames.unknown(Array(CommandLine.arguments.dropFirst())) {
            Failure.printError(unknown)
            Foundation.exit(64)
        }
        // With `nu11vlt unlock`'s agent running for this vault, the command runs there.
        if let code = AgentClient.run(Array(CommandLine.arguments.dropFirst())) { Foundation.exit(code) }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let code as ExitCode {
            // Failure.run already printed the one-line error.
            Foundation.exit(code.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }  // --help, --version
            // Usage errors: one line with a hint, not a screenful of usage.
            let text = Arguments.negativeNumber(in: message(for: error))
                ?? message(for: error).split(whereSeparator: \.isNewline).joined(separator: " ")
            Failure.printError(text.contains("(hint:") ? text : "\(text) (hint: see `nu11vlt help` or add --help to the command)")
            Foundation.exit(code.rawValue)
        }
    }
}

/// "Did you mean …?" for a mistyped command, and `help NOSUCH` as an error (exit 64).
enum CommandNames {
    static var known: [String] { Nu11vlt.configuration.subcommands.map { $0._commandName } }

    /// The one-line error for an unknown command (or `help` topic), or nil.
    static func unknown(_ args: [String]) -> String? {
        guard var word = args.first, !word.hasPrefix("-") else { return nil }
        var what = "command"
        if word == "help" {
            guard args.count > 1, !args[1].hasPrefix("-") else { return nil }
            word = args[1]
            what = "help topic"
        }
        guard !known.contains(word) else { return nil }
        // The closest commands (by edit distance, at most 2), and those the word begins.
        let closest = known.map { distance($0, word) }.filter { $0 <= 2 }.min()
        let near = known.filter { distance($0, word) == closest || ($0.hasPrefix(word) && word.count >= 2) }
        let hint = near.isEmpty ? "see `nu11vlt help` for the commands" : "did you mean " + near.map { "`\($0)`" }.joined(separator: " or ") + "?"
        return "unknown \(what) '\(word)' (hint: \(hint))"
    }

    /// Levenshtein distance (both words are short).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }
}
