// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// The index after `recover` (FORMAT.md §5.2), under the rebuilt key store's fresh keys. The key
/// sets of `recovery.n11r` are sealed to a public key, so a writer of the vault folder can seal
/// sets of their own and plant entries and album names they open: nothing a set opens outranks
/// what the item's own key vouches for.
extension Maintenance {
    struct RecoveredEntries {
        /// Entries re-sealed from their item's sidecar.
        var fromSidecars = 0
        /// Items without a sidecar that opens, whose entry a set opened.
        var fromEntries: [ItemID] = []
        /// Items with neither: their entries are left as they are (`check` names them).
        var unnamed: [ItemID] = []
        /// The sets' metadata keys album names are read with: first those that opened an entry
        /// agreeing with its item's sidecar, then the others.
        var albumKeys: [SecretBytes] = []
    }

    /// Every entry of the primary vault that does not open under the fresh keys: from its
    /// sidecar when that opens with the item key (whatever a set says), else from the entry as
    /// a set opens it, else left. Then the index's album names that a set opens, re-sealed under
    /// the fresh key (their name files follow). No set's key is kept anywhere.
    func recoverEntries(setKeys: [SecretBytes]) throws -> RecoveredEntries {
        var out = RecoveredEntries()
        let key = try metadataKey(.vault)
        var vouched = Set<Int>()
        for row in try index.allRows() where row.domain == .vault && isVisible(row) {
            guard !ItemMetadata.opens(row, key: key),
                  let itemKey = try? keyStore.itemKeyRecord(row.id, domain: .vault).open(domainKey: domainKey(.vault)) else { continue }
            var resealed = row
            let fromSets = setKeys.indices.lazy.compactMap { i in
                (try? ItemMetadata.openReportingLegacy(row, key: setKeys[i])).map { (i, $0.meta) }
            }.first
            if let bytes = try? ProtectedFiles.read(location.sidecarPath(row.id), limit: SidecarEnvelope.maxBytes),
               let (head, facts) = try? ItemSidecar.open(bytes, id: row.id, itemKey: itemKey),
               head.kind == row.kind, head.domain == row.domain {
                resealed.meta = try facts.meta.seal(id: row.id, album: row.album, key: key)
                out.fromSidecars += 1
                if let (i, meta) = fromSets, let a = try? meta.json(), let b = try? facts.meta.json(), a == b { vouched.insert(i) }
            } else if let (_, meta) = fromSets {
                resealed.meta = try meta.seal(id: row.id, album: row.album, key: key)
                out.fromEntries.append(row.id)
            } else {
                out.unnamed.append(row.id)
                continue
            }
            try index.updateItem(resealed)
        }
        // Vouched sets first; the others after (during a rotation cut short, album names may
        // still be under the set whose entries were all re-sealed already).
        out.albumKeys = setKeys.indices.filter { vouched.contains($0) }.map { setKeys[$0] }
            + setKeys.indices.filter { !vouched.contains($0) }.map { setKeys[$0] }
        for album in try index.albums(domains: [.vault]) {
            let ad = Albums.albumAAD(album.id)
            guard (try? SmallSeal.open(album.name, key: key, associatedData: ad)) == nil,
                  var plain = out.albumKeys.lazy.compactMap({ try? SmallSeal.open(album.name, key: $0, associatedData: ad) }).first else { continue }
            defer { secureZero(&plain) }
            var renamed = album
            renamed.name = try SmallSeal.seal(plain, key: key, associatedData: ad)
            try index.renameAlbum(album.id, name: renamed.name)
            afterCommit("writing the album's name file") { try vault.albums.writeAlbumNameFile(renamed) }
        }
        return out
    }
}
