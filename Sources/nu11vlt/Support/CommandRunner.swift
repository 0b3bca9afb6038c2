// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format

/// Runs one command line in this process and returns its exit code, its errors printed as
/// `nu11vlt` prints them (for `nu11vlt shell` and the unlock agent, which must not exit).
enum CommandRunner {
    static func execute(_ words: [String], hint: String) -> Int32 {
        if let unknown = CommandNames.unknown(words) {
            Failure.printError(unknown)
            return 64
        }
        do {
            var command = try Nu11vlt.parseAsRoot(words)
            // Under the vault's lock, as the app's operations are: the session first follows
            // what another process changed (a rotation, a new PIN or recovery phrase), so it
            // never seals under retired keys or to a replaced phrase.
            if let vault = ShellSession.vault {
                try vault.exclusive { try command.run() }
            } else {
                try command.run()
            }
            return 0
        } catch let error as Nu11Error {
            Failure.printError(Remedies.line(error))
            return Failure.exitCode(error.code)
        } catch let code as ExitCode {
            return code.rawValue  // Failure.run printed the one-line error.
        } catch {
            let code = Nu11vlt.exitCode(for: error)
            if code == .success {
                print(Nu11vlt.fullMessage(for: error))
                return 0
            }
            // As `nu11vlt` says it (the unlock agent parses its clients' command lines).
            let text = Arguments.negativeNumber(in: Nu11vlt.message(for: error), arguments: ["nu11vlt"] + words)
                ?? Nu11vlt.message(for: error).split(whereSeparator: \.isNewline).joined(separator: " ")
            Failure.printError(text.contains("(hint:") ? text : "\(text) (hint: \(hint))")
            return code.rawValue
        }
    }
}
