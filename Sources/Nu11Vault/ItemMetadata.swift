// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What the index keeps about an item, sealed under the domain's metadata subkey.
struct ItemMetadata: Codable, Sendable {
    var name: String
    var size: UInt64
    var type: String
    var created: Date
    /// The source file's modification time (restored on export); nil for stdin and notes.
    var modified: Date?
    /// Photos (docs/FORMAT.md §4.3): displayed size, capture date (EXIF DateTimeOriginal,
    /// else the file's mtime), camera, whether the original carries a location, whether a
    /// sealed thumbnail exists. All optional: rows sealed before photos simply lack them.
    var width: Int?
    var height: Int?
    var taken: Date?
    var camera: String?
    var gps: Bool?
    var thumbnail: Bool?
    /// Videos: the duration in seconds, from the container.
    var duration: Double?
    /// A Live Photo's still: the item holding its motion (`LivePhotos`).
    var motion: ItemID?
    /// Images: quarter turns clockwise (1...3) the user added on top of the image's own
    /// orientation (`Photos.rotate`); absent when none. Thumbnails are made with it, and a
    /// JPEG's export carries it in its EXIF orientation.
    var rotate: Int?

    /// The user's quarter turns, 0...3.
    var turns: Int { ((rotate ?? 0) % 4 + 4) % 4 }

    init(name: String, size: UInt64, type: String, created: Date, modified: Date? = nil) {
        self.name = name
        self.size = size
        self.type = type
        self.created = created
        self.modified = modified
    }

    /// What a gallery sorts and groups by: the capture date, else the source file's mtime,
    /// else the import time.
    var sortDate: Date { taken ?? modified ?? created }

    /// Adds what the photo analysis found.
    mutating func apply(_ photo: PhotoFacts) {
        type = photo.type
        width = photo.width
        height = photo.height
        taken = photo.taken ?? modified
        camera = photo.camera
        gps = photo.hasGPS
        thumbnail = photo.thumbnails != nil ? true : nil
        duration = photo.duration
    }

    /// Version 2 binds the album the row sits in (16 zero bytes for none): moving a row to
    /// another album in the index makes its metadata fail to open.
    static func aad(_ id: ItemID, album: ItemID?) -> [UInt8] {
        Array("nu11vlt item meta v2".utf8) + id.bytes + (album?.bytes ?? [UInt8](repeating: 0, count: ItemID.byteCount))
    }

    /// Version 1 (before album binding); read only.
    static func legacyAAD(_ id: ItemID) -> [UInt8] { Array("nu11vlt item meta v1".utf8) + id.bytes }

    /// Sealed sizes say nothing about name lengths: the JSON is padded with spaces to the
    /// next of 512, 1024, 2048, … bytes (512 holds a long name with a photo's facts).
    static func padded(_ plain: [UInt8]) -> [UInt8] {
        var bucket = 512
        while bucket < plain.count { bucket *= 2 }
        return plain + [UInt8](repeating: 0x20, count: bucket - plain.count)
    }

    func seal(id: ItemID, album: ItemID?, key: SecretBytes) throws -> [UInt8] {
        var raw = try json()
        defer { secureZero(&raw) }
        var plain = Self.padded(raw)
        defer { secureZero(&plain) }
        return try SmallSeal.seal(plain, key: key, associatedData: Self.aad(id, album: album))
    }

    /// The row's sealed metadata opened with `old` and sealed again with `new`, its bytes as
    /// they are (no JSON round trip: a rotation re-seals every row of the vault); nil when
    /// `old` does not open it under its album binding (a legacy row takes the decoding path).
    static func resealed(_ row: ItemRow, from old: SecretBytes, to new: SecretBytes) throws -> [UInt8]? {
        let ad = aad(row.id, album: row.album)
        guard var plain = try? SmallSeal.open(row.meta, key: old, associatedData: ad) else { return nil }
        defer { secureZero(&plain) }
        return try SmallSeal.seal(plain, key: new, associatedData: ad)
    }

    /// Whether `key` opens the row's metadata under its album binding (nothing is decoded).
    static func opens(_ row: ItemRow, key: SecretBytes) -> Bool {
        guard var plain = try? SmallSeal.open(row.meta, key: key, associatedData: aad(row.id, album: row.album)) else { return false }
        secureZero(&plain)
        return true
    }

    /// Opens a row's metadata, bound to its ID and album. Rows sealed before album binding
    /// (version 1) open with `legacy` set; the repairing check re-seals them.
    static func open(_ row: ItemRow, key: SecretBytes) throws -> ItemMetadata {
        try openReportingLegacy(row, key: key).meta
    }

    /// The metadata of many rows (a whole listing, sorted by capture date), opened on every
    /// core: a 10,000-item gallery is listed in a fraction of the time. The first failure wins.
    static func openAll(_ rows: [ItemRow], keys: [Domain: SecretBytes]) throws -> [ItemMetadata] {
        try inParallel(rows) { row, decoder in
            guard let key = keys[row.domain] else { throw Nu11Error(.internalError, "domain \(row.domain) is not open") }
            return try openReportingLegacy(row, key: key, decoder: decoder).meta
        }
    }

    /// `body` over every row on every core (one JSON decoder per worker), results in row order.
    static func inParallel<T: Sendable>(_ rows: [ItemRow], _ body: @Sendable (ItemRow, JSONDecoder) throws -> T) throws -> [T] {
        try ParallelRows.map(rows, worker: {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            return decoder
        }, body)
    }

    static func openReportingLegacy(_ row: ItemRow, key: SecretBytes,
                                    decoder: JSONDecoder? = nil) throws -> (meta: ItemMetadata, legacy: Bool) {
        var legacy = false
        do {
            var plain: [UInt8]
            do {
                plain = try SmallSeal.open(row.meta, key: key, associatedData: aad(row.id, album: row.album))
            } catch {
                plain = try SmallSeal.open(row.meta, key: key, associatedData: legacyAAD(row.id))
                legacy = true
            }
            defer { secureZero(&plain) }
            let decoder = decoder ?? {
                let fresh = JSONDecoder()
                fresh.dateDecodingStrategy = .secondsSince1970
                return fresh
            }()
            return (try decoder.decode(ItemMetadata.self, from: Data(plain)), legacy)
        } catch {
            // Damaged, or an old copy of the index put back (a restored or synced folder): the
            // repairing check rebuilds the entry from the item's sidecar under the current keys.
            throw Nu11Error(.corrupted, "item \(row.id): its index entry is damaged or from an old copy of the index", remedy: .repair, item: row.id.hex)
        }
    }

    /// A MIME type guessed from the name's extension (metadata only; never trusted).
    static func guessType(_ name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "heic", "heif": "image/heic"
        case "avif": "image/avif"
        case "bmp": "image/bmp"
        case "ppm", "pnm": "image/x-portable-pixmap"
        case "tif", "tiff": "image/tiff"
        case "mp4": "video/mp4"
        case "mov": "video/quicktime"
        case "mkv": "video/x-matroska"
        case "webm": "video/webm"
        case "txt", "md": "text/plain"
        case "pdf": "application/pdf"
        default: "application/octet-stream"
        }
    }
}

/// An item as a user sees it. Typed: the CLI and the app render it in their own words
/// (the CLI's JSON shape is the CLI's, `ItemJSON`).
public struct ItemSummary: Sendable, Equatable {
    public var id: ItemID
    public var name: String
    public var size: UInt64
    /// The media type (from the content's magic bytes, else the extension).
    public var type: String
    public var album: String?
    public var albumID: ItemID?
    public var domain: Domain
    public var kind: ItemKind
    public var created: Date
    /// When the item fades (is destroyed), for fade items.
    public var fadesAt: Date?
    /// The source file's modification time, restored on export.
    public var modified: Date?
    /// Photos: displayed width and height, capture date, camera, whether the original
    /// carries a location (GPS), whether a sealed thumbnail exists.
    public var width: Int?
    public var height: Int?
    public var taken: Date?
    public var camera: String?
    public var gps: Bool?
    public var thumbnail: Bool
    /// Videos: the duration in seconds, from the container.
    public var duration: Double?
    /// Images: quarter turns clockwise (0...3) the user added (`Photos.rotate`); the
    /// thumbnails already show it, and a JPEG's export carries it.
    public var rotation: Int = 0
    /// A Live Photo's still: its motion (a short video item, present and visible when the
    /// summary comes from `summaries`), which a gallery shows as part of this item.
    public var motion: ItemID?

    /// A still image (its type says so), whatever its extension.
    public var isImage: Bool { kind == .file && type.hasPrefix("image/") }
    /// What a gallery sorts and groups by: the capture date, else the source file's mtime,
    /// else the import time.
    public var sortDate: Date { taken ?? modified ?? created }
    public var isVideo: Bool { kind == .file && type.hasPrefix("video/") }
}

/// An album as a user sees it.
public struct AlbumSummary: Sendable, Codable, Equatable {
    public var id: String
    public var name: String
    public var items: Int
}

/// The order of a listing.
public enum ItemOrder: String, Sendable, CaseIterable {
    /// Import order (the default).
    case imported
    /// Capture date: EXIF DateTimeOriginal (a video's container date), else the source file's
    /// mtime, else import time.
    case taken
}

/// One page of a listing; `next` continues it.
public struct ItemPage: Sendable {
    public var items: [ItemSummary]
    /// Pass as `after` to get the next page; nil on the last page.
    public var next: ItemID?
}
