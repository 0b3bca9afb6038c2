import Crypto
import Foundation

/// Pull-style streaming encryption: each call to `next()` returns the next piece of
/// ciphertext (the 56-byte header first, then one sealed chunk at a time), or nil at the
/// end. For writers that ask for bytes (a ZIP entry provider) instead of accepting them.
public final class ChunkedStreamEncryptor<AEAD: ChunkAEAD, Source: ByteSource> {
    private var source: Source
    private let keys: MessageKeys<AEAD>
    private var header: [UInt8]?
    private var index: UInt64 = 0
    private var done = false
    private var plain = [UInt8](repeating: 0, count: ChunkedScheme.chunkSize)

    public init(source: Source, key: SecretBytes, context: [UInt8]) throws {
        let salt = SecureRandom.bytes(ChunkedScheme.saltByteCount)
        self.source = source
        keys = try MessageKeys<AEAD>(inputKey: key, salt: salt, context: context)
        header = salt + keys.commitment
    }

    deinit { secureZero(&plain) }

    public func next() throws -> [UInt8]? {
        if let h = header {
            header = nil
            return h
        }
        if done { return nil }
        let n = try plain.withUnsafeMutableBytes { try source.readFully(into: $0) }
        guard index < ChunkedScheme.maxChunks else { throw Nu11Error(.invalidArgument, "message exceeds 2^38 chunks") }
        var sealed = [UInt8]()
        sealed.reserveCapacity(n + AEAD.tagByteCount)
        try plain.withUnsafeBytes { buffer in
            try AEAD.seal(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), key: keys.key, nonce: keys.nonce(index),
                          appendingTo: &sealed)
        }
        index += 1
        if n < ChunkedScheme.chunkSize { done = true }
        return sealed
    }
}

/// Serves sequential `(position, size)` requests from a producer of byte pieces.
public final class PullBuffer {
    private let produce: () throws -> [UInt8]?
    private var pending: [UInt8] = []
    private var offset = 0
    private var served: Int64 = 0

    public init(_ produce: @escaping () throws -> [UInt8]?) { self.produce = produce }

    /// The next `size` bytes (fewer only at the end). Requests must be sequential.
    public func read(position: Int64, size: Int) throws -> [UInt8] {
        guard position == served else { throw Nu11Error(.internalError, "non-sequential archive write") }
        var out = [UInt8]()
        out.reserveCapacity(size)
        while out.count < size {
            if offset == pending.count {
                guard let piece = try produce() else { break }
                pending = piece
                offset = 0
                continue
            }
            let take = min(size - out.count, pending.count - offset)
            out.append(contentsOf: pending[offset..<(offset + take)])
            offset += take
        }
        served += Int64(out.count)
        return out
    }
}
