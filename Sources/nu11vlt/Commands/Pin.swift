// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

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

struct NewPINOption: ParsableArguments {
    @Option(name: .customLong("new-pin-fd"),
            help: ArgumentHelp("Read the new PIN from this file descriptor (one line; may be the current PIN's descriptor, next line).",
                               valueName: "m"))
    var newPinFD: Int32?

    func read(_ prompt: String) throws -> SecretBytes {
        try PINReader.readNew(prompt: prompt, from: newPinFD.map { .fd($0) } ?? .terminal)
    }
}

extension Pin {
    struct SetBackup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-backup",
            abstract: "Set the backup PIN, which opens a separate, complete vault.",
            discussion: """
                Needs the primary PIN. The backup PIN opens the Backup domain as a vault of its own \
                (photos, albums, notes, fade) where nothing of the primary vault is visible. Setting \
                it again replaces the backup vault (its items are destroyed) and clears the duress PIN.
                """)
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var newPIN: NewPINOption
        @Flag(name: .long, help: "Replace a backup vault that holds items without asking (its items are destroyed).")
        var replace = false
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin, prompt: "Primary PIN or passphrase: ")
                let held = try vault.profiles.backupVaultItemCount()
                if held > 0 && !replace {
                    try Confirm.typed("replace", question: "The backup vault holds \(held) item(s); a new backup PIN destroys them.",
                                      offTerminal: Nu11Error(.invalidArgument, "the backup vault holds \(held) item(s), which a new backup PIN destroys; nothing was changed",
                                                             remedy: .frontEnd("pass --replace to destroy them and set the new backup PIN")),
                                      notConfirmed: "type replace, or pass --replace")
                }
                try vault.profiles.setBackupPIN(try newPIN.read("New backup PIN or passphrase: "))
                if output.json { return try Output.json(Results.PINChange(changed: "backup", keysRotated: false)) }
                print("backup PIN set")
            }
        }
    }

    struct SetDuress: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-duress",
            abstract: "Set a duress PIN: it silently destroys the primary vault, then opens the backup vault.",
            discussion: "Run it with the backup PIN as the current PIN. Off by default.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var newPIN: NewPINOption
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin, prompt: "Backup PIN or passphrase: ")
                try vault.profiles.setDuressPIN(try newPIN.read("New duress PIN: "))
                if output.json { return try Output.json(Results.PINChange(changed: "duress", keysRotated: false)) }
                print("duress PIN set")
            }
        }
    }
}
