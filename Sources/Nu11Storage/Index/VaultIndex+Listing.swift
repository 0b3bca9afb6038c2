// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import GRDBSQLite  // SQLite's own API (GRDB's module for it), to step the listing's statement
import Nu11Format

/// A sealed record's last 16 bytes (its AEAD tag) as two words: what a listing compares, for
/// each of 100,000 rows, with the tag it read before, without an array each. Any re-seal of
/// the record changes it.
public struct RecordTag: Sendable, Equatable {
    private let high: UInt64
    private let low: UInt64

    /// The last 16 bytes of `record` (all zero when it is shorter: such a record opens nowhere).
    public init(_ record: ArraySlice<UInt8>) {
        (high, low) = record.withUnsafeBytes(Self.words)
    }

    init(raw: UnsafeRawBufferPointer) { (high, low) = Self.words(raw) }

    private static func words(_ raw: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        guard raw.count >= 16 else { return (0, 0) }
        return (UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: raw.count - 16, as: UInt64.self)),
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: raw.count - 8, as: UInt64.self)))
    }

    public var bytes: [UInt8] { withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Array($0) } }
}

/// What a listing needs of an item's row when it already knows the item's listing facts:
/// everything but the sealed metadata, whose tag stands in for it.
public struct ListingRow: Sendable {
    public var id: ItemID
    public var seq: Int64
    public var domain: Domain
    public var album: ItemID?
    public var tag: RecordTag
}

extension VaultIndex {
    /// Every row of `domains` (of `kind`, in `album` when given) as a `ListingRow`, in `seq`
    /// order. At 100,000 items this is the listing's one pass over the index, so it reads the
    /// columns in place, stepping SQLite's statement itself: no row object, no sealed record
    /// copied out, no ID through a `String`.
    public func listingRows(domains: [Domain], kind: ItemKind?, album: ItemID?? = .none) throws -> [ListingRow] {
        try read { db in
            let (filter, args) = Self.itemFilter(domains: domains, kind: kind, album: album)
            let sql = "SELECT id, seq, domain, album, substr(meta, -16) FROM item WHERE \(filter)"
            let statement = try db.makeStatement(sql: sql)
            try statement.setArguments(StatementArguments(args))
            let stmt = statement.sqliteStatement
            defer { sqlite3_reset(stmt) }
            var out: [ListingRow] = []
            while true {
                let rc = sqlite3_step(stmt)
                if rc == SQLITE_DONE { break }
                guard rc == SQLITE_ROW else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: rc),
                                        message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: sql)
                }
                guard let domain = Domain(rawValue: UInt8(truncatingIfNeeded: sqlite3_column_int64(stmt, 2))),
                      sqlite3_column_int64(stmt, 2) == Int64(domain.rawValue) else {
                    throw Nu11Error(.corrupted, "the index holds an invalid row", remedy: .check(reason: nil))
                }
                let id = try Self.id(stmt, 0)
                let album = sqlite3_column_type(stmt, 3) == SQLITE_NULL ? nil : try Self.id(stmt, 3)
                let tagBytes = sqlite3_column_blob(stmt, 4)
                let tag = RecordTag(raw: UnsafeRawBufferPointer(start: tagBytes, count: tagBytes == nil ? 0 : Int(sqlite3_column_bytes(stmt, 4))))
                out.append(ListingRow(id: id, seq: sqlite3_column_int64(stmt, 1), domain: domain, album: album, tag: tag))
            }
            out.sort { $0.seq < $1.seq }
            return out
        }
    }

    /// The WHERE clause (and its arguments) of the rows of `domains`, of `kind` when given, in
    /// `album` when given (`.some(nil)`: in no album).
    static func itemFilter(domains: [Domain], kind: ItemKind?, album: ItemID??) -> (String, [(any DatabaseValueConvertible)?]) {
        var sql = "domain IN (\(domains.map { "\($0.rawValue)" }.joined(separator: ",")))"
        var args: [(any DatabaseValueConvertible)?] = []
        if let kind {
            sql += " AND kind = ?"
            args.append(kind.rawValue)
        }
        if case .some(let albumFilter) = album {
            if let a = albumFilter {
                sql += " AND album = ?"
                args.append(a.hex)
            } else {
                sql += " AND album IS NULL"
            }
        }
        return (sql, args)
    }

    /// The ID in column `index` of the current row (32 hex digits), read in place.
    private static func id(_ stmt: SQLiteStatement, _ index: Int32) throws -> ItemID {
        let text = UnsafeRawBufferPointer(start: sqlite3_column_text(stmt, index), count: Int(sqlite3_column_bytes(stmt, index)))
        if text.baseAddress != nil, let id = ItemID(hexDigits: text) { return id }
        return try ItemID(hex: String(decoding: text, as: UTF8.self))  // not hex: the usual error
    }
}
