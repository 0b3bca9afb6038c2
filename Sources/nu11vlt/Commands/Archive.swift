// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct ArchiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "archive",
        abstract: "Portable and device-bound .nu11vlt archives: export, import, inspect.",
        discussion: """
            --portable archives open on any machine with their password (Argon2id, then \
            AES-256-GCM in c2sp.org/chunked-encryption streams; docs/FORMAT.md specifies them and \
            tools/nu11vlt_decrypt.py decrypts them independently). --secure archives keep the items \
            in their .n11 envelopes, sealed with this key store's Archive key: only this key store \
            can import them.
            """,
        subcommands: [ExportArchive.self, ImportArchive.self, Inspect.self])

    struct PasswordOptions: ParsableArguments {
        @Option(name: .customLong("password-fd"), help: ArgumentHelp("Read the archive password from this descriptor (one line).",
                                                                     valueName: "n"))
        var passwordFD: Int32?

        var source: PINReader.Source { passwordFD.map { .fd($0) } ?? .terminal }
    }

    struct ExportArchive: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "export", abstract: "Write the vault (or one album) to an archive.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var password: PasswordOptions
        @Flag(name: .long, help: "Password-protected; opens on any machine.") var portable = false
        @Flag(name: .long, help: "Bound to this key store; opens nowhere else.") var secure = false
        @Option(name: .short, help: ArgumentHelp("The archive file (.nu11vlt).", valueName: "file")) var output: String
        @Option(name: .long, help: ArgumentHelp("Only this album.", valueName: "name")) var album: String?
        @Option(name: .customLong("kdf-memory"), help: ArgumentHelp("Argon2id memory in MiB (portable; at least 19).", valueName: "mib"))
        var kdfMemory: UInt32?
        @Option(name: .customLong("kdf-iterations"), help: ArgumentHelp("Argon2id passes (portable; at least 2).", valueName: "n"))
        var kdfIterations: UInt32?
        @Flag(name: .long, help: "Replace the output file if it exists.") var force = false
        @Flag(name: .customLong("include-fade"),
              help: "Put fade items into a portable archive too. Their deadline cannot travel with a copy: whoever has the archive and its password keeps them.")
        var includeFade = false
        @Flag(name: .customLong("strip-location"), help: "Remove photos' and videos' locations (portable archives; the export.strip_location setting makes it the default).")
        var stripLocation = false
        @Flag(name: .customLong("keep-location"), help: "Keep locations even when the export.strip_location setting is on.")
        var keepLocation = false
        @Flag(name: .customLong("generate-password"),
              help: "Make a strong random passphrase (8 words) for the portable archive and print it once on stderr, as age does.")
        var generatePassword = false
        @OptionGroup var json: JSONOption
        @OptionGroup var quiet: QuietOption

        func validate() throws {
            if portable == secure { throw ValidationError("choose --portable or --secure") }
            if generatePassword && (secure || password.passwordFD != nil) {
                throw ValidationError("--generate-password is for --portable archives, instead of --password-fd")
            }
            if stripLocation && keepLocation { throw ValidationError("use either --strip-location or --keep-location") }
            if stripLocation && secure { throw ValidationError("--strip-location is for --portable archives (a secure archive carries the sealed files as they are)") }
            if includeFade && secure { throw ValidationError("--include-fade is for --portable archives (secure archives carry fade items and their deadlines)") }
            if secure && (kdfMemory != nil || kdfIterations != nil || password.passwordFD != nil) {
                throw ValidationError("--secure archives use the key store's Archive key, not a password")
            }
            if let m = kdfMemory, m < KDFParameters.floor.memoryMiB || m > 4096 { throw ValidationError("--kdf-memory must be 19 … 4096") }
            if let t = kdfIterations, t < 2 || t > 32 { throw ValidationError("--kdf-iterations must be 2 … 32") }
        }

        func archivePassword(parameters: KDFParameters) throws -> SecretBytes {
            guard generatePassword else {
                return try ArchiveCommand.checkedPassword(try PINReader.readNew(prompt: "Archive password: ", from: password.source, isPIN: false),
                                                          parameters: parameters)
            }
            let generated = Strength.generatePassphrase()
            generated.withUnsafeBytes { Output.stderr("archive password (shown once; keep it safe): " + String(decoding: $0, as: UTF8.self) + "\n") }
            return generated
        }

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin)
                var secret: SecretBytes?
                var parameters = KDFParameters(iterations: kdfIterations ?? 3, memoryKiB: (kdfMemory ?? 256) * 1024)
                if portable {
                    if kdfMemory == nil && kdfIterations == nil { parameters = try Argon2id.calibrate() }
                    secret = try archivePassword(parameters: parameters)
                }
                var line: ProgressLine?
                if includeFade {
                    Output.note("nu11vlt: warning: fade items go into the archive; their deadlines cannot be enforced on a copy")
                }
                let info = try vault.archives.exportArchive(to: output, password: secret, parameters: parameters, album: album,
                                                   includeFade: includeFade, overwrite: force,
                                                   stripLocation: portable && (stripLocation || (vault.photos.stripsLocationByDefault && !keepLocation))) { done, total in
                    if line == nil { line = ProgressLine("exporting", items: total, quiet: quiet.quiet) }
                    line?.update(items: done)
                    try AgentInterruption.check()
                }
                line?.finish()
                if json.json { try Output.json(info.json) } else { print("exported \(info.items) item(s) to \(output) (\(info.kind))") }
            }
        }
    }

    /// Archive passwords leave the machine with the archive: one an offline guesser could
    /// find is refused (a generated passphrase is offered instead).
    static func checkedPassword(_ secret: SecretBytes, parameters: KDFParameters) throws -> SecretBytes {
        let bits = Strength.bits(secret)
        guard bits >= Strength.archiveFloor else {
            throw Nu11Error(.invalidArgument,
                            "the archive password is too weak (about \(Int(bits)) bits; an offline guesser needs \(Strength.offlineTime(bits: bits, parameters: parameters))); nothing was written",
                            remedy: .frontEnd("use 4 or more random words, or pass --generate-password"))
        }
        if bits < 60 {
            Output.note("nu11vlt: warning: the archive password is fair, not strong (about \(Int(bits)) bits): an offline guesser needs \(Strength.offlineTime(bits: bits, parameters: parameters)) on one core")
        }
        return secret
    }

    struct ImportArchive: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import an archive, all or nothing, after checking every entry.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var password: PasswordOptions
        @Option(name: .long, help: "Which vault to import into: vault or backup (must be the one the PIN opens).")
        var into: String?
        @OptionGroup var json: JSONOption
        @OptionGroup var quiet: QuietOption
        @Argument(help: "The archive file.") var file: String

        func validate() throws {
            if let into, into != "vault", into != "backup" { throw ValidationError("--into must be vault or backup") }
        }

        func run() throws {
            try Failure.run {
                // Reject a malformed archive before asking for anything.
                _ = try Archives.inspectArchive(file)
                let vault = try openVault(location, pin)
                var line: ProgressLine?
                let items = try vault.archives.importArchive(from: file, into: into.map { $0 == "backup" ? .backup : .vault },
                                                    password: { try PINReader.read(prompt: "Archive password: ", from: password.source) }) { done, total in
                    if line == nil { line = ProgressLine("importing", items: total, quiet: quiet.quiet) }
                    line?.update(items: done)
                    try AgentInterruption.check()
                }
                line?.finish()
                if json.json { return try Output.json(ItemJSON.all(items)) }
                for item in items { print("\(item.id)  \(Output.escaped(item.name))") }
                Output.note("imported \(items.count) item(s)")
            }
        }
    }

    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "inspect", abstract: "Kind, version, KDF cost and entry count, without the password.")
        @OptionGroup var json: JSONOption
        @Argument(help: "The archive file.") var file: String

        func run() throws {
            try Failure.run {
                let info = try Archives.inspectArchive(file)
                if json.json { return try Output.json(info.json) }
                print("kind       \(info.kind)")
                print("version    \(info.version)")
                if let t = info.kdfIterations, let m = info.kdfMemoryMiB { print("Argon2id   \(t) passes, \(m) MiB") }
                print("items      \(info.items)")
                print("entries    \(info.entries)")
            }
        }
    }
}
