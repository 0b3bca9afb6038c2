// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a new vault and its key store.",
        discussion: """
            Asks for a new PIN or passphrase twice, with echo off. The Argon2id cost is calibrated \
            on this machine to about half a second with at least 256 MiB, unless you choose it; \
            the floor is 2 passes and 19 MiB.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions

    @OptionGroup var kdf: KDFOptions

    @Flag(name: .long, help: "Bind the key store to this machine's TPM 2.0 from the start (prints a recovery key).")
    var tpm = false
    @OptionGroup var pcr: PCROption
    @Option(name: .customLong("backups"),
            help: ArgumentHelp("Whether backup tools may copy the vault folder: yes or no (asked at a terminal; without one and without this option, no). A restored snapshot plus the recovery phrase brings back what was deleted after it.",
                               valueName: "yes|no"))
    var backups: BackupChoice?
    @Flag(name: .customLong("backup"), help: .hidden)
    var backup = false

    @OptionGroup var output: JSONOption

    func validate() throws {
        if pcr.pcrs != nil && !tpm { throw ValidationError("--tpm-pcrs needs --tpm") }
        if backup && backups == .no { throw ValidationError("--backup means --backups yes: give one of them") }
    }

    /// What a new user needs before the first import (printed once, by `init`).
    static let firstRun = """

        Keep in mind:
          • The vault folder holds your encrypted items; the key store holds the keys. The
            PIN opens them together; the recovery phrase below opens the vault folder alone.
          • Back up the vault folder with restic, borg or rsync (`nu11vlt backup enable` allows
            it if you said no). Never back up or sync the key store: back up with
            `restic backup --exclude-caches ~` or `borg create --exclude-caches REPO::NAME ~`,
            which skip it (README, "Backups and recovery").
          • Lose the PIN, the key store and the recovery phrase and everything in the vault is
            gone for good: nobody, not even nu11vlt, can recover it.

        Next:
          nu11vlt import ~/Pictures/photo.jpg      (a folder: import -r FOLDER)
          nu11vlt list
          nu11vlt export ID -o photo.jpg
        """

    func run() throws {
        try Failure.run {
            let loc = location.location
            if let half = LockedVault(loc).halfVaultError { throw half }
            if LockedVault(loc).isInitialized {
                throw Nu11Error(.alreadyExists, "a vault already exists at \(loc.vaultRoot)",
                                remedy: .frontEnd("use another --vault/--keystore"))
            }
            let allowBackups = try BackupQuestion.answer(backups ?? (backup ? BackupChoice.yes : nil), vaultRoot: loc.vaultRoot)
            let secret = try PINReader.readNew(prompt: "New PIN or passphrase: ", from: pin.source)
            let parameters = try kdf.parameters()
            let phrase: SecretBytes
            if tpm {
                phrase = try LockedVault.createWithTPM(at: loc, pin: secret, parameters: parameters, pcrMask: pcr.mask(), allowBackups: allowBackups,
                                                       onNotice: { Output.note("nu11vlt: warning: \(Output.escaped(Remedies.line($0)))") })
            } else {
                phrase = RecoveryKey.generate()
                var settings = Settings()
                settings.allowBackups = allowBackups
                try LockedVault.create(at: loc, pin: secret, parameters: parameters, recoveryPhrase: phrase, settings: settings,
                                       onNotice: { Output.note("nu11vlt: warning: \(Output.escaped(Remedies.line($0)))") })
            }
            let info = try LockedVault(loc).info()
            // With the TPM no guess can be checked offline, and the TPM counts the online ones.
            if !tpm, let warning = Strength.pinWarning(secret, parameters: parameters) { Output.note("nu11vlt: " + warning) }
            if tpm { TPMCommand.noteForeignLockout(loc.keyStoreRoot) }
            let sync = SyncthingFolder.find(vault: info.vaultPath)
            if let sync { SyncLines.warn(sync) }
            if output.json {
                try Output.json(info.json(sync: sync))
            } else {
                print("created vault \(Output.escaped(loc.vaultRoot))")
                print("key store     \(Output.escaped(loc.keyStoreRoot))")
                print("Argon2id      \(parameters.iterations) passes, \(parameters.memoryMiB) MiB")
                if tpm { print("TPM           bound to this machine's TPM (wrong PINs are counted by the hardware)") }
                print(BackupQuestion.outcome(allowBackups))
                print(Self.firstRun)
                if allowBackups { print("\n" + Backup.explanation) }
            }
            RecoveryKeyText.showPhrase(phrase, tpm: tpm, json: output.json)
        }
    }
}
