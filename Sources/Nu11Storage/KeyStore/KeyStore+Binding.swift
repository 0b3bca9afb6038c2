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

    /// Moves an item's key record into `quarantine/` (it stays restorable by moving it back
    /// into `items/`).
    public func quarantineItemKey(_ id: ItemID) throws {
        let path = itemPath(id)
        guard POSIX.exists(path) else { return }
        try ProtectedFiles.makeDirectory(quarantinePath)
        try ProtectedFiles.move(path, to: POSIX.join(quarantinePath, id.hex + ".key"))
    }

    /// Names of quarantined key records.
    public func quarantinedKeyIDs() throws -> [String] {
        guard POSIX.exists(quarantinePath) else { return [] }
        return try ProtectedFiles.list(quarantinePath).filter { $0.hasSuffix(".key") }
    }
}
