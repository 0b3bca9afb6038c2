// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Destroys a whole vault: every key first (that is what makes the content unrecoverable),
/// then the files (overwritten first in secure mode), then the index, then the folders.
enum Wipe {
    /// The caller holds the vault lock (or the vault is being created). Goes on past every
    /// error (a planted symlink, a file that cannot be removed) so that as much as possible
    /// is destroyed, keys first; never follows a symlink (a link is removed, not its
    /// target). Throws at the end, naming every failure, if any.
    static func run(_ location: VaultLocation, secure: Bool, progress: (Int, Int) -> Void = { _, _ in }) throws {
        var failures: [String] = []
        func attempt(_ path: String, _ body: () throws -> Void) {
            do { try body() } catch let error as Nu11Error { failures.append(error.message) } catch { failures.append("\(path): \(Nu11Error.words(error))") }
        }
        func destroy(_ path: String, overwrite: Bool) {
            attempt(path) {
                if overwrite && ProtectedFiles.kind(path) == .file {
                    try ProtectedFiles.overwriteAndRemove(path)
                } else {
                    try ProtectedFiles.remove(path)
                }
            }
        }
        let store = KeyStore(root: location.keyStoreRoot)
        store.releaseTPMCounter()
        // 1. Keys: always overwritten, they are small and they are what matters.
        for file in store.allFiles() where ProtectedFiles.kind(file) != nil { destroy(file, overwrite: true) }
        // The recovery data is keys too (with the phrase it opens the primary vault): its file
        // is overwritten here, and the index that holds the item seals is overwritten below
        // whatever the mode (a damaged index cannot be opened to drop them first).
        destroy(location.vaultRoot + "/recovery.n11r", overwrite: true)
        if ProtectedFiles.exists(location.indexPath), let index = try? VaultIndex(path: location.indexPath) {
            try? index.dropRecoverySeals()
        }
        // 2. Content, 3. the index, both found by walking the vault folder (without following links).
        var files: [String] = []
        var folders: [String] = []
        func walk(_ folder: String) {
            guard let names = try? ProtectedFiles.list(folder) else { return }
            for name in names {
                let path = folder + "/" + name
                if ProtectedFiles.kind(path) == .directory {
                    folders.append(path)
                    walk(path)
                } else {
                    files.append(path)
                }
            }
        }
        if ProtectedFiles.kind(location.vaultRoot) == .directory { walk(location.vaultRoot) }
        let isIndex = { (path: String) in path.hasPrefix(location.indexPath) }
        let ordered = files.filter({ !isIndex($0) && $0 != location.lockPath }) + files.filter(isIndex)
        for (n, file) in ordered.enumerated() {
            progress(n, ordered.count)
            // The index and the sidecars hold the item keys sealed to the phrase: keys, overwritten.
            destroy(file, overwrite: secure || isIndex(file) || file.hasSuffix(".n11m"))
        }
        progress(ordered.count, ordered.count)
        // 4. Folders, deepest first; the lock file goes last.
        destroy(location.lockPath, overwrite: false)
        for folder in folders.sorted(by: { $0.count > $1.count }) + [location.vaultRoot] {
            attempt(folder) { try ProtectedFiles.removeDirectory(folder) }
        }
        for folder in store.layout.folders + [location.keyStoreRoot] {
            attempt(folder) { try ProtectedFiles.removeDirectory(folder) }
        }
        guard failures.isEmpty else {
            throw Nu11Error(.io, "the wipe destroyed every key it could, but \(failures.count) thing(s) could not be removed: "
                                + failures.prefix(5).joined(separator: "; ") + (failures.count > 5 ? "; …" : ""),
                            remedy: .advice(.removeLeftovers))
        }
    }
}
