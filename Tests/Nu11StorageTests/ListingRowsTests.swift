// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import Nu11Format
import Testing
@testable import Nu11Storage

/// The gallery's pass over 100,000 index rows steps SQLite's statement itself
/// (`VaultIndex.listingRows`): what it reads in place must be what the rows hold, and a row
/// damaged in its clear columns must give a clear error, never a crash or a wrong ID.
@Suite("the listing's rows, read in place")
struct ListingRowsTests {
    @Test("IDs, seq order, albums and record tags as the rows hold them; the domain, kind and album filters; a damaged ID or album ID is a clear error")
    func rows() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/index.sqlite"
        let index = try VaultIndex(path: path)
        let album = ItemID()
        try index.insertAlbum(AlbumRow(id: album, domain: .vault, name: [UInt8](repeating: 7, count: 40)))
        let rows = (0..<6).map { i in
            ItemRow(id: ItemID(), kind: i == 3 ? .note : .file, domain: i == 5 ? .fade : .vault, album: i == 2 ? album : nil,
                    meta: SecureRandom.bytes(40 + i))
        }
        try index.insertItems(Array(rows[..<3]))
        try index.insertItems(Array(rows[3...]))

        let files = try index.listingRows(domains: [.vault], kind: .file)
        let expected = [rows[0], rows[1], rows[2], rows[4]]
        #expect(files.map(\.id) == expected.map(\.id))
        #expect(files.map(\.tag) == expected.map { RecordTag($0.meta.suffix(16)) })
        #expect(files.map(\.album) == expected.map(\.album))
        #expect(files.map(\.domain) == Array(repeating: .vault, count: 4))
        #expect(files.map(\.seq) == files.map(\.seq).sorted() && Set(files.map(\.seq)).count == 4)
        #expect(try index.listingRows(domains: [.vault], kind: nil).count == 5)
        #expect(try index.listingRows(domains: [.vault], kind: .file, album: .some(album)).map(\.id) == [rows[2].id])
        #expect(try index.listingRows(domains: [.vault], kind: .file, album: .some(nil)).count == 3)
        #expect(try index.listingRows(domains: [.fade], kind: nil).map(\.id) == [rows[5].id])
        #expect(try index.listingRows(domains: [.backup], kind: nil).isEmpty)

        // Damage as someone with the file could make it (CHECK and foreign keys off): an ID that
        // is not hex, then an album ID that is not.
        let queue = try DatabaseQueue(path: path)
        func damage(_ sql: String, _ arguments: StatementArguments) throws {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA ignore_check_constraints = ON; PRAGMA foreign_keys = OFF")
                try db.execute(sql: sql, arguments: arguments)
            }
        }
        try damage("UPDATE item SET id = ? WHERE id = ?", [String(repeating: "z", count: 32), rows[1].id.hex])
        #expect { _ = try index.listingRows(domains: [.vault], kind: .file) } throws: { error in
            (error as? Nu11Error)?.message.contains("is not an ID") == true
        }
        try damage("UPDATE item SET id = ? WHERE seq = ?", [rows[1].id.hex, files[1].seq])
        #expect(try index.listingRows(domains: [.vault], kind: .file).map(\.id) == expected.map(\.id))
        try damage("UPDATE item SET album = ? WHERE id = ?", [String(repeating: "y", count: 32), rows[0].id.hex])
        #expect { _ = try index.listingRows(domains: [.vault], kind: nil) } throws: { error in
            (error as? Nu11Error)?.message.contains("is not an ID") == true
        }
        try queue.close()
    }
}
