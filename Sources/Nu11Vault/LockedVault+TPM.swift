// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// The TPM as the root of the key hierarchy (docs/THREAT-MODEL.md, "The TPM"): enrolment,
/// removal, recovery on another TPM, status.
extension LockedVault {
    /// Creates a vault bound to the TPM from the start; returns the recovery key (shown once).
    public static func createWithTPM(at location: VaultLocation, pin: SecretBytes, parameters: KDFParameters,
                                     pcrMask: UInt32, allowBackups: Bool = false, clock: any VaultClock = SystemClock(),
                                     onNotice: (Notice) -> Void = { _ in }) throws -> SecretBytes {
        // One secret for both: the TPM's recovery key is the vault's recovery phrase.
        let phrase = RecoveryKey.generate()
        // The TPM is reached before anything is created, so a machine without one keeps no half vault.
        _ = try TPMConnection()
        var settings = Settings()
        settings.allowBackups = allowBackups
        let locked = try create(at: location, pin: pin, parameters: parameters, recoveryPhrase: phrase, settings: settings, clock: clock,
                                onNotice: onNotice)
        do {
            return try locked.gated(onWait: {}) { _, keyStore, _, state, _ in
                try keyStore.enrollTPM(pins: [pin], pcrMask: pcrMask, state: state, recoveryKey: phrase,
                                       strongPIN: Strength.passphraseStrong(pin)).recoveryKey
            }
        } catch {
            // A vault that was to be TPM-bound and is not must not stay behind looking finished.
            try? Wipe.run(location, secure: false)
            throw error
        }
    }

    /// Opens the primary vault with the recovery key and the primary PIN without the TPM it
    /// was enrolled with, and enrols this machine's TPM. The device state was sealed by the
    /// old TPM: the fade schedule went with it, so fade items are destroyed (as when the
    /// state is lost), and the backup and duress PINs must be set again.
    public func recoverTPM(recoveryKey: SecretBytes, pin: SecretBytes, onWait: () -> Void = {}) throws -> (fadeDestroyed: Int, notices: [String]) {
        guard isInitialized else {
            if let half = halfVaultError { throw half }
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)", remedy: .createVaultOrPointAtIt, item: location.vaultRoot)
        }
        let lock = try FileLock(path: location.lockPath, onWait: onWait)
        defer { withExtendedLifetime(lock) {} }
        let keyStore = KeyStore(root: location.keyStoreRoot)
        let index = try VaultIndex(path: location.indexPath)
        try Pairing.verify(location, keyStore: keyStore, index: index)
        var state = DeviceState(now: 0)
        _ = EffectiveTime.advance(&state, clock: clock)
        state.settingsSaved = (try? keyStore.settingsStatus()) == .present
        let unlocked = try keyStore.recoverTPM(recoveryKey: recoveryKey, pin: pin, state: state, strongPIN: Strength.passphraseStrong(pin))
        var destroyed = 0
        let shredder = Shredder(location, keyStore: keyStore, secure: Shredder.secureMode(keyStore))
        for id in try index.itemIDs(domain: .fade) {
            try shredder.shred(id: id, kind: nil, domain: .fade, album: nil)
            try index.deleteItems([id])
            destroyed += 1
        }
        try AuditTrail.append([AuditEntry(time: state.latestSeen, event: "tpm recover", count: destroyed, detail: "fade items destroyed")],
                              keys: unlocked.keys, keyStore: keyStore,
                              maxBytes: ((try? keyStore.loadSettings().settings) ?? Settings()).logMaxKiB << 10, now: state.latestSeen)
        return (destroyed, [])
    }

    /// What `tpm status` shows (no PIN; runs no gate, so it answers on another machine too).
    public func tpmStatus() throws -> KeyStore.TPMStatus {
        guard isInitialized else {
            if let half = halfVaultError { throw half }
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)", remedy: .createVaultOrPointAtIt, item: location.vaultRoot)
        }
        return try KeyStore(root: location.keyStoreRoot).tpmStatus()
    }
}
