// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A photo's sealed thumbnails (`Thumbnails/<ID>.n11thumb`, docs/FORMAT.md §3.4): the
/// item's own 24-byte header, then a chunked stream under the item's own key whose context
/// is a different label ("nu11vlt.n11thumb") plus that header. So a thumbnail opens only
/// for its item (the ID is in the context), is never mistaken for the item's content, and
/// is crypto-shredded with the item key.
///
/// Plaintext (all integers big-endian):
///
///     "N11T" | version 1 | count n (1 byte)
///     n × { size (1 grid, 2 preview) | encoding (1 JPEG, 2 WebP) | width u16 | height u16 | length u32 | bytes }
public enum ThumbnailEnvelope {
    public static let label = Array("nu11vlt.n11thumb".utf8)
    static let magic = Array("N11T".utf8)
    public static let maxBytes = 16 << 20

    public static func context(_ header: N11Header) -> [UInt8] { label + header.encoded() }

    public struct Image: Sendable, Equatable {
        public var size: UInt8
        public var encoding: UInt8
        public var width: Int
        public var height: Int
        public var bytes: [UInt8]

        public init(size: UInt8, encoding: UInt8, width: Int, height: Int, bytes: [UInt8]) {
            self.size = size
            self.encoding = encoding
            self.width = width
            self.height = height
            self.bytes = bytes
        }
    }

    public static func encode(_ images: [Image]) -> [UInt8] {
        var out = magic + [1, UInt8(images.count)]
        for image in images {
            out += [image.size, image.encoding]
            out += [UInt8(image.width >> 8 & 0xFF), UInt8(image.width & 0xFF), UInt8(image.height >> 8 & 0xFF), UInt8(image.height & 0xFF)]
            let n = UInt32(image.bytes.count)
            out += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            out += image.bytes
        }
        return out
    }

    public static func decode(_ plain: [UInt8]) throws -> [Image] {
        let bad = Nu11Error(.corrupted, "the thumbnail file is damaged", remedy: .check(reason: nil))
        guard plain.count >= 6, Array(plain[0..<4]) == magic else { throw bad }
        guard plain[4] == 1 else {
            throw Nu11Error(.unsupportedVersion, "thumbnail format version \(plain[4]) is not supported", remedy: .upgrade)
        }
        var images: [Image] = []
        var p = 6
        for _ in 0..<Int(plain[5]) {
            guard p + 10 <= plain.count else { throw bad }
            let w = Int(plain[p + 2]) << 8 | Int(plain[p + 3]), h = Int(plain[p + 4]) << 8 | Int(plain[p + 5])
            let n = Int(plain[p + 6]) << 24 | Int(plain[p + 7]) << 16 | Int(plain[p + 8]) << 8 | Int(plain[p + 9])
            guard p + 10 + n <= plain.count else { throw bad }
            images.append(Image(size: plain[p], encoding: plain[p + 1], width: w, height: h,
                                bytes: Array(plain[(p + 10)..<(p + 10 + n)])))
            p += 10 + n
        }
        guard p == plain.count else { throw bad }
        return images
    }

    /// The sealed file: header, then the encrypted bundle.
    public static func seal(_ images: [Image], header: N11Header, itemKey: SecretBytes) throws -> [UInt8] {
        var plain = encode(images)
        defer { secureZero(&plain) }
        var source = MemorySource(plain)
        var sink = MemorySink()
        try sink.write(header.encoded())
        try ChunkedEncryption<N11Envelope.AEAD>.encrypt(from: &source, to: &sink, key: itemKey, context: context(header))
        return sink.bytes
    }

    /// Opens a thumbnail file expected to belong to `expected`'s item.
    public static func open(_ sealed: [UInt8], expected: N11Header, itemKey: SecretBytes) throws -> [Image] {
        guard sealed.count <= maxBytes + 4096 else {
            throw Nu11Error(.corrupted, "the thumbnail file is too large", remedy: .check(reason: nil))
        }
        var source = MemorySource(sealed)
        try N11Envelope.readHeader(from: &source, expected: expected)
        var sink = MemorySink()
        try ChunkedEncryption<N11Envelope.AEAD>.decrypt(from: source, to: &sink, key: itemKey, context: context(expected))
        var plain = sink.bytes
        defer { secureZero(&plain) }
        return try decode(plain)
    }
}
