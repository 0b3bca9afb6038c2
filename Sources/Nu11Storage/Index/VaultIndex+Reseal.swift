// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import Nu11Format

extension VaultIndex {
    /// The highest insertion sequence (0 for an empty index).
    public func maxSeq() throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM item") ?? 0 }
    }

    /// Re-seals rows of `domains` page by page: `transform` returns a row's new sealed
    /// metadata, or nil to leave it. Each page of up to 4,000 rows is one transaction, so
    /// every row holds its old sealed value or its new one at every instant; a page's rows are
    /// transformed on every core before its transaction. Returns how many rows changed.
    @discardableResult
    public func resealRows(domains: [Domain], progress: (Int) -> Void = { _ in },
                           _ transform: @Sendable (ItemRow) throws -> [UInt8]?) throws -> Int {
        var cursor: Int64 = 0
        var changed = 0
        var seen = 0
        while true {
            let page = try items(domains: domains, afterSeq: cursor, limit: 4000)
            guard let last = page.last else { break }
            let results = try ParallelRows.map(page, transform)
            var updates: [(ItemID, [UInt8])] = []
            for (row, meta) in zip(page, results) {
                if let meta { updates.append((row.id, meta)) }
            }
            if !updates.isEmpty {
                try write { db in
                    let statement = try db.cachedStatement(sql: "UPDATE item SET meta = ? WHERE id = ?")
                    for (id, meta) in updates {
                        try statement.execute(arguments: [Data(meta), id.hex])
                    }
                }
            }
            changed += updates.count
            seen += page.count
            progress(seen)
            cursor = last.seq
        }
        return changed
    }
}
