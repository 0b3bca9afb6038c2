// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Where a vault lives: the documents tree (the seed's layout) and, separately, the key store.
///
///     <vault>/Vault/Albums/<AlbumID>/<PhotoID>.n11
///     <vault>/Vault/Photos/<PhotoID>.n11
///     <vault>/Fade/<PhotoID>.n11
///     <vault>/Backup/<PhotoID>.n11
///     <vault>/Notes/{vault,fade}_<NoteID>.n11note
///     <vault>/Thumbnails/<PhotoID>.n11thumb   (sealed grid tile + screen preview)
///     <vault>/index.sqlite
///
/// Defaults follow the XDG base directories: `$XDG_DATA_HOME/nu11vlt` (else
/// `~/.local/share/nu11vlt`) and `$XDG_STATE_HOME/nu11vlt` (else `~/.local/state/nu11vlt`).
public struct VaultLocation: Sendable, Equatable {
    public var vaultRoot: String
    public var keyStoreRoot: String

    public init(vaultRoot: String, keyStoreRoot: String) {
        self.vaultRoot = Self.absolute(vaultRoot)
        self.keyStoreRoot = Self.absolute(keyStoreRoot)
    }

    /// Explicit paths win; then NU11VLT_VAULT / NU11VLT_KEYSTORE; then XDG defaults.
    public static func resolve(vault: String?, keyStore: String?,
                               environment: [String: String] = ProcessInfo.processInfo.environment) -> VaultLocation {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/state"
        return VaultLocation(vaultRoot: vault ?? environment["NU11VLT_VAULT"] ?? data + "/nu11vlt",
                             keyStoreRoot: keyStore ?? environment["NU11VLT_KEYSTORE"] ?? state + "/nu11vlt")
    }

    static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return URL(fileURLWithPath: full).standardizedFileURL.path
    }

    var indexPath: String { vaultRoot + "/index.sqlite" }
    var lockPath: String { vaultRoot + "/.lock" }
    var photosFolder: String { vaultRoot + "/Vault/Photos" }
    var albumsFolder: String { vaultRoot + "/Vault/Albums" }
    var fadeFolder: String { vaultRoot + "/Fade" }
    var backupFolder: String { vaultRoot + "/Backup" }
    var notesFolder: String { vaultRoot + "/Notes" }
    /// One fixed place per item ID, whatever its album or domain: an album move never
    /// touches a thumbnail, and every shredding path finds it by the ID alone.
    var thumbnailsFolder: String { vaultRoot + "/Thumbnails" }

    /// Every item's sidecar (FORMAT.md §2.2), and the vault's album names (§2.3).
    var metaFolder: String { vaultRoot + "/Meta" }

    var folders: [String] {
        [vaultRoot, vaultRoot + "/Vault", photosFolder, albumsFolder, fadeFolder, backupFolder, notesFolder, thumbnailsFolder, metaFolder]
    }

    func sidecarPath(_ id: ItemID) -> String { metaFolder + "/\(id.hex).n11m" }

    /// A shared vault's item keys for the other devices, and its devices (FORMAT.md § 9.6).
    var sharedKeysFolder: String { vaultRoot + "/Keys" }
    var devicesFolder: String { vaultRoot + "/Devices" }
    func sharedKeyPath(_ id: ItemID) -> String { sharedKeysFolder + "/\(id.hex).\(SharedItemKey.fileExtension)" }
    func deviceRecordPath(_ id: ItemID) -> String { devicesFolder + "/\(id.hex).\(DeviceRecord.fileExtension)" }

    func albumNamePath(_ id: ItemID) -> String { metaFolder + "/\(id.hex).n11a" }

    func thumbnailPath(_ id: ItemID) -> String { thumbnailsFolder + "/\(id.hex).n11thumb" }

    func albumFolder(_ album: ItemID) -> String { albumsFolder + "/" + album.hex }

    /// The file of an item, from its domain, kind and album.
    func path(id: ItemID, kind: ItemKind, domain: Domain, album: ItemID?) -> String {
        if kind == .note {
            return notesFolder + "/\(domain == .fade ? "fade" : "vault")_\(id.hex).n11note"
        }
        switch domain {
        case .fade: return fadeFolder + "/\(id.hex).n11"
        case .backup: return backupFolder + "/\(id.hex).n11"
        case .vault, .archive:
            if let album { return albumFolder(album) + "/\(id.hex).n11" }
            return photosFolder + "/\(id.hex).n11"
        }
    }
}
