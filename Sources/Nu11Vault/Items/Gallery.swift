// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// A gallery's listing in two steps, so its first screen does not wait for every item's
/// metadata to be decoded: `itemIDs` sorts every visible item by capture date reading only
/// the two dates out of each sealed metadata record, and `summaries` decodes the items a
/// screen shows. (`list(order: .taken)` decodes every item in full.)
extension Items {
    /// The visible items' IDs in capture-date order (oldest first; ties by import order).
    public func itemIDs(album: String? = nil, kind: ItemKind = .file) throws -> [ItemID] {
        try datedItemIDs(album: album, kind: kind).map(\.id)
    }

    /// The same, each with the date it is sorted by (the capture date, else the import time):
    /// what a gallery's date headers are made of, from the same single pass. A Live Photo is
    /// one entry: the motion of a still in the same listing is left out (`LivePhotos`).
    public func datedItemIDs(album: String? = nil, kind: ItemKind = .file) throws -> [(id: ItemID, date: Date)] {
        let filter: ItemID?? = try album.map { .some(try vault.albums.albumID(named: $0)) } ?? .none
        evictExpiredPreviews()
        let rows = try visibleRows(kind: kind, album: filter, afterSeq: 0, limit: Int.max)
        loadListingFile()
        let before = vault.listingCache.opened
        let facts = try listingFacts(rows)
        if album == nil && kind == .file { saveListingFile(rows, opened: vault.listingCache.opened - before) }
        let motions = Set(facts.compactMap(\.motion))
        var order = rows.indices.filter { !motions.contains(rows[$0].id) }
        order.sort { facts[$0].date != facts[$1].date ? facts[$0].date < facts[$1].date : rows[$0].seq < rows[$1].seq }
        return order.map { (rows[$0].id, Date(timeIntervalSince1970: facts[$0].date)) }
    }

    /// The listing facts of `rows`: from the session's cache where the sealed record is the one
    /// read before (its tag), else opened (on every core) and kept.
    func listingFacts(_ rows: [ItemRow]) throws -> [ItemMetadata.ListingFacts] {
        var facts = rows.map { vault.listingCache.facts($0) }
        let missing = facts.indices.filter { facts[$0] == nil }
        guard !missing.isEmpty else { return facts.compactMap { $0 } }
        let toOpen = missing.map { rows[$0] }
        var keys: [Domain: SecretBytes] = [:]
        for domain in Set(toOpen.map(\.domain)) { keys[domain] = try metadataKey(domain) }
        let opened = try ItemMetadata.listingFacts(toOpen, keys: keys)
        for (i, fact) in zip(missing, opened) {
            facts[i] = fact
            vault.listingCache.keep(fact, for: rows[i])
        }
        return facts.compactMap { $0 }
    }

    /// The summaries of `ids`, in their order; items gone since (deleted, faded) are left out.
    public func summaries(_ ids: [ItemID]) throws -> [ItemSummary] {
        evictExpiredPreviews()
        let names = try vault.albums.albumNames()
        var out: [ItemSummary] = []
        for id in ids {
            guard let row = try index.item(id), isVisible(row) else { continue }
            let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
            var item = summary(row: row, meta: meta, albumName: row.album.flatMap { names[$0] })
            // A Live Photo's motion counts only while it is there to be played.
            if let motion = item.motion, try index.item(motion).map(isVisible) != true { item.motion = nil }
            out.append(item)
        }
        return out
    }
}

extension ItemMetadata {
    /// What a listing needs of an item.
    struct ListingFacts: Sendable, Equatable {
        /// The capture date, else the source file's mtime, else the import time.
        var date: Double
        /// A Live Photo still's motion.
        var motion: ItemID?
    }

    /// The listing facts of a sealed record, read without decoding the whole document: the
    /// record is our own JSON, where `"taken":`, `"created":` and `"motion":` can only occur
    /// as keys (a quote inside a string is always escaped). Falls back to the full decode
    /// for anything unexpected.
    static func listingFacts(_ row: ItemRow, key: SecretBytes) throws -> ListingFacts {
        var plain: [UInt8]
        do {
            plain = try SmallSeal.open(row.meta, key: key, associatedData: aad(row.id, album: row.album))
        } catch {
            return try fullFacts(row, key: key)
        }
        defer { secureZero(&plain) }
        var motion: ItemID?
        if contains(motionKey, in: plain) {
            guard let hex = string(after: motionKey, in: plain), let id = try? ItemID(hex: hex) else { return try fullFacts(row, key: key) }
            motion = id
        }
        // taken, else modified, else created: each key absent, null or a number.
        for field in [takenKey, modifiedKey] {
            if let value = number(after: field, in: plain) { return ListingFacts(date: value, motion: motion) }
            if contains(field, in: plain) && !isNull(after: field, in: plain) { return try fullFacts(row, key: key) }
        }
        if let created = number(after: createdKey, in: plain) { return ListingFacts(date: created, motion: motion) }
        return try fullFacts(row, key: key)
    }

    private static func fullFacts(_ row: ItemRow, key: SecretBytes) throws -> ListingFacts {
        let meta = try open(row, key: key)
        return ListingFacts(date: meta.sortDate.timeIntervalSince1970, motion: meta.motion)
    }

    /// `listingFacts` of every row, on every core.
    static func listingFacts(_ rows: [ItemRow], keys: [Domain: SecretBytes]) throws -> [ListingFacts] {
        try inParallel(rows) { row, _ in
            guard let key = keys[row.domain] else { throw Nu11Error(.internalError, "domain \(row.domain) is not open") }
            return try listingFacts(row, key: key)
        }
    }

    private static let motionKey = Array("\"motion\":".utf8)

    /// The JSON string right after `key` when it is plain (no escapes).
    private static func string(after key: [UInt8], in bytes: [UInt8]) -> String? {
        guard var i = find(key, in: bytes) else { return nil }
        while i < bytes.count, bytes[i] == UInt8(ascii: " ") { i += 1 }
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return nil }
        let start = i + 1
        guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")), !bytes[start ..< end].contains(UInt8(ascii: "\\")) else { return nil }
        return String(decoding: bytes[start ..< end], as: UTF8.self)
    }

    private static let takenKey = Array("\"taken\":".utf8)
    private static let modifiedKey = Array("\"modified\":".utf8)
    private static let createdKey = Array("\"created\":".utf8)

    private static func find(_ key: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= key.count else { return nil }
        var i = 0
        while i <= bytes.count - key.count {
            if bytes[i] == key[0] && bytes[i ..< i + key.count].elementsEqual(key) { return i + key.count }
            i += 1
        }
        return nil
    }

    private static func contains(_ key: [UInt8], in bytes: [UInt8]) -> Bool { find(key, in: bytes) != nil }

    private static func isNull(after key: [UInt8], in bytes: [UInt8]) -> Bool {
        guard var i = find(key, in: bytes) else { return false }
        while i < bytes.count, bytes[i] == UInt8(ascii: " ") { i += 1 }
        return bytes[i...].starts(with: Array("null".utf8))
    }

    /// The JSON number right after `key`, if there is one.
    private static func number(after key: [UInt8], in bytes: [UInt8]) -> Double? {
        guard var i = find(key, in: bytes) else { return nil }
        while i < bytes.count, bytes[i] == UInt8(ascii: " ") { i += 1 }
        var text = ""
        while i < bytes.count, let c = Optional(bytes[i]),
              (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
                || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") || c == UInt8(ascii: "+") {
            text.unicodeScalars.append(Unicode.Scalar(c))
            i += 1
        }
        return Double(text)
    }
}

/// The listing facts a session has read, by item; an entry counts only while the item's row
/// holds the very record it was read from, in the same album (the record's last 16 bytes are
/// its AEAD tag: any re-seal, such as a thumbnail backfill, an album move or a key rotation,
/// changes it; and the album is what the record's associated data binds besides the ID, so a
/// row moved in the index behind our back is opened again, and fails).
struct ListingCache {
    private var entries: [ItemID: (tag: RecordTag, album: ItemID?, facts: ItemMetadata.ListingFacts)] = [:]
    /// How many records have been opened to fill it (for the tests).
    private(set) var opened = 0

    func facts(_ row: ItemRow) -> ItemMetadata.ListingFacts? {
        guard let entry = entries[row.id], row.meta.count >= 16, entry.tag == RecordTag(row.meta.suffix(16)), entry.album == row.album else {
            return nil
        }
        return entry.facts
    }

    mutating func keep(_ facts: ItemMetadata.ListingFacts, for row: ItemRow) {
        guard row.meta.count >= 16 else { return }
        entries[row.id] = (RecordTag(row.meta.suffix(16)), row.album, facts)
        opened += 1
    }

    /// An entry read from the listing file (`ListingFile`): it counts on the same terms.
    mutating func reserve(_ count: Int) { entries.reserveCapacity(entries.count + count) }

    mutating func restore(_ entry: ListingFile.Entry) {
        entries[entry.id] = (entry.tag, entry.album, entry.facts)
    }

    /// The entry for `row`, while it still holds (for the listing file).
    func entry(_ row: ItemRow) -> ListingFile.Entry? {
        guard let facts = facts(row) else { return nil }
        return ListingFile.Entry(id: row.id, tag: RecordTag(row.meta.suffix(16)), album: row.album, facts: facts)
    }

    mutating func removeAll() {
        entries.removeAll()
    }

    var count: Int { entries.count }
}

/// A sealed record's last 16 bytes (its AEAD tag) as two words: what a listing compares for
/// each of 100,000 rows, without an array each.
struct RecordTag: Equatable {
    private let high: UInt64
    private let low: UInt64

    /// The last 16 bytes of `bytes` (zeros in front when it is shorter).
    init(_ bytes: some Collection<UInt8>) {
        var high: UInt64 = 0, low: UInt64 = 0
        let skip = max(0, bytes.count - 16), short = max(0, 16 - bytes.count)
        for (i, byte) in bytes.dropFirst(skip).enumerated() {
            if i + short < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }

    var bytes: [UInt8] {
        (0..<16).map { i in UInt8(truncatingIfNeeded: (i < 8 ? high : low) >> UInt64(8 * (7 - i % 8))) }
    }
}
