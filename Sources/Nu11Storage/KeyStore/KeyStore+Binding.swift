// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// The pairing of a key store with its vault folder, and the quarantine for key records
/// that the repairing check doubts (a key record is never destroyed on a guess).
extension KeyStore {
    var vaultIDPath: String { layout.vaultID }
    public var quarantinePath: String { layout.quarantine }

    /// The vault ID this key store belongs to; nil for a key store made before vault IDs.
    public func vaultID() throws -> ItemID? {
        guard POSIX.exists(vaultIDPath) else { return nil }
        return try VaultIDRecord.open(ProtectedFiles.read(vaultIDPath, limit: 256), deviceKey: deviceKey())
    }

    public func recordVaultID(_ id: ItemID) throws {
        try ProtectedFiles.writeAtomically(VaultIDRecord.seal(id, deviceKey: deviceKey()), to: vaultIDPath)
    }
}
