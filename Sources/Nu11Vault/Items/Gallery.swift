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
        try libraryEntries(album: album, kind: kind).map { ($0.id, $0.date) }
    }

    /// The same listing with what each item is (a photo, a video, another file), read in the
    /// same pass: what the app's Photos and Files sections and its kind filter split by.
    public func libraryEntries(album: String? = nil, kind: ItemKind = .file) throws -> [LibraryEntry] {
        let filter: ItemID?? = try album.map { .some(try vault.albums.albumID(named: $0)) } ?? .none
        evictExpiredPreviews()
        loadListingFile()
        let before = vault.listingCache.kept
        // The rows without their sealed records: the records are read only where the cache
        // does not know the item (changed since the last listing, or the first listing).
        var rows = try index.listingRows(domains: visibleDomains, kind: kind, album: filter)
        let facts = try listingFacts(&rows)
        if album == nil && kind == .file { saveListingFile(rows, opened: vault.listingCache.kept - before) }
        let motions = Set(facts.compactMap(\.motion))
        var order = rows.indices.filter { !motions.contains(rows[$0].id) }
        order.sort { facts[$0].date != facts[$1].date ? facts[$0].date < facts[$1].date : rows[$0].seq < rows[$1].seq }
        let changed = vault.listingChanged
        vault.listingChanged.removeAll()
        return order.map {
            LibraryEntry(id: rows[$0].id, date: Date(timeIntervalSince1970: facts[$0].date), media: facts[$0].media,
                         changed: changed.contains(rows[$0].id))
        }
    }

    /// The listing facts of `rows`, in their order: from the session's cache where the row
    /// holds the very record read before (its tag), else its record opened (on every core) and
    /// kept. Rows that are not visible (a Fade item past its deadline or whose record does not
    /// open, a row gone since) are removed from `rows`. Fade rows are always opened: their
    /// visibility is decided by opening them.
    func listingFacts(_ rows: inout [ListingRow]) throws -> [ItemMetadata.ListingFacts] {
        var facts = vault.listingCache.facts(rows)
        let missing = facts.indices.filter { facts[$0] == nil }
        guard !missing.isEmpty else { return facts.compactMap { $0 } }
        // Their whole rows: one by one when a few changed, else from one pass over the index.
        var full: [ItemID: ItemRow] = [:]
        if missing.count <= 2048 {
            for i in missing { if let row = try index.item(rows[i].id) { full[row.id] = row } }
        } else {
            for row in try index.items(domains: visibleDomains, afterSeq: 0, limit: nil) { full[row.id] = row }
        }
        let toOpen = missing.compactMap { i in full[rows[i].id].map { (at: i, row: $0) } }.filter { isListed($0.row) }
        // A record this session listed before and that is sealed anew since (another process
        // turned, renamed, moved the item or made its thumbnails): what the session holds of
        // it in memory (its thumbnails and preview) is dropped, and the caller is told.
        for entry in toOpen where vault.listingCache.knows(entry.row.id) {
            forgetCached(entry.row.id)
            vault.listingChanged.insert(entry.row.id)
            // A Fade row's facts are never kept (below), so the entry it had while permanent
            // (`fade set` keeps the ID) goes: it is reported changed once, not at every listing.
            if entry.row.domain == .fade { vault.listingCache.forget(entry.row.id) }
        }
        var keys: [Domain: SecretBytes] = [:]
        for domain in Set(toOpen.map(\.row.domain)) { keys[domain] = try metadataKey(domain) }
        let opened = try ItemMetadata.listingFacts(toOpen.map(\.row), keys: keys)
        for (entry, fact) in zip(toOpen, opened) {
            facts[entry.at] = fact
            // A Fade item's facts are not kept: its visibility is decided by opening it.
            if entry.row.domain == .fade { vault.listingCache.openedUnkept() } else { vault.listingCache.keep(fact, for: entry.row) }
        }
        var keptRows: [ListingRow] = []
        var keptFacts: [ItemMetadata.ListingFacts] = []
        keptRows.reserveCapacity(rows.count)
        keptFacts.reserveCapacity(rows.count)
        for (row, fact) in zip(rows, facts) {
            guard let fact else { continue }
            keptRows.append(row)
            keptFacts.append(fact)
        }
        rows = keptRows
        return keptFacts
    }

    /// The summaries of `ids`, in their order; items gone since (deleted, faded) are left out.
    public func summaries(_ ids: [ItemID]) throws -> [ItemSummary] {
        evictExpiredPreviews()
        let names = try vault.albums.albumNames()
        var out: [ItemSummary] = []
        for id in ids {
            guard let row = try index.item(id), isListed(row) else { continue }
            let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
            var item = summary(row: row, meta: meta, albumName: row.album.flatMap { names[$0] })
            // A Live Photo's motion counts only while it is there to be played.
            if let motion = item.motion, try index.item(motion).map(isListed) != true { item.motion = nil }
            out.append(item)
        }
        return out
    }
}

/// What an item is, as a gallery tells them apart (from its sealed MIME type).
public enum MediaKind: UInt8, Sendable {
    case other = 0, image = 1, video = 2

    init(type: String) {
        self = type.hasPrefix("image/") ? .image : type.hasPrefix("video/") ? .video : .other
    }
}

/// An item of a gallery listing: its ID, the date it is sorted by, and what it is.
public struct LibraryEntry: Sendable, Equatable {
    public var id: ItemID
    public var date: Date
    public var media: MediaKind
    /// Its sealed record changed since this session last listed it (another process, or this
    /// one, turned, renamed or moved it, or made its thumbnails): a gallery shows it anew.
    public var changed = false
}

extension ItemMetadata {
    /// What a listing needs of an item.
    struct ListingFacts: Sendable, Equatable {
        /// The capture date, else the source file's mtime, else the import time.
        var date: Double
        /// A Live Photo still's motion.
        var motion: ItemID?
        /// A photo, a video or another file.
        var media: MediaKind = .other
    }

    /// The listing facts of a sealed record, read without decoding the whole document: the
    /// record is our own JSON, where `"taken":`, `"created":`, `"type":` and `"motion":` can only occur
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
        guard let type = string(after: typeKey, in: plain) else { return try fullFacts(row, key: key) }
        let media = MediaKind(type: type)
        // taken, else modified, else created: each key absent, null or a number.
        for field in [takenKey, modifiedKey] {
            if let value = number(after: field, in: plain) { return ListingFacts(date: value, motion: motion, media: media) }
            if contains(field, in: plain) && !isNull(after: field, in: plain) { return try fullFacts(row, key: key) }
        }
        if let created = number(after: createdKey, in: plain) { return ListingFacts(date: created, motion: motion, media: media) }
        return try fullFacts(row, key: key)
    }

    private static func fullFacts(_ row: ItemRow, key: SecretBytes) throws -> ListingFacts {
        let meta = try open(row, key: key)
        return ListingFacts(date: meta.sortDate.timeIntervalSince1970, motion: meta.motion, media: MediaKind(type: meta.type))
    }

    /// `listingFacts` of every row, on every core.
    static func listingFacts(_ rows: [ItemRow], keys: [Domain: SecretBytes]) throws -> [ListingFacts] {
        try inParallel(rows) { row, _ in
            guard let key = keys[row.domain] else { throw Nu11Error(.internalError, "domain \(row.domain) is not open") }
            return try listingFacts(row, key: key)
        }
    }

    private static let motionKey = Array("\"motion\":".utf8)
    private static let typeKey = Array("\"type\":".utf8)

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
    /// How many records have been opened by listings (for the tests), and how many of them
    /// were kept (all but Fade items).
    private(set) var opened = 0
    private(set) var kept = 0

    func facts(_ row: ListingRow) -> ItemMetadata.ListingFacts? {
        guard let entry = entries[row.id], entry.tag == row.tag, entry.album == row.album else { return nil }
        return entry.facts
    }

    /// The facts of each row the cache vouches for, in one call; never a Fade row's.
    func facts(_ rows: [ListingRow]) -> [ItemMetadata.ListingFacts?] {
        rows.map { $0.domain == .fade ? nil : facts($0) }
    }

    mutating func keep(_ facts: ItemMetadata.ListingFacts, for row: ItemRow) {
        guard row.meta.count >= 16 else { return }
        learn(facts, for: row)
        opened += 1
        kept += 1
    }

    mutating func openedUnkept() { opened += 1 }

    /// Whether an entry is held for `id` (whatever record it was read from).
    func knows(_ id: ItemID) -> Bool { entries[id] != nil }

    mutating func forget(_ id: ItemID) { entries[id] = nil }

    /// Facts known without opening the record: an item this session has just sealed, its
    /// metadata in hand (a folder import). They count on the same terms as opened ones.
    mutating func learn(_ facts: ItemMetadata.ListingFacts, for row: ItemRow) {
        guard row.meta.count >= 16 else { return }
        entries[row.id] = (RecordTag(row.meta.suffix(16)), row.album, facts)
    }

    /// The entries read from the listing file (`ListingFile`): they count on the same terms.
    /// (One call for all of them: 100,000 calls through the vault's property cost more than the
    /// inserts.)
    mutating func restore(_ restored: [ListingFile.Entry]) {
        entries.reserveCapacity(entries.count + restored.count)
        for entry in restored { entries[entry.id] = (entry.tag, entry.album, entry.facts) }
    }

    /// The entry for `row`, while it still holds (for the listing file).
    func entry(_ row: ListingRow) -> ListingFile.Entry? {
        guard let facts = facts(row) else { return nil }
        return ListingFile.Entry(id: row.id, tag: row.tag, album: row.album, facts: facts)
    }

    mutating func removeAll() {
        entries.removeAll()
    }

    var count: Int { entries.count }
}
