// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// This device's ID in a vault shared between devices (docs/FORMAT.md § 9.6): the key store's
/// `sync-device.n11i`, "N11I" || version 1 || 3 zero bytes || the 16-byte ID, in the clear (it
/// names files in the vault folder, which every device sees). No file: the vault is not shared.
extension KeyStore {
    static let deviceIDMagic: [UInt8] = Array("N11I".utf8)

    /// This device's ID, or nil when the vault was never shared from or to this key store.
    public func syncDeviceID() throws -> ItemID? {
        guard POSIX.exists(layout.syncDevice) else { return nil }
        let bytes = try ProtectedFiles.read(layout.syncDevice, limit: 64)
        guard bytes.count == 24, Array(bytes[0..<4]) == Self.deviceIDMagic, bytes[4] == 1, bytes[5..<8].allSatisfy({ $0 == 0 }),
              let id = try? ItemID(bytes: bytes[8..<24]) else {
            throw Nu11Error(.corrupted, "this device's ID in the key store (\(layout.syncDevice)) is damaged",
                            remedy: .restoreKeyStore, item: layout.syncDevice)
        }
        return id
    }

    /// Records this device's ID (once: an ID already there is kept and returned).
    public func recordSyncDeviceID(_ id: ItemID) throws -> ItemID {
        if let existing = try syncDeviceID() { return existing }
        try ProtectedFiles.writeAtomically(Self.deviceIDMagic + [1, 0, 0, 0] + id.bytes, to: layout.syncDevice)
        return id
    }

    /// Records that this device destroyed a shared vault's item (its key file was in the folder):
    /// an old copy of its files put back by a sync peer is never taken in again (FORMAT.md § 9.6).
    public func recordSharedDeletion(_ id: ItemID) throws {
        try ProtectedFiles.makeDirectory(layout.deleted)
        let path = POSIX.join(layout.deleted, id.hex)
        if !POSIX.exists(path) { try ProtectedFiles.writeAtomically([], to: path) }
    }

    /// Whether this device destroyed the item (`recordSharedDeletion`).
    public func sharedDeletionRecorded(_ id: ItemID) -> Bool { POSIX.exists(POSIX.join(layout.deleted, id.hex)) }
}
