import Foundation
import Nu11Format
import Nu11Storage

extension Vault {
    /// Reads `count` bytes at `offset` of an item's plaintext, decrypting only the chunks the
    /// range touches (the length is authenticated through the final chunk first). A range
    /// reaching past the end is cut at the end; an offset past the end is an error.
    public func read(_ idText: String, offset: UInt64, count: Int) throws -> [UInt8] {
        let row = try row(idText)
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
    /// The cache's size is the `preview.cache_mib` setting.
    public func preview(_ idText: String, bytes: Int = 256 << 10) throws -> [UInt8] {
        if let cached = previewCache.get(idText) { return cached }
        let head = try read(idText, offset: 0, count: bytes)
        previewCache.set(idText, head)
        return head
    }
}
