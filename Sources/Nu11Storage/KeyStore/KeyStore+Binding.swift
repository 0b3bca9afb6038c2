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

    /// Where the vault folder was found after it moved (FORMAT.md §4.4c), when the record reads
    /// as one; nil otherwise. A hint only: the caller checks the folder's vault ID.
    public func recordedVaultFolder() -> String? {
        guard ProtectedFiles.kind(layout.vaultFolder) == .file,
              let bytes = try? ProtectedFiles.read(layout.vaultFolder, limit: 7 + VaultFolderRecord.maxPathBytes) else { return nil }
        return VaultFolderRecord.decode(bytes)
    }

    public func recordVaultFolder(_ path: String) throws {
        try ProtectedFiles.writeAtomically(VaultFolderRecord.encode(path), to: layout.vaultFolder)
    }
}
