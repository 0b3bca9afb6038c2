// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// A moved vault folder, remembered (issue 56): once the app or `status --search` has found
/// it, the key store records where (docs/FORMAT.md §4.4c) and the default location follows it.
/// The record is a hint in the clear, never trusted: a folder it names is used only when its
/// index carries the vault ID this key store is paired with, and only when nobody chose the
/// vault folder (a path given or `NU11VLT_VAULT` always wins).
extension VaultLocation {
    /// `resolve`, then, when the vault folder was not chosen and the default one holds no
    /// vault, the folder this key store recorded — if it is this key store's vault.
    public static func resolveRemembered(vault: String?, keyStore: String?,
                                         environment: [String: String] = ProcessInfo.processInfo.environment) -> VaultLocation {
        let resolved = resolve(vault: vault, keyStore: keyStore, environment: environment)
        guard !vaultFolderChosen(vault: vault, environment: environment) else { return resolved }
        return resolved.followingRecord()
    }

    /// Whether the vault folder was named (a path, or `NU11VLT_VAULT`): then no record moves it.
    public static func vaultFolderChosen(vault: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        vault != nil || environment["NU11VLT_VAULT"] != nil
    }

    /// This location, or the recorded vault folder when this one holds no vault and the
    /// recorded one is paired with this key store.
    func followingRecord() -> VaultLocation {
        guard !FileManager.default.fileExists(atPath: indexPath) else { return self }
        let keyStore = KeyStore(root: keyStoreRoot)
        guard keyStore.exists, let recorded = keyStore.recordedVaultFolder(), recorded != vaultRoot,
              let id = try? keyStore.vaultID(), VaultIndex.peekVaultID(path: recorded + "/index.sqlite") == id else { return self }
        return VaultLocation(vaultRoot: recorded, keyStoreRoot: keyStoreRoot)
    }
}

extension LockedVault {
    /// Records `folder` in this key store as where its vault folder now is, so the default
    /// location follows it from then on. Refused (nothing written) unless the folder's index
    /// carries this key store's vault ID.
    public func rememberVaultFolder(_ folder: String) throws {
        let path = VaultLocation.absolute(folder)
        let keyStore = KeyStore(root: location.keyStoreRoot)
        guard keyStore.exists, let id = try keyStore.vaultID(), VaultIndex.peekVaultID(path: path + "/index.sqlite") == id else {
            throw Nu11Error(.invalidArgument, "\(path) is not the vault folder of the key store at \(location.keyStoreRoot); nothing was recorded",
                            remedy: .pairedFolders, item: path)
        }
        try keyStore.recordVaultFolder(path)
    }
}
