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
            if output.json {
                try Output.json(info.json)
            } else {
                print("created vault \(loc.vaultRoot)")
                print("key store     \(loc.keyStoreRoot)")
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

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the vault and key store paths, the KDF cost and (after unlock) item and album counts.",
        discussion: """
            Without --unlock no PIN is asked and counts are not shown. With half a vault here (a \
            moved vault folder or key store), --search DIR looks under DIR for the other half by \
            the vault ID both halves carry. A vault folder found there (one only) is recorded in the \
            key store, and commands that are not given --vault (or NU11VLT_VAULT) use it from then on; \
            nothing else is changed.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Flag(name: .long, help: "Ask for the PIN to show item and album counts.")
    var unlock = false
    @Option(name: .long, help: ArgumentHelp("Find the missing half of this vault (a moved vault folder or key store) under this folder.",
                                            valueName: "dir"), completion: .directory)
    var search: String?
    @OptionGroup var output: JSONOption

    func run() throws {
        try Failure.run {
            if let search { return try searchOtherHalf(in: search) }
            var info = try location.locked.info()
            if unlock || pin.pinFD != nil || pin.pinStdin || ShellSession.vault != nil {
                info = try openVault(location, pin).status()
            } else if info.initialized {
                try runGate(location)
            }
            let half = location.locked.halfVaultError
            if output.json {
                try Output.json(info.json)
                if let half { throw half }
                return
            }
            let state = half != nil ? "  (incomplete: see below)" : info.initialized ? "" : "  (not initialised; run `nu11vlt init`)"
            print("vault      \(info.vaultPath)\(state)")
            print("key store  \(info.keyStorePath)")
            if let half { throw half }
            if let t = info.kdfIterations, let m = info.kdfMemoryMiB { print("Argon2id   \(t) passes, \(m) MiB") }
            if let items = info.items, let albums = info.albums {
                print("items      \(items)")
                print("albums     \(albums)")
            }
            if let fading = info.fadeItems { print("fading     \(fading)") }
            if info.initialized, let backup = try? location.locked.backupInfo() {
                print(BackupLines.folder(backup))
                print(BackupLines.changed(backup))
                print(BackupLines.phrase(backup))
            }
            print("decoders   \(DecoderSandbox.summary)")
        }
    }
}

struct Pin: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Manage the PIN or passphrase.",
        subcommands: [Change.self, SetBackup.self, SetDuress.self])

    struct Change: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "change",
            abstract: "Change the PIN or passphrase and rotate the vault's keys; no content is re-encrypted.",
            discussion: """
                The vault's domain keys are rotated with the PIN (as `nu11vlt rekey`), so an old \
                copy of the key store opened with the old PIN opens nothing added after the change.
                """)

        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Option(name: .customLong("new-pin-fd"),
                help: ArgumentHelp("Read the new PIN from this file descriptor (one line; it may be the same descriptor as the current PIN's, on the next line).",
                                   valueName: "m"))
        var newPinFD: Int32?
        @Option(name: .customLong("other-pins-fd"),
                help: ArgumentHelp("When a new KDF cost applies: read the other PINs of this key store (backup, duress; the primary one when changing another) from this descriptor, one per line, an empty line or the end for none. Every slot is re-sealed at the new cost; a slot whose PIN is not given stops opening.",
                                   valueName: "k"))
        var otherPinsFD: Int32?
        @Flag(name: .customLong("keep-keys"), help: .hidden)
        var keepKeys = false
        @OptionGroup var quiet: QuietOption
        @OptionGroup var output: JSONOption

        func validate() throws {
            if let fd = newPinFD, fd < 0 { throw ValidationError("--new-pin-fd must be a file descriptor number") }
            if let fd = otherPinsFD, fd < 0 { throw ValidationError("--other-pins-fd must be a file descriptor number") }
            if keepKeys {
                throw ValidationError("--keep-keys is no longer offered: a PIN change revokes the old PIN, so it always rotates the keys (no content is re-encrypted); leave the flag out")
            }
        }

        /// The other PINs, asked for only when a KDF cost change re-seals every slot.
        func otherPINs() throws -> [SecretBytes] {
            try readOtherPINs(fd: otherPinsFD, why: "The new KDF cost applies to every PIN of this key store.",
                              refusal: "the new KDF cost re-seals every PIN of this key store, and there is no terminal to ask for the others; nothing was changed")
        }

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin, prompt: "Current PIN or passphrase: ")
                let new = try PINReader.readNew(prompt: "New PIN or passphrase: ",
                                                from: newPinFD.map { .fd($0) } ?? .terminal)
                let pending = try vault.pendingKDFCost()
                let others = pending == nil ? [] : try otherPINs()
                let cost = try pending ?? vault.kdfCost()
                if try !vault.profiles.keyStoreTPMStatus().enrolled, let warning = Strength.pinWarning(new, parameters: cost) {
                    Output.note("nu11vlt: " + warning)
                }
                let line = RekeyProgressLine(quiet: quiet.quiet || output.json)
                try vault.profiles.changePIN(new: new, others: others, progress: line.update)
                line.finish()
                if output.json { return try Output.json(Results.PINChange(changed: "\(vault.role)", keysRotated: true)) }
                print("PIN changed; the vault's keys were rotated")
            }
        }
    }
}
