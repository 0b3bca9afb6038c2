// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format
import Nu11Storage

/// A vault folder and a key store belong together: each vault has a random vault ID,
/// recorded in its index and (sealed under the device key, readable before unlock) in its
/// key store. Every command checks the pair before it writes anything, so vault B given
/// with key store A can neither import into B under A's keys nor let the repairing check
/// treat A's key records as orphans.
enum Pairing {
    static func mismatch(_ location: VaultLocation, _ detail: String) -> Nu11Error {
        Nu11Error(.invalidArgument,
                  "the vault folder \(location.vaultRoot) and the key store \(location.keyStoreRoot) do not belong together (\(detail)); nothing was changed",
                  remedy: .pairedFolders)
    }

    /// Records a new vault ID in both places (a new vault).
    static func bind(_ location: VaultLocation, keyStore: KeyStore, index: VaultIndex) throws {
        let id = ItemID()
        try keyStore.recordVaultID(id)
        try index.recordVaultID(id)
    }

    /// Refuses a pair that was not made together. A pair made before vault IDs existed is
    /// bound now, unless its contents show it is not a pair (items whose key records are
    /// all missing from this key store while the key store holds other key records).
    static func verify(_ location: VaultLocation, keyStore: KeyStore, index: VaultIndex) throws {
        let stored = try keyStore.vaultID()
        let indexed = try index.vaultID()
        switch (stored, indexed) {
        case let (a?, b?):
            guard a == b else { throw mismatch(location, "their vault IDs differ") }
        case (nil, nil):
            guard !index.isReadOnly else { return }  // reading a read-only vault of an older format changes nothing
            let keys = try keyStore.itemKeyIDs()
            if !keys.isEmpty, !(try index.isEmpty()) {
                let rows = try index.allRows()
                guard rows.contains(where: { keyStore.hasItemKey($0.id) }) else {
                    throw mismatch(location, "none of the vault's items has a key in this key store")
                }
            }
            try bind(location, keyStore: keyStore, index: index)
        case (nil, _?):
            throw mismatch(location, "the key store has no vault ID but the vault has one")
        case (_?, nil):
            throw mismatch(location, "the vault has no vault ID but the key store has one")
        }
    }
}
