// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

extension VaultLocation {
    /// The folders where another device's changes to a shared vault arrive (FORMAT.md § 9.6):
    /// item files, sidecars and album names, key files, device records. Not the album folders
    /// themselves: `Vault/Albums` holds them, and an item moved between two albums also leaves
    /// or enters `Vault/Photos` or changes its sidecar only when another device moved it there.
    /// None while the vault is not shared (no `Keys/`: `device pair` and `device add` make it).
    public var arrivalFolders: [String] {
        guard ProtectedFiles.kind(sharedKeysFolder) == .directory else { return [] }
        let albums = ((try? ProtectedFiles.list(albumsFolder)) ?? []).map { albumsFolder + "/" + $0 }
        return [photosFolder, albumsFolder, notesFolder, metaFolder, thumbnailsFolder, sharedKeysFolder, devicesFolder] + albums
    }
}

extension Devices {
    /// For a session that stays open (the app): what the other devices added, deleted or moved
    /// since it last looked is taken in now, as at an unlock (`adoptFromOtherDevices`), with the
    /// same notices. Nothing on a vault this key store does not share, for another PIN than the
    /// primary one, or on a read-only vault. Returns whether what the vault lists changed.
    public func followOtherDevices() -> Bool {
        let shared = (try? context()) ?? nil
        guard role == .primary, !index.isReadOnly, shared != nil else { return false }
        do {
            let r = try adoptFromOtherDevices()
            return r.adopted + r.deletedElsewhere + r.albumChanges + r.keysRestored > 0
        } catch {
            notice("the items other devices added could not be taken in (\(Vault.describe(error))); the next change tries again")
            return false
        }
    }
}

extension Devices {
    /// Which device added an item of a shared vault, from its key file (FORMAT.md § 9.6: the
    /// device ID, authenticated with the item key under the shared key): "this device", the other
    /// device's name from its record (its ID's start when the record does not open), or nil when
    /// the vault is not shared, the item has no key file (Fade, the backup vault) or the file does
    /// not say (version 1).
    public func addedBy(_ id: ItemID) -> String? {
        guard let shared = (try? context()) ?? nil,
              let bytes = try? ProtectedFiles.read(location.sharedKeyPath(id), limit: 256),
              (try? SharedItemKey.open(bytes, id: id, vaultID: shared.vaultID, key: shared.key)) != nil,
              let device = try? SharedItemKey.head(bytes, id: id).device else { return nil }
        if device == shared.device { return "this device" }
        let name = (try? ProtectedFiles.read(location.deviceRecordPath(device), limit: 8192))
            .flatMap { try? DeviceRecord.open($0, id: device, vaultID: shared.vaultID, main: keys.main).name }
        return name ?? "device \(device.hex.prefix(8))"
    }
}
