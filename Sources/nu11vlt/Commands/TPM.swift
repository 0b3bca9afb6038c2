// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Storage
import Nu11Vault

struct TPMCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tpm",
        abstract: "Bind the key store to this machine's TPM 2.0 (wrong PINs counted by the hardware), or recover it.",
        discussion: """
            With a TPM every PIN also needs a secret the TPM releases only for that PIN: a copy of the \
            key store is useless elsewhere, and the TPM's dictionary-attack lockout counts every wrong PIN. \
            The TPM is reached through $NU11VLT_TPM_TCTI, else /dev/tpmrm0.
            """,
        subcommands: [Enroll.self, StatusCommand.self, Remove.self, Recover.self, ReleaseLockout.self])

    /// Said at enrolment when the TPM's lockout authorization is someone else's (the
    /// enrolment went ahead because the PIN is a passphrase).
    static func noteForeignLockout(_ keyStoreRoot: String) {
        guard (try? KeyStore(root: keyStoreRoot).tpmStatus())?.limitResetBy == "someone else" else { return }
        Output.note("nu11vlt: warning: the TPM's lockout authorization belongs to someone else (another vault on this machine, or the system's owner): whoever holds it can reset the TPM's count of wrong PINs, so your passphrase, not the TPM's limit, is what stands against guessing")
    }

    struct ReleaseLockout: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "release-lockout",
            abstract: "Give the TPM's lockout authorization back (empty), with the recovery key of the vault that took it.",
            discussion: "Enrolment sets the TPM's lockout authorization so that only your recovery key resets the wrong-PIN count. After `tpm remove`, or when the vault is gone, this gives it back. Needs no key store.")
        @Option(name: .customLong("recovery-key-fd"),
                help: ArgumentHelp("Read the recovery key from this file descriptor (one line) instead of the terminal.", valueName: "n"))
        var recoveryKeyFD: Int32?

        func run() throws {
            try Failure.run {
                let typed = try PINReader.read(prompt: "Recovery key: ", from: recoveryKeyFD.map { .fd($0) } ?? .terminal)
                try KeyStore.releaseLockout(recoveryKey: try RecoveryKey.parse(typed, as: .tpmKey))
                print("the TPM's lockout authorization is empty again: anyone who can use the TPM can now reset its wrong-PIN count")
            }
        }
    }

    struct Enroll: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "enroll", abstract: "Bind the key store to the TPM and print a recovery key (primary PIN).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var pcr: PCROption
        @OptionGroup var others: OtherPINsOption
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let (vault, typed) = try openVaultKeepingPIN(location, pin)
                let key = try vault.profiles.enrollTPM(others: others.read("Enrolling the TPM"), pin: typed, pcrMask: pcr.mask())
                TPMCommand.noteForeignLockout(vault.location.keyStoreRoot)
                if output.json {
                    try Output.json((try vault.profiles.keyStoreTPMStatus()).json)
                } else {
                    print("the key store is bound to this machine's TPM")
                }
                RecoveryKeyText.show(key, json: output.json)
            }
        }
    }

    struct StatusCommand: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Show whether the key store is bound to a TPM, and the TPM's lockout state (no PIN).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let status = try location.locked.tpmStatus()
                if output.json { return try Output.json(status.json) }
                guard status.enrolled else {
                    print("TPM        not bound (enrol with `nu11vlt tpm enroll`)")
                    return
                }
                print("TPM        bound" + (status.thisTPM == true ? " (this machine's TPM)" : status.thisTPM == false ? " to ANOTHER TPM: use `nu11vlt tpm recover`" : ""))
                print("PCRs       " + ((status.pcrs ?? []).isEmpty ? "none" : (status.pcrs ?? []).map(String.init).joined(separator: ",")))
                if let failures = status.lockoutFailures, let max = status.lockoutMaxTries, let interval = status.lockoutIntervalSeconds {
                    print("lockout    \(failures) of \(max) wrong PINs counted (\(status.wrongPINsLeft ?? 0) left); one is forgiven every \(DurationText.format(Double(interval)))")
                }
                switch status.limitResetBy {
                case "recovery key": print("limit      only your recovery key resets the count or changes the limit (nu11vlt holds the TPM's lockout authorization)")
                case "someone else": print("limit      WARNING: the TPM's lockout authorization is someone else's: whoever holds it can reset the count, so only a strong passphrase is safe")
                case "anyone": print("limit      WARNING: the TPM's lockout authorization is empty: anyone who can use the TPM can reset the count (`tpm2_dictionarylockout -c`); enrol again to take it: `nu11vlt tpm remove`, then `nu11vlt tpm enroll`")
                default: break
                }
                if status.skeletonArmedInTPM == true {
                    print("skeleton   armed in the TPM" + (status.skeletonSecondsLeft.map { ": \(DurationText.format(Double($0))) left on the TPM's clock" } ?? "")
                          + (status.skeletonRestartsLeft.map { ", \($0) TPM restart(s) allowed before the next check-in" } ?? ""))
                }
                if let problem = status.problem { print("problem    \(problem)") }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Unbind the key store from the TPM (primary PIN; PINs are then guarded by Argon2id alone).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var others: OtherPINsOption
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let (vault, typed) = try openVaultKeepingPIN(location, pin)
                try vault.profiles.removeTPM(others: others.read("Removing the TPM"), pin: typed)
                if output.json { return try Output.json((try vault.profiles.keyStoreTPMStatus()).json) }
                print("the key store is no longer bound to the TPM: a copy of it can again be attacked offline, as fast as Argon2id allows")
                print("the TPM's lockout authorization stays under your recovery key; `nu11vlt tpm release-lockout` gives it back")
            }
        }
    }

    struct Recover: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recover",
            abstract: "Open the primary vault with the recovery key and the primary PIN, and bind it to this machine's TPM.",
            discussion: "For a new machine, a cleared TPM or a changed PCR. Asks for the recovery key, then the primary PIN.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Option(name: .customLong("recovery-key-fd"),
                help: ArgumentHelp("Read the recovery key from this file descriptor (one line) instead of the terminal.", valueName: "n"))
        var recoveryKeyFD: Int32?
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let typed = try PINReader.read(prompt: "Recovery key: ", from: recoveryKeyFD.map { .fd($0) } ?? .terminal)
                let key = try RecoveryKey.parse(typed, as: .tpmKey)
                let secret = try pin.read(prompt: "Primary PIN or passphrase: ")
                let result = try location.locked.recoverTPM(recoveryKey: key, pin: secret, onWait: waiting)
                // Clearing the count is best effort (the TPM refuses lockout commands for a while
                // after a wrong lockout value): say so rather than leave it unsaid.
                if let left = try? location.locked.tpmStatus().wrongPINsLeft, left == 0 {
                    Output.note("nu11vlt: the TPM's wrong-PIN count could not be cleared yet (it refuses lockout commands for a while after a wrong value); run `nu11vlt tpm recover` again later, or wait for it to forgive wrong PINs")
                }
                if output.json { return try Output.json((try location.locked.tpmStatus()).json) }
                print("the primary vault opens again and is bound to this machine's TPM (the same recovery key keeps working)")
                if result.fadeDestroyed > 0 {
                    print("\(result.fadeDestroyed) fade item(s) were destroyed: their schedule was sealed by the old TPM")
                }
                print("backup and duress PINs lived in the old TPM: set them again with `nu11vlt pin set-backup` / `pin set-duress` if you use them")
            }
        }
    }
}
