// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// Pull-style streaming encryption: each call to `next()` returns the next piece of
/// ciphertext (the 56-byte header first, then about 1 MiB of sealed chunks at a time), or
/// nil at the end. For writers that ask for bytes (a ZIP entry provider) instead of
/// accepting them. The source is read by the pipeline's reader thread and sealed on the
/// other cores while the caller writes the previous piece.
public final class ChunkedStreamEncryptor<AEAD: ChunkAEAD, Source: ByteSource> {
    private var header: [UInt8]?
    private let pipeline: ChunkPipeline
    private var done = false

    public init(source: Source, key: SecretBytes, context: [UInt8]) throws {
        let salt = SecureRandom.bytes(ChunkedScheme.saltByteCount)
        let keys = try MessageKeys<AEAD>(inputKey: key, salt: salt, context: context)
        header = salt + keys.commitment
        pipeline = ChunkPipeline(direction: .seal, algorithm: AEAD.algorithm, key: keys.key, baseNonce: keys.baseNonce,
                                 input: .stream(SourceBox(source)))
    }

    deinit { pipeline.close() }

    public func next() throws -> [UInt8]? {
        if let h = header {
            header = nil
            return h
        }
        if done { return nil }
        var piece: [UInt8] = []
        done = try !pipeline.next { piece = Array($0) }
        return piece
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
