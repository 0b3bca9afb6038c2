// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage
import TestSupport
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

    @Test("the listing survives the session: the next unlock opens no record; a changed record is opened; a deletion removes the file; a file that does not open is rebuilt; no Fade item, no backup vault")
    func persisted() throws {
        let t = try TestVault()
        var v = try t.vault
        var ids: [ItemID] = []
        for i in 0..<30 {
            let path = try t.file("p\(i).txt", Array("item \(i)".utf8))
            let mtime = Date(timeIntervalSince1970: 1_300_000_000 + Double((i * 17) % 30) * 86_400)
            try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: path)
            ids.append(try v.items.importFile(at: path).id)
        }
        let fade = try v.items.importFile(at: try t.file("fade.txt", Array("fading".utf8)), fade: 3600).id
        let cache = t.location.keyStoreRoot + "/listing.n11g"
        #expect(!FileManager.default.fileExists(atPath: cache))
        let first = try v.items.datedItemIDs()
        #expect(first.count == 31 && v.listingCache.opened == 31)
        let written = try #require(FileManager.default.contents(atPath: cache))
        #expect(written.count == 8 + 12 + 4 + 30 * ListingFile.entrySize + 16, "only the 30 Vault items: \(written.count) bytes")
        var info = stat()
        #expect(stat(cache, &info) == 0 && info.st_mode & 0o777 == 0o600)
        // Nothing of a listed item in the clear: not its ID.
        #expect(!contains([UInt8](written), ids[0].bytes))

        // A new session: the listing opens only what the file does not hold (the Fade item).
        func reopen() throws -> Vault { try Self.reopen(v, t) }
        v = try reopen()
        let again = try v.items.datedItemIDs()
        #expect(again.map(\.id) == first.map(\.id) && again.map(\.date) == first.map(\.date))
        #expect(v.listingCache.opened == 1, "the next session opened \(v.listingCache.opened) records")

        // A record re-sealed since (a move binds the album) is opened again, with its date.
        try v.albums.createAlbum("A")
        try v.albums.moveItem(ItemRef(ids[3]), toAlbum: "A")
        v = try reopen()
        let moved = try v.items.datedItemIDs()
        #expect(v.listingCache.opened == 2 && moved.map(\.id) == first.map(\.id))

        // A deletion removes the file (the deleted item's date and ID go with it).
        try v.items.delete([ItemRef(ids[5])])
        #expect(!FileManager.default.fileExists(atPath: cache), "a deleted item's entry outlives the deletion")
        #expect(try v.items.datedItemIDs().count == 30)
        #expect(FileManager.default.fileExists(atPath: cache))

        // Damaged (one bit), or from another vault's keys: ignored, every record opened, rewritten.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: cache)))
        bytes[bytes.count / 2] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: cache))
        v = try reopen()
        #expect(try v.items.datedItemIDs().count == 30 && v.listingCache.opened == 30)
        let other = try TestVault()
        _ = try other.vault.items.importFile(at: try other.file("o.txt", [1]))
        _ = try other.vault.items.datedItemIDs()
        try FileManager.default.removeItem(atPath: cache)
        try FileManager.default.copyItem(atPath: other.location.keyStoreRoot + "/listing.n11g", toPath: cache)
        v = try reopen()
        #expect(try v.items.datedItemIDs().count == 30 && v.listingCache.opened == 30)
        v = try reopen()
        _ = try v.items.datedItemIDs()
        #expect(v.listingCache.opened == 1, "not rebuilt: \(v.listingCache.opened)")
        _ = fade

        // A backup vault's session keeps no listing file.
        try v.profiles.setBackupPIN(secret("backup-pin-1"))
        v.lock()
        t.close()
        try FileManager.default.removeItem(atPath: cache)
        let backup = try LockedVault(t.location).unlock(pin: secret("backup-pin-1"))
        _ = try backup.items.importFile(at: try t.file("b.txt", [2]))
        #expect(try backup.items.datedItemIDs().count == 1)
        #expect(!FileManager.default.fileExists(atPath: cache), "a backup vault's listing was written")
        backup.lock()
    }

    @Test("a folder import of 1,000 files writes their entries at once: the next session opens no record and sorts as a full read does; a deleted item's entry is not written back")
    func bigImport() throws {
        let t = try TestVault()
        var v = try t.vault
        let cache = t.location.keyStoreRoot + "/listing.n11g"
        // Two items listed (the file holds both), then one deleted (the file goes with it).
        _ = try v.items.importFile(at: try t.file("kept.txt", [1]))
        let gone = try v.items.importFile(at: try t.file("gone.txt", [2])).id
        _ = try v.items.datedItemIDs()
        try v.items.delete([ItemRef(gone)])
        #expect(!FileManager.default.fileExists(atPath: cache))
        var paths: [String] = []
        for i in 0..<ListingFile.extendAfter {
            let path = try t.file("lib\(i).txt", Array("photo \(i)".utf8))
            let mtime = Date(timeIntervalSince1970: 1_400_000_000 + Double((i * 7919) % 1000) * 3_600)
            try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: path)
            paths.append(path)
        }
        #expect(try v.items.importFiles(paths).count == ListingFile.extendAfter)
        let written = try #require(FileManager.default.contents(atPath: cache), "the import wrote no listing file")
        let entries = ListingFile.extendAfter + 1
        #expect(written.count == 8 + 12 + 4 + entries * ListingFile.entrySize + 16, "not the \(entries) items there: \(written.count) bytes")
        #expect(!contains([UInt8](written), gone.bytes))

        func reopen() throws -> Vault { try Self.reopen(v, t) }
        v = try reopen()
        let fromFile = try v.items.datedItemIDs()
        #expect(fromFile.count == entries && v.listingCache.opened == 0, "the next session opened \(v.listingCache.opened) records")
        // The same order and dates as every record opened.
        try FileManager.default.removeItem(atPath: cache)
        v = try reopen()
        let opened = try v.items.datedItemIDs()
        #expect(v.listingCache.opened == entries)
        #expect(opened.map(\.id) == fromFile.map(\.id) && opened.map(\.date) == fromFile.map(\.date))
        v.lock()
    }

    /// A new session of the same vault (the old one locked, its lock given up).
    @Test("the listing tells photos, videos and other files apart (the app's sections), from the records, the session cache and the file alike; a version-1 file is rebuilt")
    func media() throws {
        let t = try TestVault()
        var v = try t.vault
        let png = t.root + "/p.png"
        try #require(Program.run("/usr/bin/convert", ["-size", "64x48", "gradient:red-white", png]) == 0)
        let photo = try v.items.importFile(at: png).id
        let mp4 = t.root + "/clip.mp4"
        try #require(Program.run("/usr/bin/ffmpeg", ["-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10",
                                                     "-t", "0.3", "-pix_fmt", "yuv420p", mp4]) == 0)
        let clip = try v.items.importFile(at: mp4).id
        let text = try v.items.importFile(at: try t.file("notes.txt", Array("text".utf8))).id
        func kinds() throws -> [ItemID: MediaKind] {
            Dictionary(uniqueKeysWithValues: try v.items.libraryEntries().map { ($0.id, $0.media) })
        }
        let expected: [ItemID: MediaKind] = [photo: .image, clip: .video, text: .other]
        #expect(try kinds() == expected, "records opened")
        #expect(try kinds() == expected, "from the session's cache")
        v = try Self.reopen(v, t)
        #expect(try kinds() == expected, "from listing.n11g")
        #expect(v.listingCache.opened == 0, "the next unlock opened records the file holds")
        // A file of version 1 (no media byte) is of another version: ignored, then written again.
        let cache = t.location.keyStoreRoot + "/listing.n11g"
        var old = try #require(FileManager.default.contents(atPath: cache))
        old[4] = 1
        try old.write(to: URL(fileURLWithPath: cache))
        v = try Self.reopen(v, t)
        #expect(try kinds() == expected)
        #expect(v.listingCache.opened == 3)
        #expect(try #require(FileManager.default.contents(atPath: cache))[4] == ListingFile.version)
    }

    static func reopen(_ v: Vault, _ t: TestVault) throws -> Vault {
        v.lock()
        t.close()
        return try LockedVault(t.location).unlock(pin: secret("test-pin"))
    }

    func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0 ..< $0 + needle.count].elementsEqual(needle) }
    }
}
