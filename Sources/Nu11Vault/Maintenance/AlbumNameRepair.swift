// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format
import Nu11Storage

/// Album names that do not open with the current keys: an old index put back (its names
/// sealed before a key rotation), or a folder restored whole from before one. The name file
/// (`Meta/<AlbumID>.n11a`) brings the name back when it opens; a name sealed only under
/// retired keys cannot be read by design (the rotation destroyed them), so the album keeps
/// its items under a made-up name the owner can change (FORMAT.md §5.3).
extension Maintenance {
    struct AlbumNameRepair {
        let id: ItemID
        /// What was (or would be) done.
        let how: String
    }

    /// Finds album rows of this session whose name does not open; with `repair`, re-seals each
    /// from its name file or under a made-up name, and rewrites the name file.
    func repairAlbumNames(repair: Bool) throws -> [AlbumNameRepair] {
        var found: [AlbumNameRepair] = []
        for row in try index.albums(domains: visibleDomains) {
            let key = try metadataKey(row.domain)
            let ad = Albums.albumAAD(row.id)
            guard (try? SmallSeal.open(row.name, key: key, associatedData: ad)) == nil else { continue }
            var sealed: [UInt8]
            let how: String
            // A name file that is there but does not open is never overwritten: it may be newer
            // than this key store (an older key store against the current folder), and then it
            // holds the only copy of the album's name under the current keys.
            let file = row.domain == .vault ? nameFileState(row.id, key: key) : .missing
            if row.domain == .vault, file == .opens, let bytes = try? ProtectedFiles.read(location.albumNamePath(row.id), limit: AlbumNameFile.maxBytes),
               let named = AlbumNameFile.decode(bytes) {
                sealed = named.name
                how = "rebuilt from its name file"
            } else {
                let made = "Album \(row.id.hex.prefix(8))"
                sealed = try vault.albums.sealAlbumName(made, id: row.id, domain: row.domain)
                how = "named \(made): its name was sealed under keys this vault no longer holds (a copy from before a key rotation) or is damaged; rename the album"
                    + (file == .foreign ? "; its name file was left as it is: \(Self.nameFileOlderOrNewer)" : "")
            }
            if repair {
                try index.renameAlbum(row.id, name: sealed)
                let fixed = AlbumRow(id: row.id, domain: row.domain, name: sealed)
                if file != .foreign {
                    afterCommit("writing the album's name file") { try vault.albums.writeAlbumNameFile(fixed) }
                }
            }
            found.append(AlbumNameRepair(id: row.id, how: how))
        }
        return found
    }
}
