// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import Nu11Format
#if canImport(Glibc)
import Glibc
#endif

/// Writes, and what settles one that failed: a failed commit never stays half-known.
extension VaultIndex {
    /// A write transaction. When it fails, what it may have left in the WAL is discarded first
    /// (`discardFailedCommit`), so that the change did not happen, as the error says.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try queue.write(body) } catch let error as DatabaseError {
            var failure = Self.translate(error, path: path)
            // A busy index or a refused change wrote nothing; any other failure may have (a failed
            // WAL sync surfaces as IOERR, or as READONLY from the statement after it).
            if ![.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_CONSTRAINT].contains(error.resultCode) && !discardFailedCommit() {
                failure.undecided = true
                failure.message += "; whether the change was saved is settled the next time the vault is opened"
            }
            throw failure
        }
    }

    /// A commit whose WAL write or sync failed can leave its frames in the WAL file, its commit
    /// frame among them (only the sync failed): this connection does not see them, but the next
    /// one to open the index would recover them, and the change would appear after the caller
    /// undid its side of it (an item's row back, its key record shredded). A TRUNCATE checkpoint
    /// copies what did commit into the main file and empties the WAL, which settles it: the
    /// change did not happen. False when that could not be done (a reader in the way, another
    /// failure, and the WAL not empty): then it is undecided.
    private func discardFailedCommit() -> Bool {
        // No WAL, or an empty one: nothing to recover, nothing to discard.
        var st = stat()
        guard stat(path + "-wal", &st) == 0, st.st_size > 0 else { return true }
        do {
            let busy = try queue.writeWithoutTransaction { db in
                try Int.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
            return busy == 0
        } catch {
            return false
        }
    }

    /// Whether every one of `ids` has its row (after a commit that failed: whether it landed).
    public func containsAll(_ ids: [ItemID]) throws -> Bool {
        try read { db in
            try ids.allSatisfy { try Int.fetchOne(db, sql: "SELECT 1 FROM item WHERE id = ?", arguments: [$0.hex]) != nil }
        }
    }
}
