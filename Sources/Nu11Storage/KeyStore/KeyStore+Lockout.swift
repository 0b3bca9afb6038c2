// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// The TPM's wrong-PIN limit is its dictionary-attack lockout. On a stock Linux machine the
/// lockout hierarchy has an empty authorization value, so anyone who can talk to the TPM
/// clears the count (`tpm2_dictionarylockout -c`) or raises the limit (`-s`). Enrolment takes
/// that authorization over with a value derived from the recovery key: from then on only the
/// recovery key resets the count early or changes the limit (docs/THREAT-MODEL.md, "The TPM").
extension KeyStore {
    /// What enrolment found and did.
    struct LockoutTaking {
        var held: Bool
        var foreign: Bool
        /// This enrolment set the value now (to be undone if the enrolment fails before its commit).
        var changedNow: Bool
    }

    static let foreignLockout = Nu11Error(
        .tpm, "the TPM's lockout authorization is already set by someone else (another vault on this machine, or the system's owner): whoever holds it can reset the TPM's count of wrong PINs, so a short PIN is not safe with this TPM; nothing was changed",
                  remedy: .advice(.tpmLockoutOwnedElsewhere))

    /// Takes the lockout authorization when it is empty. When it is set and `mayBeOurs` (a
    /// recovery on the machine whose TPM this recovery key already holds), checks it with one
    /// try (a wrong one locks only the lockout hierarchy, for its recovery time). Otherwise it
    /// is someone else's: a PIN below passphrase strength is refused.
    func takeLockout(_ connection: TPMConnection, recoveryKey: SecretBytes, mayBeOurs: Bool, strongPIN: Bool) throws -> LockoutTaking {
        let auth = TPMRecord.lockoutAuth(recoveryKey: recoveryKey)
        guard try connection.lockoutAuthSet() else {
            try connection.changeLockoutAuth(old: nil, new: auth)
            return LockoutTaking(held: true, foreign: false, changedNow: true)
        }
        if mayBeOurs {
            do {
                try connection.changeLockoutAuth(old: auth, new: auth)
                return LockoutTaking(held: true, foreign: false, changedNow: false)
            } catch TPMRefusal.lockedOut {
                // The lockout hierarchy is locked for its recovery time (someone tried a wrong
                // value): the record's word stands; the count is reset later.
                return LockoutTaking(held: true, foreign: false, changedNow: false)
            } catch is TPMRefusal {}
        }
        guard strongPIN else { throw Self.foreignLockout }
        return LockoutTaking(held: false, foreign: true, changedNow: false)
    }

    /// Undoes `takeLockout` after a failed enrolment (best effort: the value is the recovery
    /// key's, which the caller never showed).
    func undoLockout(_ taking: LockoutTaking, _ connection: TPMConnection, recoveryKey: SecretBytes) {
        guard taking.changedNow else { return }
        try? connection.changeLockoutAuth(old: TPMRecord.lockoutAuth(recoveryKey: recoveryKey), new: nil)
    }

    /// Gives the TPM's lockout authorization back (empty) with the recovery key that set it —
    /// also after the key store is gone (a wipe). Needs no key store.
    public static func releaseLockout(recoveryKey: SecretBytes) throws {
        let connection = try TPMConnection()
        guard try connection.lockoutAuthSet() else {
            throw Nu11Error(.notFound, "the TPM's lockout authorization is already empty", remedy: .advice(.nothingToDo))
        }
        do {
            try connection.changeLockoutAuth(old: TPMRecord.lockoutAuth(recoveryKey: recoveryKey), new: nil)
        } catch is TPMRefusal {
            throw Nu11Error(.authenticationFailed, "that recovery key did not set this TPM's lockout authorization (the TPM now refuses lockout commands for its recovery time)",
                            remedy: .advice(.tpmLockoutRecoveryKey))
        }
    }

    /// Clears the TPM's wrong-PIN count early with the recovery key (when this key store set
    /// the lockout authorization).
    func resetLockout(_ connection: TPMConnection, recoveryKey: SecretBytes) throws {
        try connection.resetLockout(auth: TPMRecord.lockoutAuth(recoveryKey: recoveryKey))
    }

    /// Whether the key store is bound to a TPM (nil: it is not) and holds its lockout authorization.
    public func tpmLockoutHeld() throws -> Bool? { try readMaster().tpm.map(\.lockoutHeld) }

    /// Checks that `recoveryKey` is the TPM's lockout authorization with one no-op change (a wrong
    /// one locks lockout commands for the TPM's recovery time, and is refused here in one line).
    public func checkLockout(recoveryKey: SecretBytes) throws {
        let auth = TPMRecord.lockoutAuth(recoveryKey: recoveryKey)
        do {
            try TPMConnection().changeLockoutAuth(old: auth, new: auth)
        } catch is TPMRefusal {
            throw Nu11Error(.authenticationFailed, "the current recovery phrase given is not the TPM's lockout authorization; nothing was changed",
                            remedy: .advice(.tpmLockoutRecoveryKey))
        }
    }

    /// Moves the TPM's lockout authorization from one recovery key's value to another's
    /// (`recovery setup` on a TPM vault, issue 55: the old phrase must not keep clearing the count).
    public func moveLockout(from old: SecretBytes, to new: SecretBytes) throws {
        try TPMConnection().changeLockoutAuth(old: TPMRecord.lockoutAuth(recoveryKey: old), new: TPMRecord.lockoutAuth(recoveryKey: new))
    }
}
