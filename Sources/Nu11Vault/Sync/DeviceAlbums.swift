// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Album moves and album names that travel with the files of a shared vault (docs/FORMAT.md
/// § 9.6): an item's album is the folder its content file is in, and an album's name is its
/// name file (`Meta/<AlbumID>.n11a`, sealed under the metadata key every device holds).
extension Devices {
    /// At unlock, after taking in: albums named by a name file that opens (new ones added, a
    /// changed name followed), items whose file another device moved to another album folder
    /// (their metadata sealed again to the new album, in this device's index only: the sidecar
    /// is the moving device's), and albums whose name file is gone, that hold no item here
    /// and whose folder is gone or empty (another device deleted them). Returns how many items
    /// and albums changed.
    func followAlbums(files: [String], rows: [ItemRow]) throws -> Int {
        guard let key = try? vault.metadataKey(.vault) else { return 0 }
        var changed = 0
        var named: [ItemID: AlbumRow] = [:]
        for file in location.albumNameFiles() where (try? SmallSeal.open(file.name, key: key, associatedData: Albums.albumAAD(file.id))) != nil {
            named[file.id] = AlbumRow(id: file.id, domain: .vault, name: file.name)
        }
        var albums = Dictionary(uniqueKeysWithValues: try index.albums(domains: [.vault]).map { ($0.id, $0) })
        for (id, row) in named {
            if let held = albums[id] {
                if held.name != row.name {
                    try index.renameAlbum(id, name: row.name)
                    changed += 1
                }
            }
        }
        // Where each primary file is now (a file in two places, an album move cut short, keeps its row).
        var placed: [ItemID: ItemID?] = [:]
        var twice = Set<ItemID>()
        for path in files where path.hasPrefix(location.photosFolder + "/") || path.hasPrefix(location.albumsFolder + "/") {
            let name = (path as NSString).lastPathComponent
            guard !name.hasPrefix(ProtectedFiles.tempPrefix), name.hasSuffix(".n11"), let id = try? ItemID(hex: Maintenance.stem(name)) else { continue }
            if placed[id] != nil { twice.insert(id) }
            placed[id] = .some(Maintenance.albumOfPath(path, location: location))
        }
        var newAlbums: [AlbumRow] = []
        var moved: [ItemRow] = []
        for row in rows where row.domain == .vault && row.kind == .file && !twice.contains(row.id) {
            guard let here = placed[row.id], here != row.album else { continue }
            if let album = here, albums[album] == nil {
                guard let made = named[album] else { continue }  // its name has not arrived: wait
                albums[album] = made
                newAlbums.append(made)
            }
            guard let meta = try? ItemMetadata.open(row, key: key) else { continue }
            var row = row
            row.album = here
            row.meta = try meta.seal(id: row.id, album: here, key: key)
            moved.append(row)
        }
        if !newAlbums.isEmpty { try index.commit(albums: newAlbums, items: [], removing: []) }
        for row in moved { try index.updateItem(row) }
        changed += newAlbums.count + moved.count
        // Albums another device deleted: no name file any more, and no item here.
        let counts = try index.albumItemCounts(domains: Domain.allCases)
        for id in albums.keys where named[id] == nil && (counts[id] ?? 0) == 0
            && ProtectedFiles.kind(location.albumNamePath(id)) == nil && ((try? ProtectedFiles.list(location.albumFolder(id)))?.isEmpty ?? true) {
            try index.deleteAlbum(id)
            changed += 1
        }
        return changed
    }
}
