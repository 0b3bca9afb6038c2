// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Half a vault: the vault folder without its key store, or the key store without its vault
/// folder — most often because one of them was moved. Nothing here destroys anything: the
/// other half is found by the vault ID both halves carry, and wiping a half needs that ID
/// typed back (a moved half plus a wipe would otherwise lose the vault for good).
public struct FoundHalf: Sendable, Codable, Equatable {
    /// "vault" (a vault folder) or "keystore" (a key store folder).
    public let kind: String
    public let path: String
}

extension LockedVault {
    /// This vault's ID, read from whichever half is here (nil: none, or a pair made before
    /// vault IDs).
    public func presentVaultID() -> ItemID? {
        switch presence {
        case .none: return nil
        case .vaultOnly: return VaultIndex.peekVaultID(path: location.indexPath)
        case .keyStoreOnly, .complete: return try? KeyStore(root: location.keyStoreRoot).vaultID()
        }
    }

    /// Looks under `folder` (6 levels deep, symlinks not followed, unreadable folders
    /// skipped) for the missing half: a vault folder or key store with this vault's ID.
    public func searchOtherHalf(in folder: String) throws -> [FoundHalf] {
        guard presence == .vaultOnly || presence == .keyStoreOnly else {
            throw Nu11Error(.invalidArgument,
                            presence == .complete ? "the vault at \(location.vaultRoot) is complete: there is nothing to search for"
                                                  : "there is no vault at \(location.vaultRoot) and no key store at \(location.keyStoreRoot)",
                            remedy: .pointAtPresentHalf)
        }
        guard let id = presentVaultID() else {
            throw Nu11Error(.notFound, "this half carries no vault ID (it was made before vault IDs), so its other half cannot be recognised",
                            remedy: .pointAtMovedHalf)
        }
        var found: [FoundHalf] = []
        let wantVault = presence == .keyStoreOnly
        func walk(_ dir: String, depth: Int) {
            guard depth <= 6, let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
            if wantVault, names.contains("index.sqlite"), dir != location.vaultRoot,
               VaultIndex.peekVaultID(path: dir + "/index.sqlite") == id {
                found.append(FoundHalf(kind: "vault", path: dir))
            }
            if !wantVault, names.contains(KeyStoreLayout.masterName), dir != location.keyStoreRoot,
               (try? KeyStore(root: dir).vaultID()) == id {
                found.append(FoundHalf(kind: "keystore", path: dir))
            }
            for name in names.sorted() where !name.hasPrefix(".") || name == ".local" || name == ".config" {
                let path = dir == "/" ? "/" + name : dir + "/" + name
                var st = stat()
                guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { continue }
                walk(path, depth: depth + 1)
            }
        }
        var st = stat()
        guard stat(folder, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else {
            throw Nu11Error(.notFound, "\(folder) is not a folder", remedy: .advice(.searchOtherFolder))
        }
        walk(folder, depth: 0)
        return found
    }

    /// Refuses half a vault before anything is asked (the CLI calls it before its question).
    public func checkHalf() throws { try checkHalfWipe(confirmedID: nil) }

    /// What wiping half a vault needs: the vault ID typed back (`confirmedID`), because the
    /// other half, if it was only moved, can then never be opened again.
    func checkHalfWipe(confirmedID: String?) throws {
        guard presence == .vaultOnly || presence == .keyStoreOnly else { return }
        let id = presentVaultID()?.hex ?? "unpaired"
        guard confirmedID?.lowercased() != id else { return }
        let (here, missing) = presence == .vaultOnly
            ? ("the vault folder \(location.vaultRoot)", "its key store is not at \(location.keyStoreRoot)")
            : ("the key store \(location.keyStoreRoot)", "its vault folder is not at \(location.vaultRoot)")
        throw Nu11Error(.invalidArgument,
                        "only half of vault \(id) is here: \(here); \(missing). Wiping it makes the vault unrecoverable for good, even if the other half was only moved; nothing was changed",
                        remedy: .confirmHalfWipe,
                        item: presence == .vaultOnly ? location.vaultRoot : location.keyStoreRoot)
    }
}
