// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// A vault whose creation was cut short (a failing disk, a kill): `create` writes the key
/// store's `creating` marker before anything else and removes it as its last step. While it
/// is there the vault counts as none (`presence`): no command opens it, `status` says to run
/// `init`, and `init` clears what the cut-short creation left and starts again — so a retry
/// is never blocked by "a vault already exists" or a half vault. Nothing that holds an item
/// is ever cleared: a creation that never finished has none, and a file in an item folder
/// stops the clearing.
extension LockedVault {
    /// Whether a vault's creation here was cut short.
    public var creationUnfinished: Bool { KeyStore(root: location.keyStoreRoot).isBeingCreated }

    /// Clears what a cut-short creation left (key store files, index, recovery data); the
    /// marker stays until the new creation removes it. Under the vault's lock, so a creation
    /// still running in another process is waited for, and then not touched if it finished.
    static func discardUnfinishedCreation(_ location: VaultLocation) throws {
        let store = KeyStore(root: location.keyStoreRoot)
        if let item = itemFile(under: location) {
            throw Nu11Error(.alreadyExists,
                            "the vault at \(location.vaultRoot) was left unfinished by a creation that was cut short, but its folders hold an item file (\(item)); nothing was removed",
                            remedy: .otherVaultFolder, item: location.vaultRoot)
        }
        let lock = ProtectedFiles.kind(location.vaultRoot) == .directory ? try FileLock(path: location.lockPath) : nil
        defer { withExtendedLifetime(lock) {} }
        guard store.isBeingCreated else { return }  // the other creation finished meanwhile
        let keyFiles = store.allFiles().filter { $0 != store.creationMarker && ProtectedFiles.kind($0) == .file }
        let vaultFiles = ["", "-wal", "-shm", "-journal"].map { location.indexPath + $0 } + [location.vaultRoot + "/recovery.n11r"]
        for file in keyFiles + vaultFiles where ProtectedFiles.kind(file) == .file {
            try ProtectedFiles.overwriteAndRemove(file)
        }
    }

    /// The first item file (not a temp file) in the vault's item folders, if there is one.
    private static func itemFile(under location: VaultLocation) -> String? {
        func walk(_ folder: String, depth: Int) -> String? {
            guard depth < 4, let names = try? ProtectedFiles.list(folder) else { return nil }
            for name in names.sorted() {
                let path = folder + "/" + name
                switch ProtectedFiles.kind(path) {
                case .directory: if let found = walk(path, depth: depth + 1) { return found }
                case .file where name.hasPrefix(ProtectedFiles.tempPrefix): continue
                case nil: continue
                default: return path
                }
            }
            return nil
        }
        let folders = [location.vaultRoot + "/Vault", location.fadeFolder, location.backupFolder, location.notesFolder, location.thumbnailsFolder]
        return folders.lazy.compactMap { walk($0, depth: 0) }.first
    }
}
