// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Testing
@testable import Nu11Storage

/// A key rotation re-seals every index row (`VaultIndex.resealRows`), its pages transformed on
/// every core (`ParallelRows`): each row must get its own new value, whatever the worker, rows
/// the transform leaves stay as they were, and a failure stops the rotation before its page
/// is written.
@Suite("re-sealing index rows on every core")
struct ResealRowsTests {
    @Test("9,001 rows over three pages: each row gets the value made from its own, those left alone stay, the other domain is not touched")
    func eachRowItsOwn() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let index = try VaultIndex(path: root + "/index.sqlite")
        let rows = (0..<9_001).map { i in
            ItemRow(id: ItemID(), kind: .file, domain: i % 1000 == 7 ? .fade : .vault, album: nil, meta: SecureRandom.bytes(48))
        }
        for start in stride(from: 0, to: rows.count, by: 2_000) {
            try index.insertItems(Array(rows[start..<min(start + 2_000, rows.count)]))
        }
        var seen: [Int] = []
        // The new value is a function of the row's own ID and old value; every third row is left.
        let changed = try index.resealRows(domains: [.vault], progress: { seen.append($0) }) { row in
            row.id.bytes[0] % 3 == 0 ? nil : Array(row.id.bytes + row.meta.reversed())
        }
        let vault = rows.filter { $0.domain == .vault }
        #expect(changed == vault.filter { $0.id.bytes[0] % 3 != 0 }.count)
        #expect(seen == [4_000, 8_000, vault.count], "a page is 4,000 rows")
        let after = Dictionary(uniqueKeysWithValues: try index.items(domains: [.vault, .fade], afterSeq: 0, limit: 20_000).map { ($0.id, $0.meta) })
        for row in rows {
            let expected = row.domain == .fade || row.id.bytes[0] % 3 == 0 ? row.meta : Array(row.id.bytes + row.meta.reversed())
            #expect(after[row.id] == expected, "row \(row.id.hex)")
        }
    }

    @Test("a row whose transform fails stops the re-seal: its page is not written, and the error is the row's")
    func failureStops() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let index = try VaultIndex(path: root + "/index.sqlite")
        let rows = (0..<3_000).map { _ in ItemRow(id: ItemID(), kind: .file, domain: .vault, album: nil, meta: SecureRandom.bytes(48)) }
        try index.insertItems(rows)
        let bad = rows[2_345].id
        #expect { try index.resealRows(domains: [.vault]) { row in
            if row.id == bad { throw Nu11Error(.corrupted, "row \(row.id.hex) does not open") }
            return [1, 2, 3]
        } } throws: { error in (error as? Nu11Error)?.message == "row \(bad.hex) does not open" }
        #expect(try index.items(domains: [.vault], afterSeq: 0, limit: 5_000).map(\.meta) == rows.map(\.meta))
    }

    @Test("ParallelRows.map keeps the order of its values on every core, and below 256 values runs on the caller's thread")
    func order() throws {
        let values = Array(0..<10_000)
        #expect(try ParallelRows.map(values) { $0 * 3 + 1 } == values.map { $0 * 3 + 1 })
        #expect(try ParallelRows.map([Int]()) { $0 }.isEmpty)
        let small = try ParallelRows.map(Array(0..<255)) { _ in Thread.isMainThread }
        #expect(small.allSatisfy { $0 } == Thread.isMainThread)
    }
}
