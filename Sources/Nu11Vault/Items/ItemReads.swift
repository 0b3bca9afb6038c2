// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

extension Items {
    /// Reads `count` bytes at `offset` of an item's plaintext, decrypting only the chunks the
    /// range touches (the length is authenticated through the final chunk first). A range
    /// reaching past the end is cut at the end; an offset past the end is an error.
    public func read(_ ref: ItemRef, offset: UInt64, count: Int) throws -> [UInt8] {
        try read(row(ref), offset: offset, count: count)
    }

    func read(_ row: ItemRow, offset: UInt64, count: Int) throws -> [UInt8] {
        let (fd, key) = try openItem(row)
        defer { close(fd) }
        do {
            let reader = try N11Envelope.randomAccess(FileDescriptorStream(fd: fd, label: row.id.hex),
                                                      expected: N11Header(kind: row.kind, domain: row.domain, itemID: row.id),
                                                      itemKey: key)
            return try reader.read(offset: offset, count: count)
        } catch let error as Nu11Error {
            throw error.code == .io || error.code == .invalidArgument ? error : error.about("item \(row.id.hex)")
        }
    }

    /// The first `bytes` of an item (a preview), from the in-memory LRU cache when present.
    /// The cache is consulted only after the read-time checks (visibility, fade deadline),
    /// so a cached preview of an item that faded or was deleted is never served. Its size
    /// is the `preview.cache_mib` setting.
    public func preview(_ ref: ItemRef, bytes: Int = 256 << 10) throws -> [UInt8] {
        evictExpiredPreviews()
        let row = try row(ref)
        try checkFade(row)
        if let cached = previewCache.get(CachedPart(id: row.id, part: .head)), cached.count >= min(bytes, cached.count) {
            return Array(cached.prefix(bytes))
        }
        let head = try read(row, offset: 0, count: bytes)
        previewCache.set(CachedPart(id: row.id, part: .head), head)
        return head
    }
}
