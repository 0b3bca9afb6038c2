import ArgumentParser
import Foundation
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
            tampered data, 6 vault busy or locked out, 7 unsupported version or cost, 64 bad \
            usage or input, 74 I/O error (e.g. disk full).
            """,
        version: "0.1.0",
        subcommands: [Init.self, Status.self, Import.self, List.self, Export.self, View.self, Album.self,
                      Delete.self, Note.self, Fade.self, Sweep.self, WipeCommand.self, SettingsCommand.self, Pin.self,
                      Skeleton.self, Checkin.self, ArchiveCommand.self, Check.self, Thumbnail.self, Thumbnails.self])

    static func main() {
        Hygiene.apply()
        if let bad = Arguments.firstNonUTF8() {
            Failure.printError("argument \(bad.index) is not UTF-8 text (\(bad.shown)); a file name in another encoding cannot be named here (hint: rename it, e.g. with convmv, or pipe it: nu11vlt import --name NAME - < FILE)")
            Foundation.exit(64)
        }
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
            let text = message(for: error).split(whereSeparator: \.isNewline).joined(separator: " ")
            Failure.printError(text.contains("(hint:") ? text : "\(text) (hint: see `nu11vlt help` or add --help to the command)")
            Foundation.exit(code.rawValue)
        }
    }
}
