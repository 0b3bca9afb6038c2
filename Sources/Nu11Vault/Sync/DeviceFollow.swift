// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

extension VaultLocation {
    /// The folders where another device's changes to a shared vault arrive (FORMAT.md § 9.6):
    /// item files, sidecars and album names, key files, device records. Not the album folders
    /// themselves: `Vault/Albums` holds them, and an item moved between two albums also leaves
    /// or enters `Vault/Photos` or changes its sidecar only when another device moved it there.
    public var arrivalFolders: [String] {
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
