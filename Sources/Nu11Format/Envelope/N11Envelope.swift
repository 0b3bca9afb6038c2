// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The 24-byte clear header of a `.n11` / `.n11note` file.
///
///     offset size field
///     0      4    magic "NU11"
///     4      1    format version (1)
///     5      1    kind: 1 file (.n11), 2 note (.n11note)
///     6      1    domain: 1 vault, 2 fade, 3 backup, 4 archive
///     7      1    flags, 0 (reserved; any other value is refused)
///     8      16   item ID
///
/// The whole header is the chunked-encryption context (after a label), so changing any
/// byte of it — kind, domain, ID — makes the key commitment fail.
public struct N11Header: Sendable, Equatable {
    public static let magic: [UInt8] = Array("NU11".utf8)
    public static let currentVersion: UInt8 = 1
    public static let byteCount = 24

    public var kind: ItemKind
    public var domain: Domain
    public var itemID: ItemID
    public var version: UInt8 = Self.currentVersion

    public init(kind: ItemKind, domain: Domain, itemID: ItemID) {
        self.kind = kind
        self.domain = domain
        self.itemID = itemID
    }

    public func encoded() -> [UInt8] {
        Self.magic + [version, kind.rawValue, domain.rawValue, 0] + itemID.bytes
    }

    /// Parses a header, refusing anything this version does not write.
    public static func parse(_ bytes: some Collection<UInt8>) throws -> N11Header {
        let b = Array(bytes.prefix(byteCount))
        guard b.count == byteCount else {
            throw Nu11Error(.truncated, "file is shorter than the \(byteCount)-byte .n11 header",
                            remedy: .advice(.truncated))
        }
        guard Array(b[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "not a Nu11VLT item (bad magic)", remedy: .advice(.damagedOrForeign))
        }
        guard b[4] == currentVersion else {
            throw Nu11Error(.unsupportedVersion,
                            "item format version \(b[4]) is not supported (this version of Nu11VLT reads version \(currentVersion))",
                            remedy: .upgrade)
        }
        guard let kind = ItemKind(rawValue: b[5]) else {
            throw Nu11Error(.corrupted, "unknown item kind \(b[5])", remedy: .advice(.damaged))
        }
        guard let domain = Domain(rawValue: b[6]) else {
            throw Nu11Error(.corrupted, "unknown domain \(b[6])", remedy: .advice(.damaged))
        }
        guard b[7] == 0 else {
            throw Nu11Error(.corrupted, "reserved header flags are set", remedy: .advice(.damaged))
        }
        var header = N11Header(kind: kind, domain: domain, itemID: try ItemID(bytes: Array(b[8..<24])))
        header.version = b[4]
        return header
    }

    /// The chunked-encryption context: a label, then the header bytes.
    public var context: [UInt8] { Array("nu11vlt.n11".utf8) + encoded() }
}

/// Sealing and opening `.n11` content: the header, then a ChaCha20-Poly1305 chunked stream
/// whose context is the header.
public enum N11Envelope {
    public typealias AEAD = ChaCha20Poly1305Chunks

    /// Writes header and encrypted content; returns the plaintext length.
    @discardableResult
    public static func seal(from source: inout some ByteSource, to sink: inout some ByteSink,
                            header: N11Header, itemKey: SecretBytes) throws -> UInt64 {
        try sink.write(header.encoded())
        return try ChunkedEncryption<AEAD>.encrypt(from: &source, to: &sink, key: itemKey, context: header.context)
    }

    /// The size of the envelope of `plaintext` bytes: the header, then the chunked message.
    public static func sealedSize(plaintext: UInt64) -> UInt64 {
        UInt64(N11Header.byteCount) + ChunkedScheme.ciphertextLength(AEAD.self, plaintextLength: plaintext)
    }

    /// Reads and checks the header of a stream against the identity the caller expects.
    public static func readHeader(from source: inout some ByteSource, expected: N11Header) throws {
        var bytes = [UInt8](repeating: 0, count: N11Header.byteCount)
        let n = try bytes.withUnsafeMutableBytes { try source.readFully(into: $0) }
        try check(N11Header.parse(bytes.prefix(n)), expected: expected)
    }

    /// The envelope's ciphertext body in the open file `fd`, its header read and checked
    /// first: what a caller decrypts with its own decryptor (re-encryption, archive export).
    public static func body(of fd: Int32, label: String, expected: N11Header) throws -> FileDescriptorStream {
        var stream = FileDescriptorStream(fd: fd, label: label)
        try readHeader(from: &stream, expected: expected)
        return stream
    }

    /// Streams the authenticated plaintext into `sink`. On failure `sink` holds at most the
    /// authenticated prefix; callers that need all-or-nothing write to a temp file first.
    @discardableResult
    public static func open(from source: some ByteSource, to sink: inout some ByteSink,
                            expected: N11Header, itemKey: SecretBytes) throws -> UInt64 {
        var source = source
        try readHeader(from: &source, expected: expected)
        return try ChunkedEncryption<AEAD>.decrypt(from: source, to: &sink, key: itemKey, context: expected.context)
    }

    /// The plaintext of the envelope in `fd` as a range any thread can read (`ChunkedRange`,
    /// which takes over the descriptor): the header checked, the final chunk and so the length
    /// authenticated before it is returned. Errors name `label`.
    public static func range(owning fd: Int32, expected: N11Header, itemKey: SecretBytes,
                             label: String) throws -> ChunkedRange<AEAD> {
        var bytes = [UInt8](repeating: 0, count: N11Header.byteCount)
        do {
            let n = try bytes.withUnsafeMutableBytes { try SystemIO.read(fd, at: 0, into: $0) }
            try check(N11Header.parse(bytes.prefix(n)), expected: expected)
        } catch let error as Nu11Error {
            close(fd)
            throw error.code == .io ? error : error.about(label)
        }
        return try ChunkedRange<AEAD>(owning: fd, offset: UInt64(N11Header.byteCount), key: itemKey,
                                      context: expected.context, label: label)
    }

    /// Random access to the plaintext of an envelope held by `source`.
    public static func randomAccess<S: RandomAccessSource>(
        _ source: S, expected: N11Header, itemKey: SecretBytes
    ) throws -> ChunkedRandomAccessReader<AEAD, OffsetSource<S>> {
        var bytes = [UInt8](repeating: 0, count: N11Header.byteCount)
        let n = try bytes.withUnsafeMutableBytes { try source.read(at: 0, into: $0) }
        try check(N11Header.parse(bytes.prefix(n)), expected: expected)
        return try ChunkedRandomAccessReader(source: OffsetSource(base: source, offset: UInt64(N11Header.byteCount)),
                                             key: itemKey, context: expected.context)
    }

    private static func check(_ found: N11Header, expected: N11Header) throws {
        guard found.itemID == expected.itemID else {
            throw Nu11Error(.corrupted, "file holds item \(found.itemID), not \(expected.itemID)",
                            remedy: .check(reason: "files were swapped or renamed"))
        }
        guard found == expected else {
            throw Nu11Error(.corrupted, "header says \(found.domain)/\(found.kind), expected \(expected.domain)/\(expected.kind)",
                            remedy: .check(reason: "the file was moved or altered"))
        }
    }
}

/// A view of a random-access source that starts at `offset`.
public struct OffsetSource<Base: RandomAccessSource>: RandomAccessSource {
    public let base: Base
    public let offset: UInt64

    public var size: UInt64 {
        get throws {
            let total = try base.size
            return total > offset ? total - offset : 0
        }
    }

    public func read(at position: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try base.read(at: position + offset, into: buffer)
    }
}
