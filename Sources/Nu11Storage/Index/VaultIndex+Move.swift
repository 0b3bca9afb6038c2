// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import Nu11Format

extension VaultIndex {
    /// The commit point of an item's move between domains (`fade set`, FORMAT.md §4.6): its row
    /// changes in place — same ID and sequence, so its place in the import order stays — to the
    /// new domain, album and metadata, and its recovery seal follows: removed when the item
    /// leaves the primary vault, the new item key's seal inserted when it comes back. The WAL
    /// is then truncated, as after a delete (the removed seal's pages zeroed in the main file).
    /// `committed` runs once the transaction is durable, before that checkpoint (the caller
    /// records the commit where a lost or older index cannot undo it).
    public func moveItem(_ row: ItemRow, committed: () -> Void = {}) throws {
        try write { db in
            try db.execute(sql: "UPDATE item SET kind = ?, domain = ?, album = ?, meta = ? WHERE id = ?",
                           arguments: [row.kind.rawValue, row.domain.rawValue, row.album?.hex, Data(row.meta), row.id.hex])
            guard db.changesCount == 1 else {
                throw Nu11Error(.notFound, "item \(row.id) is not in the index", item: row.id.hex)
            }
            try db.execute(sql: "DELETE FROM recovery WHERE id = ?", arguments: [row.id.hex])
            if let seal = row.recovery {
                try db.execute(sql: "INSERT INTO recovery (id, seal) VALUES (?, ?)", arguments: [row.id.hex, Data(seal)])
            }
        }
        committed()
        try POSIX.afterEffect { try checkpoint() }
    }
}
