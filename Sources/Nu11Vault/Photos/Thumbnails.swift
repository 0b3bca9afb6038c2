// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Media
import Nu11Storage

/// Which of a photo's two thumbnails.
public enum ThumbnailSize: String, Sendable, CaseIterable {
    /// A grid tile, about 256 px on the long side.
    case grid
    /// A screen preview, about 1600 px on the long side.
    case preview

    var code: UInt8 { self == .grid ? ThumbnailPair.gridCode : ThumbnailPair.previewCode }
}

/// What the in-memory cache holds for an item: the head of its content, or a thumbnail.
public struct CachedPart: Hashable, Sendable {
    public enum Part: UInt8, Sendable { case head, grid, preview }
    public var id: ItemID
    public var part: Part

    public init(id: ItemID, part: Part) {
        self.id = id
        self.part = part
    }
}

/// The result of `thumbnails --missing`.
public struct ThumbnailBackfill: Sendable, Codable {
    public var checked = 0
    public var made = 0
    /// Items that are images but could not be decoded (named in `notices`).
    public var failed = 0
}

extension Photos {
    /// Seals a thumbnail pair into a temp file beside the others (not yet published).
    func stageThumbnails(_ pair: ThumbnailPair, header: N11Header, itemKey: SecretBytes,
                         durability: AtomicFileWriter.Durability = .batched) throws -> AtomicFileWriter {
        try ProtectedFiles.makeDirectory(location.thumbnailsFolder)
        let sealed = try ThumbnailEnvelope.seal(pair.bundleImages, header: header, itemKey: itemKey)
        let writer = try AtomicFileWriter(destination: location.thumbnailPath(header.itemID))
        do {
            var sink = writer.sink
            try sink.write(sealed)
            try writer.prepare(durability)
        } catch {
            writer.abort()
            throw error
        }
        return writer
    }

    /// A photo's thumbnail, decrypted, from the in-memory LRU when present. The read-time
    /// checks (visibility, fade deadline) come first, always.
    public func thumbnail(_ ref: ItemRef, size: ThumbnailSize) throws -> EncodedThumbnail {
        evictExpiredPreviews()
        let row = try vault.items.row(ref)
        try vault.items.checkFade(row)  // before the cache, as every read path
        let part: CachedPart.Part = size == .grid ? .grid : .preview
        let key = CachedPart(id: row.id, part: part)
        if let cached = previewCache.get(key), let decoded = Self.decodeCached(cached) { return decoded }
        guard let thumb = EncodedThumbnail(try openThumbnails(row), size: size.code) else {
            throw Nu11Error(.corrupted, "item \(row.id): its thumbnail file lacks the \(size.rawValue) size",
                            remedy: .check(reason: nil), item: row.id.hex)
        }
        previewCache.set(key, Self.encodeCached(thumb))
        return thumb
    }

    /// A gallery tile's thumbnail, for a tile whose short side is `need` device pixels: the
    /// grid size when it covers that, else the preview when that is larger (a screen of scale
    /// 2). Both sizes come from one decryption of the item's thumbnail file, and both are kept
    /// in the in-memory LRU; the read-time checks come first, as in `thumbnail`.
    public func tileThumbnail(_ ref: ItemRef, need: Int) throws -> EncodedThumbnail {
        evictExpiredPreviews()
        let row = try vault.items.row(ref)
        try vault.items.checkFade(row)
        let gridKey = CachedPart(id: row.id, part: .grid), previewKey = CachedPart(id: row.id, part: .preview)
        func fitting(_ grid: EncodedThumbnail, _ preview: EncodedThumbnail?) -> EncodedThumbnail {
            guard min(grid.width, grid.height) < need, let preview,
                  min(preview.width, preview.height) > min(grid.width, grid.height) else { return grid }
            return preview
        }
        if let grid = previewCache.get(gridKey).flatMap(Self.decodeCached) {
            if min(grid.width, grid.height) >= need { return grid }
            if let preview = previewCache.get(previewKey).flatMap(Self.decodeCached) { return fitting(grid, preview) }
        }
        let images = try openThumbnails(row)
        guard let grid = EncodedThumbnail(images, size: ThumbnailSize.grid.code) else {
            throw Nu11Error(.corrupted, "item \(row.id): its thumbnail file lacks the grid size", remedy: .check(reason: nil), item: row.id.hex)
        }
        previewCache.set(gridKey, Self.encodeCached(grid))
        let preview = min(grid.width, grid.height) < need ? EncodedThumbnail(images, size: ThumbnailSize.preview.code) : nil
        if let preview { previewCache.set(previewKey, Self.encodeCached(preview)) }
        return fitting(grid, preview)
    }

    /// Writes a thumbnail to a new file (0600, atomically).
    public func exportThumbnail(_ ref: ItemRef, size: ThumbnailSize, toFile path: String, overwrite: Bool = false) throws {
        if !overwrite && FileManager.default.fileExists(atPath: path) {
            throw Nu11Error(.alreadyExists, "\(path) already exists", remedy: .otherOutputOrForce, item: path)
        }
        ProtectedFiles.removeAbandonedTemps(besideFile: path)
        let bytes = try thumbnail(ref, size: size).bytes
        try vault.commitStep("the thumbnail export to \(path)") { try ProtectedFiles.writeAtomically(bytes, to: path, plaintext: true) }
        vault.audit("thumbnail export", ref: ref, detail: size.rawValue)
    }

    /// Opens an item's sealed thumbnails (bound to its ID and key).
    func openThumbnails(_ row: ItemRow) throws -> [ThumbnailEnvelope.Image] {
        let path = location.thumbnailPath(row.id)
        guard ProtectedFiles.exists(path) else {
            throw Nu11Error(.notFound, "item \(row.id) has no thumbnail", remedy: .makeThumbnails, item: row.id.hex)
        }
        let key = try keyStore.itemKeyRecord(row.id, domain: row.domain).open(domainKey: domainKey(row.domain))
        vault.thumbnailFilesOpened += 1
        do {
            let sealed = try ProtectedFiles.read(path, limit: ThumbnailEnvelope.maxBytes + 4096)
            return try ThumbnailEnvelope.open(sealed, expected: N11Header(kind: row.kind, domain: row.domain, itemID: row.id),
                                              itemKey: key)
        } catch let error as Nu11Error {
            throw error.code == .io ? error : error.about("item \(row.id.hex)'s thumbnail")
        }
    }

    /// Makes the thumbnails (and image facts) of visible photos that have none: items
    /// imported before thumbnails existed. Each is decrypted into memory once.
    public func makeMissingThumbnails(progress: (Int, Int) throws -> Void = { _, _ in }) throws -> ThumbnailBackfill {
        try makeMissingThumbnails(rows: visibleRows(kind: .file, album: .none, afterSeq: 0, limit: Int.max), progress: progress)
    }

    func makeMissingThumbnails(rows: [ItemRow], progress: (Int, Int) throws -> Void = { _, _ in }) throws -> ThumbnailBackfill {
        var result = ThumbnailBackfill()
        let rows = rows.filter { $0.kind == .file }
        for (n, row) in rows.enumerated() {
            try progress(n, rows.count)
            result.checked += 1
            let key = try metadataKey(row.domain)
            var meta = try ItemMetadata.open(row, key: key)
            if meta.thumbnail == true && ProtectedFiles.exists(location.thumbnailPath(row.id)) { continue }
            guard meta.size <= UInt64(PhotoCapture.maxBytes),
                  case let head = try vault.items.read(row, offset: 0, count: 16),
                  ImageFormat.sniff(head) != nil || VideoFormat.sniff(head) != nil else { continue }
            let capture = PhotoCapture(name: meta.name)
            var sink = CaptureSink(capture: capture)
            let (fd, itemKey) = try vault.items.openItem(row)
            defer { close(fd) }
            try N11Envelope.open(from: FileDescriptorStream(fd: fd, label: row.id.hex), to: &sink,
                                 expected: N11Header(kind: row.kind, domain: row.domain, itemID: row.id), itemKey: itemKey)
            let (facts, warning) = capture.analyze(turns: meta.turns)
            if let warning { notice(warning) }
            guard let facts, let pair = facts.thumbnails else {
                result.failed += 1
                continue
            }
            let writer = try stageThumbnails(pair, header: N11Header(kind: row.kind, domain: row.domain, itemID: row.id),
                                              itemKey: itemKey, durability: .immediate)
            try writer.publish()
            meta.apply(facts)
            var updated = row
            updated.meta = try meta.seal(id: row.id, album: row.album, key: key)
            try index.updateItem(updated)
            afterCommit("updating item \(row.id)'s metadata file") { try rewriteSidecar(row: updated, meta: meta, itemKey: itemKey) }
            forgetCached(row.id)
            result.made += 1
        }
        try progress(rows.count, rows.count)
        return result
    }

    private static func encodeCached(_ t: EncodedThumbnail) -> [UInt8] {
        [t.encoding.rawValue, UInt8(t.width >> 8), UInt8(t.width & 0xFF), UInt8(t.height >> 8), UInt8(t.height & 0xFF)] + t.bytes
    }

    private static func decodeCached(_ b: [UInt8]) -> EncodedThumbnail? {
        guard b.count > 5, let encoding = EncodedThumbnail.Encoding(rawValue: b[0]) else { return nil }
        return EncodedThumbnail(encoding: encoding, width: Int(b[1]) << 8 | Int(b[2]), height: Int(b[3]) << 8 | Int(b[4]),
                                bytes: Array(b[5...]))
    }
}

/// Feeds decrypted content to a `PhotoCapture` (thumbnail backfill).
struct CaptureSink: ByteSink {
    let capture: PhotoCapture
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws { capture.take(bytes) }
}
