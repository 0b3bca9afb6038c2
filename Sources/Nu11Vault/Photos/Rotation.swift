// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Media
import Nu11Storage

extension Photos {
    /// Turns a photo by `quarterTurns` clockwise (negative: anticlockwise), on top of what it
    /// shows now; returns it as it now is (`rotation`: the quarter turns, 0...3, over its own
    /// orientation). The
    /// turn is kept in its sealed metadata (docs/FORMAT.md § 5.1, `"rotate"`); the stored bytes
    /// never change. Its thumbnails are made again, turned, by the image helper (the photo is
    /// decrypted into memory once); its displayed width and height follow. A JPEG's export
    /// carries the turn in its EXIF orientation (`Items.export`); other images export as stored.
    @discardableResult
    public func rotate(_ ref: ItemRef, quarterTurns: Int) throws -> ItemSummary {
        let row = try vault.items.row(ref)
        try vault.items.checkFade(row)
        let key = try metadataKey(row.domain)
        var meta = try ItemMetadata.open(row, key: key)
        guard row.kind == .file, meta.type.hasPrefix("image/") else {
            let what = row.kind == .note ? "a note" : meta.type.hasPrefix("video/") ? "a video" : "not a photo"
            throw Nu11Error(.invalidArgument, "item \(ref) (\(meta.name)) is \(what): only photos can be rotated",
                            remedy: .advice(.onlyPhotosRotate), item: ref.digits)
        }
        let turns = ((meta.turns + quarterTurns) % 4 + 4) % 4
        var facts: PhotoFacts?
        let (fd, itemKey) = try vault.items.openItem(row)
        defer { close(fd) }
        if meta.size <= UInt64(PhotoCapture.maxBytes) {
            let capture = PhotoCapture(name: meta.name)
            var sink = CaptureSink(capture: capture)
            try N11Envelope.open(from: FileDescriptorStream(fd: fd, label: row.id.hex), to: &sink,
                                 expected: N11Header(kind: row.kind, domain: row.domain, itemID: row.id), itemKey: itemKey)
            let analysis = capture.analyze(turns: turns)
            if let warning = analysis.warning { notice(warning) }
            facts = analysis.facts
        }
        if let facts, let pair = facts.thumbnails {
            let writer = try stageThumbnails(pair, header: N11Header(kind: row.kind, domain: row.domain, itemID: row.id),
                                              itemKey: itemKey, durability: .immediate)
            try writer.publish()
            meta.width = facts.width
            meta.height = facts.height
            meta.thumbnail = true
        } else if (turns - meta.turns) % 2 != 0, let width = meta.width, let height = meta.height {
            // Not decodable (or too large for a thumbnail): the turn is kept all the same.
            meta.width = height
            meta.height = width
        }
        meta.rotate = turns == 0 ? nil : turns
        var updated = row
        updated.meta = try meta.seal(id: row.id, album: row.album, key: key)
        try index.updateItem(updated)
        afterCommit("updating item \(row.id)'s metadata file") { try rewriteSidecar(row: updated, meta: meta, itemKey: itemKey) }
        forgetCached(row.id)
        audit("rotate", count: 1, items: [row.id], detail: "\(turns * 90)°")
        return vault.items.summary(row: updated, meta: meta, albumName: try row.album.flatMap { try vault.albums.albumNames()[$0] })
    }

    /// The bytes of an item as it exports them: a JPEG the user turned gets the turn in its
    /// EXIF orientation, losslessly (`JPEGOrientation`); anything else passes as stored.
    static func orientingSink<S: ByteSink>(_ inner: S, meta: ItemMetadata) -> OrientingSink<S> {
        OrientingSink(inner: inner, turns: exportTurns(meta), name: meta.name)
    }

    /// The quarter turns an export writes into the item's bytes: a JPEG's, else none.
    static func exportTurns(_ meta: ItemMetadata) -> Int { meta.type == "image/jpeg" ? meta.turns : 0 }
}

/// Holds a JPEG's header segments (up to its first SOS, at most 4 MiB) until they are all
/// there, writes them with the orientation turned, then passes the rest through. `finish`
/// must follow the last write. With no turn it passes everything through at once.
struct OrientingSink<Inner: ByteSink>: ByteSink {
    var inner: Inner
    let turns: Int
    let name: String
    private var head: [UInt8] = []
    private var done: Bool
    static var maxHeader: Int { 4 << 20 }

    init(inner: Inner, turns: Int, name: String) {
        self.inner = inner
        self.turns = turns
        self.name = name
        done = turns == 0
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        if done { return try inner.write(bytes) }
        if head.isEmpty { head.reserveCapacity(1 << 16) }
        head.append(contentsOf: bytes)
        let end: Int?
        do { end = try head.withUnsafeBytes { try JPEGOrientation.headerEnd($0) } } catch { throw refusal(error) }
        if let end { return try flush(headerEnd: end) }
        if head.count > Self.maxHeader {
            throw refusal(OrientationError(reason: "its JPEG header is larger than \(Self.maxHeader >> 20) MiB"))
        }
    }

    /// Writes what is held; a JPEG that ended before its image data cannot be turned.
    mutating func finish() throws {
        guard !done else { return }
        throw refusal(OrientationError(reason: "it ends before its image data"))
    }

    private mutating func flush(headerEnd end: Int) throws {
        done = true
        defer { secureZero(&head) }
        var turned: [UInt8]
        do { turned = try JPEGOrientation.turn(header: Array(head[..<end]), quarterTurns: turns) } catch { throw refusal(error) }
        defer { secureZero(&turned) }
        try turned.withUnsafeBytes { try inner.write($0) }
        try head[end...].withUnsafeBytes { try inner.write($0) }
    }

    private func refusal(_ error: any Error) -> Nu11Error {
        let reason = (error as? OrientationError)?.reason ?? "\(error)"
        return Nu11Error(.invalidArgument, "\(name): its rotation cannot be written into the export (\(reason))",
                  remedy: .advice(.rotateBackToExport))
    }
}
