// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GRDB
import Nu11Format

public struct ItemRow: Sendable, Equatable {
    public var id: ItemID
    public var seq: Int64
    public var kind: ItemKind
    public var domain: Domain
    public var album: ItemID?
    public var meta: [UInt8]
    /// The item key sealed to the recovery phrase (written with the row; not read back).
    public var recovery: [UInt8]? = nil

    public init(id: ItemID, seq: Int64 = 0, kind: ItemKind, domain: Domain, album: ItemID?, meta: [UInt8]) {
        self.id = id
        self.seq = seq
        self.kind = kind
        self.domain = domain
        self.album = album
        self.meta = meta
    }
}

public struct AlbumRow: Sendable, Equatable {
    public var id: ItemID
    public var domain: Domain
    public var name: [UInt8]

    public init(id: ItemID, domain: Domain, name: [UInt8]) {
        self.id = id
        self.domain = domain
        self.name = name
    }
}

/// The SQLite index (GRDB), with the second seed's pragmas applied on every connection, in
/// the order that works: `auto_vacuum` before anything touches a new file, then WAL, then
/// `synchronous = FULL` (setting the journal mode can reset it), then `secure_delete`.
public final class VaultIndex: Sendable {
    public let path: String
    let queue: DatabaseQueue

    /// Whether the index was opened read-only (its folder or disk cannot be written).
    public let isReadOnly: Bool

    /// Opens (and creates or migrates) the index. Where the vault cannot be written (a
    /// read-only mount), an existing index is opened read-only, so reading still works.
    public init(path: String) throws {
        self.path = path
        // A folder, link or device where the index belongs is a damaged index (set aside and
        // rebuilt by the repair), not an I/O error that says to free disk space.
        if let type = POSIX.fileType(path), type != S_IFREG {
            throw Nu11Error(.corrupted, "the index \(path) is not a file", remedy: .repair, item: path)
        }
        do {
            queue = try Self.openWritable(path)
            isReadOnly = false
        } catch {
            // A vault that cannot be written (read-only mount, full disk) is still read.
            guard POSIX.exists(path), (error as? Nu11Error)?.code == .io else { throw error }
            var config = Configuration()
            config.readonly = true
            config.busyMode = .timeout(30)
            config.prepareDatabase { db in try db.execute(sql: "PRAGMA trusted_schema = OFF") }
            do {
                // `immutable`: SQLite then needs no -shm file (which it cannot create here). Safe
                // while we hold the vault lock and no WAL holds frames not yet in the file.
                let uri = "file:" + (path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path) + "?immutable=1"
                var walSize = stat()
                let walEmpty = stat(path + "-wal", &walSize) != 0 || walSize.st_size == 0
                queue = try DatabaseQueue(path: walEmpty ? uri : path, configuration: config)
            } catch let readError as DatabaseError {
                throw Self.translate(readError, path: path)
            }
            isReadOnly = true
        }
    }

    /// Whether the file system holding `path` has (almost) no room left for this user.
    static func diskFull(_ path: String) -> Bool {
        var st = statvfs()
        return statvfs(POSIX.parent(of: path), &st) == 0 && UInt64(st.f_bavail) * UInt64(st.f_frsize) < 1 << 20
    }

    static func onReadOnlyFileSystem(_ path: String) -> Bool {
        var st = statvfs()
        return statvfs(POSIX.parent(of: path), &st) == 0 && (st.f_flag & UInt(ST_RDONLY)) != 0
    }

    private static func openWritable(_ path: String) throws -> DatabaseQueue {
        // SQLite gives the -wal and -shm files the mode of the main file: create it 0600 first.
        if !POSIX.exists(path) {
            let fd = try POSIX.openFile(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
            _ = fchmod(fd, 0o600)
            close(fd)
        }
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(30)
        config.prepareDatabase { db in
            // Set once, on a new file (before its first table): set again on every open, it wrote
            // the header page into the WAL (a commit: the -wal and its folder fdatasynced), at
            // both gates of every command, even one that only reads.
            if try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != 1 { try db.execute(sql: "PRAGMA auto_vacuum = FULL") }
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA secure_delete = ON")
            try db.execute(sql: "PRAGMA trusted_schema = OFF")
        }
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
            // Migrated already (every open but the first after an upgrade): read, not written.
            // `migrate` always runs a write transaction, which cost every command two WAL
            // commits (fdatasync of the -wal and of the folder) before it did anything.
            let current = try queue.read { try IndexSchema.migrator.hasCompletedMigrations($0) }
            if !current { try IndexSchema.migrator.migrate(queue) }
        } catch let error as DatabaseError {
            throw Self.translate(error, path: path)
        }
        do {
            try queue.read(IndexSchema.verifyShape)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            throw Nu11Error(.corrupted, "the index \(path) is damaged (its tables are not the ones this version makes: \(error.message ?? "schema"))",
                            remedy: .repair, item: path)
        } catch let error as DatabaseError {
            throw Self.translate(error, path: path)
        }
        for suffix in ["", "-wal", "-shm"] { _ = chmod(path + suffix, 0o600) }
        return queue
    }

    static func translate(_ error: DatabaseError, path: String) -> Nu11Error {
        // SQLite reports a full disk under several names (a failed write of the WAL's shared
        // memory reads "locking protocol"); the file system says what it is.
        if error.resultCode == .SQLITE_FULL || ([.SQLITE_PROTOCOL, .SQLITE_IOERR, .SQLITE_CANTOPEN].contains(error.resultCode) && diskFull(path)) {
            var full = Nu11Error(.io, "the disk holding the vault is full; nothing was changed in the index", remedy: .freeDiskSpace, item: path)
            full.diskFull = true
            return full
        }
        switch error.resultCode {
        case .SQLITE_PROTOCOL, .SQLITE_IOERR:
            return Nu11Error(.io, "the index could not be written (\(error.message ?? "I/O error"); a full disk or a failing one)",
                             remedy: .advice(.checkDisk), item: path)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return Nu11Error(.corrupted, "the index \(path) is damaged", remedy: .repair, item: path)
        case .SQLITE_ERROR where ["no such table", "no such column", "malformed database schema"].contains { (error.message ?? "").hasPrefix($0) }:
            return Nu11Error(.corrupted, "the index \(path) is damaged (\(error.message ?? "schema"))", remedy: .repair, item: path)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return Nu11Error(.busy, "the index is busy", remedy: .advice(.waitForOtherProgram), item: path)
        case .SQLITE_CONSTRAINT:
            return Nu11Error(.invalidArgument, "the index refused the change (\(error.message ?? "constraint"))", item: path)
        default:
            return Nu11Error(.io, "index error: \(error.message ?? "\(error.resultCode)")", remedy: .check(reason: nil), item: path)
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try queue.read(body) } catch let error as DatabaseError { throw Self.translate(error, path: path) }
    }

    /// A pragma's value as this connection sees it (for tests and `status`).
    public func pragma(_ name: String) throws -> String {
        guard name.allSatisfy({ $0.isLetter || $0 == "_" }) else {
            throw Nu11Error(.invalidArgument, "bad pragma name")
        }
        return try queue.inDatabase { db in try String.fetchOne(db, sql: "PRAGMA \(name)") ?? "" }
    }

    // MARK: items

    /// The commit point of the vault's one write path: new albums, new item rows and the
    /// removal of the rows they replace, in one transaction.
    public func commit(albums: [AlbumRow], items rows: [ItemRow], removing: [ItemID]) throws {
        try write { db in
            for album in albums {
                try db.execute(sql: "INSERT INTO album (id, domain, name) VALUES (?, ?, ?)",
                               arguments: [album.id.hex, album.domain.rawValue, Data(album.name)])
            }
            for id in removing { try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [id.hex]) }
            var next = (try Int64.fetchOne(db, sql: "SELECT max(seq) FROM item") ?? 0) + 1
            // Each statement compiled once per group, not once per row.
            let insertItem = try db.cachedStatement(sql: "INSERT INTO item (id, seq, kind, domain, album, meta) VALUES (?, ?, ?, ?, ?, ?)")
            let insertSeal = try db.cachedStatement(sql: "INSERT INTO recovery (id, seal) VALUES (?, ?)")
            for row in rows {
                try insertItem.execute(arguments: [row.id.hex, next, row.kind.rawValue, row.domain.rawValue,
                                                   row.album?.hex, Data(row.meta)])
                if let seal = row.recovery { try insertSeal.execute(arguments: [row.id.hex, Data(seal)]) }
                next += 1
            }
        }
    }

    /// Inserts rows in one transaction (group commit); assigns `seq`.
    public func insertItems(_ rows: [ItemRow]) throws { try commit(albums: [], items: rows, removing: []) }

    public func item(_ id: ItemID) throws -> ItemRow? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM item WHERE id = ?", arguments: [id.hex]).map(Self.itemRow)
        }
    }

    /// Items whose ID starts with `prefix` (lowercase hex), at most `limit`.
    public func items(idPrefix prefix: String, limit: Int) throws -> [ItemRow] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM item WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                             arguments: [prefix, prefix + "g", limit]).map(Self.itemRow)
        }
    }

    /// One page of items in insertion order, after `afterSeq` (keyset paging). `limit: nil`
    /// reads every match in one pass, in no particular order: the query has no ORDER BY,
    /// which over several domains costs SQLite a sort of every row (and a page of `LIMIT`
    /// rows sorts all the rows after it again, page after page).
    public func items(domains: [Domain], kind: ItemKind? = nil, album: ItemID?? = .none, afterSeq: Int64 = 0,
                      limit: Int?) throws -> [ItemRow] {
        try read { db in
            let (filter, filterArgs) = Self.itemFilter(domains: domains, kind: kind, album: album)
            var sql = "SELECT id, seq, kind, domain, album, meta FROM item WHERE \(filter) AND seq > ?"
            var args = filterArgs + [afterSeq]
            if let limit {
                sql += " ORDER BY seq LIMIT ?"
                args.append(limit)
            }
            // Through a cursor, by column position: a gallery lists every row, and copying each
            // row out (`fetchAll`) or looking its columns up by name shows at 10,000 items.
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(args))
            var out: [ItemRow] = []
            out.reserveCapacity(min(limit ?? 4096, 4096))
            while let row = try cursor.next() { out.append(try Self.itemRowByPosition(row)) }
            return out
        }
    }

    /// IDs of a domain's items, without their metadata.
    public func itemIDs(domain: Domain) throws -> [ItemID] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT id FROM item WHERE domain = ?", arguments: [domain.rawValue])
                .compactMap { try? ItemID(hex: $0) }
        }
    }

    /// How many items of `domains` each album holds (albums with none are left out).
    public func albumItemCounts(domains: [Domain]) throws -> [ItemID: Int] {
        try read { db in
            let list = domains.map { "\($0.rawValue)" }.joined(separator: ",")
            let rows = try Row.fetchCursor(db, sql: "SELECT album, count(*) FROM item WHERE domain IN (\(list)) AND album IS NOT NULL GROUP BY album")
            var counts: [ItemID: Int] = [:]
            while let row = try rows.next() { counts[try ItemID(hex: row[0])] = row[1] }
            return counts
        }
    }

    public func count(domains: [Domain]) throws -> (items: Int, albums: Int) {
        try read { db in
            let list = domains.map { "\($0.rawValue)" }.joined(separator: ",")
            return (try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE domain IN (\(list))") ?? 0,
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM album WHERE domain IN (\(list))") ?? 0)
        }
    }

    /// Deletes rows, then checkpoints the WAL with TRUNCATE so secure_delete's zeroed pages
    /// reach the main file and the WAL no longer holds the old rows. The deletion is
    /// committed with its transaction: a checkpoint failure after it is marked `tookEffect`.
    public func deleteItems(_ ids: [ItemID]) throws {
        try write { db in
            for id in ids { try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [id.hex]) }
        }
        try POSIX.afterEffect { try checkpoint() }
    }

    /// Replaces a row in place (same ID and sequence), e.g. when an item moves to Fade.
    public func updateItem(_ row: ItemRow) throws {
        try write { db in
            try db.execute(sql: "UPDATE item SET kind = ?, domain = ?, album = ?, meta = ? WHERE id = ?",
                           arguments: [row.kind.rawValue, row.domain.rawValue, row.album?.hex, Data(row.meta), row.id.hex])
            // Only the primary vault's items are recoverable: one that leaves it (to Fade) loses its seal.
            if row.domain != .vault { try db.execute(sql: "DELETE FROM recovery WHERE id = ?", arguments: [row.id.hex]) }
        }
    }

    /// Marks an item as quarantined by the repairing check (its file moved to Quarantine/).
    public func setQuarantined(_ id: ItemID) throws {
        try write { db in try db.execute(sql: "UPDATE item SET quarantined = 1 WHERE id = ?", arguments: [id.hex]) }
    }

    public func quarantinedIDs() throws -> Set<ItemID> {
        try read { db in
            Set(try String.fetchAll(db, sql: "SELECT id FROM item WHERE quarantined = 1").compactMap { try? ItemID(hex: $0) })
        }
    }

    /// SQLite's own structural check ("ok" when sound).
    public func integrityCheck() throws -> String {
        try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") }
    }

    public func allRows() throws -> [ItemRow] { try items(domains: Domain.allCases, limit: Int.max) }

    public func checkpoint() throws {
        do {
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        } catch let error as DatabaseError {
            throw Self.translate(error, path: path)
        }
    }

    // MARK: pairing

    /// The vault ID recorded in the index; nil for an index made before vault IDs.
    public func vaultID() throws -> ItemID? {
        try read(Self.readVaultID)
    }

    /// nil for an index of an older schema (no `vault` table), opened read-only.
    private static func readVaultID(_ db: Database) throws -> ItemID? {
        guard try db.tableExists("vault") else { return nil }
        return try String.fetchOne(db, sql: "SELECT id FROM vault WHERE one = 1").map { try ItemID(hex: $0) }
    }

    /// The vault ID of the index at `path`, read without writing anything (no migration, no
    /// WAL checkpoint): for finding a moved vault folder. Nil when it cannot be read.
    public static func peekVaultID(path: String) -> ItemID? {
        var config = Configuration()
        config.readonly = true
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA trusted_schema = OFF") }
        guard let queue = try? DatabaseQueue(path: path, configuration: config) else { return nil }
        return try? queue.read(readVaultID)
    }

    public func recordVaultID(_ id: ItemID) throws {
        try write { db in try db.execute(sql: "INSERT INTO vault (one, id) VALUES (1, ?)", arguments: [id.hex]) }
    }

    /// Whether the index has any item at all.
    public func isEmpty() throws -> Bool {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM item") == 0 }
    }

    // MARK: albums

    public func insertAlbum(_ row: AlbumRow) throws {
        try write { db in
            try db.execute(sql: "INSERT INTO album (id, domain, name) VALUES (?, ?, ?)",
                           arguments: [row.id.hex, row.domain.rawValue, Data(row.name)])
        }
    }

    public func albums(domains: [Domain]) throws -> [AlbumRow] {
        try read { db in
            let list = domains.map { "\($0.rawValue)" }.joined(separator: ",")
            return try Row.fetchAll(db, sql: "SELECT * FROM album WHERE domain IN (\(list)) ORDER BY rowid").compactMap { row in
                guard let id = try? ItemID(hex: row["id"]), let domain = Domain(rawValue: row["domain"]) else { return nil }
                return AlbumRow(id: id, domain: domain, name: [UInt8](row["name"] as Data))
            }
        }
    }

    public func renameAlbum(_ id: ItemID, name: [UInt8]) throws {
        try write { db in try db.execute(sql: "UPDATE album SET name = ? WHERE id = ?", arguments: [Data(name), id.hex]) }
    }

    /// Removes an album row; its items must have been moved or deleted first.
    public func deleteAlbum(_ id: ItemID) throws {
        try write { db in try db.execute(sql: "DELETE FROM album WHERE id = ?", arguments: [id.hex]) }
        try POSIX.afterEffect { try checkpoint() }
    }

    /// A row of `SELECT id, seq, kind, domain, album, meta`.
    static func itemRowByPosition(_ row: Row) throws -> ItemRow {
        guard let kind = ItemKind(rawValue: row[2]), let domain = Domain(rawValue: row[3]) else {
            throw Nu11Error(.corrupted, "the index holds an invalid row", remedy: .check(reason: nil))
        }
        let album: String? = row[4]
        return ItemRow(id: try ItemID(hex: row[0]), seq: row[1], kind: kind, domain: domain,
                       album: try album.map { try ItemID(hex: $0) },
                       meta: try row.withUnsafeData(atIndex: 5) { data in data.map { [UInt8]($0) } } ?? [])
    }

    static func itemRow(_ row: Row) throws -> ItemRow {
        guard let kind = ItemKind(rawValue: row["kind"]), let domain = Domain(rawValue: row["domain"]) else {
            throw Nu11Error(.corrupted, "the index holds an invalid row", remedy: .check(reason: nil))
        }
        let album: String? = row["album"]
        return ItemRow(id: try ItemID(hex: row["id"]), seq: row["seq"], kind: kind, domain: domain,
                       album: try album.map { try ItemID(hex: $0) }, meta: [UInt8](row["meta"] as Data))
    }
}
