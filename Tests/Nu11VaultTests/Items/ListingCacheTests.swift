// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage
import Testing
@testable import Nu11Vault

/// Dates read once per session (issue 36): a session that lists again opens only the sealed
/// records it has not read, and never trusts what it read for a record that changed.
@Suite("the gallery listing's session cache")
struct ListingCacheTests {
    @Test("listing again opens nothing new; new, re-sealed and moved records are opened; a row moved behind the vault's back fails; lock empties it")
    func cache() throws {
        let t = try TestVault()
        let v = try t.vault
        var ids: [ItemID] = []
        for i in 0..<40 {
            let path = try t.file("f\(i).txt", Array("item \(i)".utf8))
            let mtime = Date(timeIntervalSince1970: 1_200_000_000 + Double((i * 37) % 40) * 86_400)
            try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: path)
            ids.append(try v.items.importFile(at: path).id)
        }
        let first = try v.items.datedItemIDs()
        #expect(first.count == 40 && v.listingCache.opened == 40)
        let again = try v.items.datedItemIDs()
        #expect(again.map(\.id) == first.map(\.id) && again.map(\.date) == first.map(\.date))
        #expect(v.listingCache.opened == 40, "the second listing opened records it had read")

        // Three new items: only they are opened, and they sort among the rest.
        for i in 40..<43 { ids.append(try v.items.importFile(at: try t.file("f\(i).txt", Array("item \(i)".utf8))).id) }
        #expect(try v.items.datedItemIDs().count == 43 && v.listingCache.opened == 43)

        // A move re-seals the record (the album is bound): it is read again, with the same date.
        try v.albums.createAlbum("A")
        try v.albums.moveItem(ItemRef(ids[0]), toAlbum: "A")
        let moved = try v.items.datedItemIDs()
        #expect(v.listingCache.opened == 44)
        #expect(moved.first { $0.id == ids[0] }?.date == first.first { $0.id == ids[0] }?.date)

        // Deleted: out of the listing at once.
        try v.items.delete([ItemRef(ids[1])])
        #expect(try !v.items.datedItemIDs().contains { $0.id == ids[1] })

        // A row moved to another album in the index, its record untouched: the cache does not
        // vouch for it; the record is opened again and fails its album binding.
        var row = try #require(try v.index.item(ids[2]))
        row.album = try v.albums.albumID(named: "A")
        try v.index.updateItem(row)
        #expect(throws: Nu11Error.self) { _ = try v.items.datedItemIDs() }

        v.lock()
        #expect(v.listingCache.count == 0, "the listing facts outlived the lock")
    }
}
