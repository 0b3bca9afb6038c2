// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import Nu11Format

/// The `recovery` table (docs/FORMAT.md §5.2): each primary-vault item key sealed to the
/// recovery phrase's public key. A row goes with its item (ON DELETE CASCADE, secure_delete).
extension VaultIndex {
    /// Adds or replaces seals, 1,000 per transaction.
    public func setRecoverySeals(_ seals: [(id: ItemID, seal: [UInt8])]) throws {
        var start = 0
        while start < seals.count {
            let page = seals[start..<min(seals.count, start + 1000)]
            try write { db in
                for entry in page {
                    try db.execute(sql: "INSERT OR REPLACE INTO recovery (id, seal) VALUES (?, ?)",
                                   arguments: [entry.id.hex, Data(entry.seal)])  // `next` goes back to NULL
                }
            }
            start += page.count
        }
    }

    /// Every seal, by item. Empty for an index made before recovery seals (read-only, old schema).
    public func recoverySeals() throws -> [ItemID: [UInt8]] {
        try read { db in
            guard try db.tableExists("recovery") else { return [:] }
            var out: [ItemID: [UInt8]] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT id, seal FROM recovery")
            while let row = try rows.next() {
                guard let id = try? ItemID(hex: row[0]), let data: Data = row[1] else { continue }
                out[id] = Array(data)
            }
            return out
        }
    }

    /// The seals of a `recovery setup` in progress (the `next` column, migration v5), by item.
    public func nextRecoverySeals() throws -> [ItemID: [UInt8]] {
        try read { db in
            guard try db.columns(in: "recovery").contains(where: { $0.name == "next" }) else { return [:] }
            var out: [ItemID: [UInt8]] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT id, next FROM recovery WHERE next IS NOT NULL")
            while let row = try rows.next() {
                guard let id = try? ItemID(hex: row[0]), let data: Data = row[1] else { continue }
                out[id] = Array(data)
            }
            return out
        }
    }

    /// Stores the seals of a `recovery setup` in progress beside the current ones (rows
    /// without a seal get theirs when the setup finishes), 1,000 per transaction.
    public func setNextRecoverySeals(_ seals: [(id: ItemID, seal: [UInt8])]) throws {
        var start = 0
        while start < seals.count {
            let page = seals[start..<min(seals.count, start + 1000)]
            try write { db in
                for entry in page {
                    try db.execute(sql: "UPDATE recovery SET next = ? WHERE id = ?", arguments: [Data(entry.seal), entry.id.hex])
                }
            }
            start += page.count
        }
    }

    /// Forgets the seals of a `recovery setup` that never took effect.
    public func clearNextRecoverySeals() throws {
        try write { db in
            guard try db.columns(in: "recovery").contains(where: { $0.name == "next" }) else { return }
            try db.execute(sql: "UPDATE recovery SET next = NULL WHERE next IS NOT NULL")
        }
    }

    /// Destroys every seal (the duress PIN, the Skeleton Switch, `wipe`, a new phrase), then
    /// checkpoints so no copy stays in the WAL.
    public func dropRecoverySeals() throws {
        try write { db in
            guard try db.tableExists("recovery") else { return }
            try db.execute(sql: "DELETE FROM recovery")
        }
        try POSIX.afterEffect { try checkpoint() }
    }
}

/// The `sidecars` table (migration v5, docs/FORMAT.md §5.3): the domains whose items all have
/// their sidecar file.
extension VaultIndex {
    public func sidecarDomains() throws -> Set<Domain> {
        try read { db in
            guard try db.tableExists("sidecars") else { return Set(Domain.allCases) }  // read-only, older schema: nothing to do
            return Set(try Int.fetchAll(db, sql: "SELECT domain FROM sidecars").compactMap { Domain(rawValue: UInt8(truncatingIfNeeded: $0)) })
        }
    }

    public func markSidecarsDone(_ domain: Domain) throws {
        try write { db in try db.execute(sql: "INSERT OR IGNORE INTO sidecars (domain) VALUES (?)", arguments: [Int(domain.rawValue)]) }
    }
}
