// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

extension Profiles {
    /// Re-seals this PIN's slot under `new` and rotates the vault's domain keys with it (every
    /// item key record re-wrapped and every index row re-sealed, no content touched): a PIN
    /// change revokes the old PIN, so it starts a new key generation (FORMAT.md §4.2e) and an
    /// old copy of the key store opened with the old PIN opens nothing added after the change.
    /// Applies the kdf.* settings when they are set (non-zero); a cost change re-seals every
    /// slot in use, so `others` must hold the other PINs of this key store (see
    /// `KeyStore.changePIN`).
    /// The current PIN is not needed again: the slot opens with the key-encryption key the
    /// unlock derived, so only the new PIN (and, for a cost change, the others) is stretched.
    public func changePIN(new: SecretBytes, others: [SecretBytes] = [],
                          progress: @escaping (RekeyProgress) -> Void = { _ in }) throws {
        try LockedVault.validateNewPIN(new)
        let parameters = try vault.pendingKDFCost()
        let current = try held
        let report = try vault.maintenance.rotate(to: current.keys.rotated(created: UInt64(max(0, now))), progress: progress) { keys in
            try keyStore.changePIN(unlocked: current, new: new, parameters: parameters, others: others, replacing: keys)
        }
        if !vault.isLocked { audit("pin change", count: report.keyRecords, detail: "keys rotated") }
    }
}
