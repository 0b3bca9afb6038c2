import Foundation
import Nu11Format
import Nu11Storage

/// Destroys a whole vault: every key first (that is what makes the content unrecoverable),
/// then the files (overwritten first in secure mode), then the index, then the folders.
enum Wipe {
    /// The caller holds the vault lock (or the vault is being created).
    static func run(_ location: VaultLocation, secure: Bool) throws {
        let store = KeyStore(root: location.keyStoreRoot)
        // 1. Keys: always overwritten, they are small and they are what matters.
        for file in store.allFiles() where FileManager.default.fileExists(atPath: file) {
            try ProtectedFiles.overwriteAndRemove(file)
        }
        // 2. Content, 3. the index, both found by walking the vault folder.
        var files: [String] = []
        var folders: [String] = []
        if let walker = FileManager.default.enumerator(atPath: location.vaultRoot) {
            while let rel = walker.nextObject() as? String {
                let path = location.vaultRoot + "/" + rel
                var isDir: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { continue }
                if isDir.boolValue { folders.append(path) } else { files.append(path) }
            }
        }
        let isIndex = { (path: String) in path.hasPrefix(location.indexPath) }
        for file in files.filter({ !isIndex($0) && !$0.hasSuffix("/.lock") }) + files.filter(isIndex) {
            if secure { try ProtectedFiles.overwriteAndRemove(file) } else { try ProtectedFiles.remove(file) }
        }
        // 4. Folders, deepest first; the lock file goes last.
        try? ProtectedFiles.remove(location.lockPath)
        for folder in folders.sorted(by: { $0.count > $1.count }) + [location.vaultRoot] {
            _ = rmdir(folder)
        }
        _ = rmdir(location.keyStoreRoot + "/items")
        _ = rmdir(location.keyStoreRoot + "/pending")
        _ = rmdir(location.keyStoreRoot)
    }
}

extension Vault {
    /// Wipes the vault at `location` without the PIN (a thief could delete the files
    /// anyway; what matters is that the keys are gone for good).
    public static func wipe(_ location: VaultLocation, secure: Bool, onWait: () -> Void = {}) throws {
        guard isInitialized(location) || KeyStore(root: location.keyStoreRoot).exists else {
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)", remedy: "check --vault and --keystore")
        }
        let lock = try FileLock(path: location.lockPath, onWait: onWait)
        defer { withExtendedLifetime(lock) {} }
        try Wipe.run(location, secure: secure)
    }

    /// The settings (readable without the PIN).
    public static func settings(_ location: VaultLocation) throws -> (settings: Settings, damaged: Bool) {
        guard isInitialized(location) else {
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)", remedy: "run `nu11vlt init`")
        }
        return try KeyStore(root: location.keyStoreRoot).loadSettings()
    }

    /// Changes one setting (after unlock); backup exclusion follows at once.
    public func setSetting(_ key: String, _ value: String) throws -> Settings {
        var updated = settings
        try updated.set(key, value)
        try keyStore.saveSettings(updated)
        try Self.applyBackupExclusion(location, settings: updated)
        return updated
    }
}
