// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// The TPM as the root of the key hierarchy (docs/THREAT-MODEL.md, "The TPM"): enrolment,
/// removal, recovery on another TPM, status.
extension Profiles {
    /// Binds the key store to the TPM. Needs the primary PIN's unlock; `others` are the other
    /// PINs that must keep working. Returns the recovery key (to be shown once).
    /// `recoveryKey`: the vault's recovery phrase, which then serves as the TPM's recovery key too.
    public func enrollTPM(others: [SecretBytes], pin: SecretBytes, pcrMask: UInt32, recoveryKey: SecretBytes? = nil) throws -> SecretBytes {
        guard vault.isPrimary else { throw Nu11Error.wrongPIN }
        // A given recovery key (the phrase of a rebuilt key store) may already hold this TPM's lockout authorization.
        let enrolment = try keyStore.enrollTPM(pins: [pin] + others, pcrMask: pcrMask, state: state, recoveryKey: recoveryKey,
                                               lockoutMayBeOurs: recoveryKey != nil, strongPIN: Strength.passphraseStrong(pin))
        vault.replaceHeld(enrolment.unlocked)
        audit("tpm enroll", detail: pcrMask == 0 ? nil : "PCRs " + TPMRecord.pcrs(in: pcrMask).map(String.init).joined(separator: ","))
        return enrolment.recoveryKey
    }

    public func keyStoreTPMStatus() throws -> KeyStore.TPMStatus { try keyStore.tpmStatus() }

    /// Whether the key store is bound to a TPM whose lockout authorization it holds (nil: not bound).
    public func keyStoreTPMLockoutHeld() throws -> Bool? { try keyStore.tpmLockoutHeld() }

    /// Unbinds the key store from the TPM (every PIN given keeps working without it).
    public func removeTPM(others: [SecretBytes], pin: SecretBytes) throws {
        guard vault.isPrimary else { throw Nu11Error.wrongPIN }
        let (unlocked, late) = try keyStore.removeTPM(pins: [pin] + others, state: state)
        vault.replaceHeld(unlocked)
        if let late { notice("done, but " + late) }
        audit("tpm remove")
        // A revocation (FORMAT.md §4.2e): an old copy of the key store still bound to the TPM,
        // with the PIN, must open nothing added from now on — a new key generation.
        if !index.isReadOnly {
            do { try vault.maintenance.rekey() } catch {
                notice("done, but the keys could not be rotated after the TPM was removed (\(Vault.describe(error))); rotate them to make old copies of the key store useless for what comes next")
            }
        }
    }
}
