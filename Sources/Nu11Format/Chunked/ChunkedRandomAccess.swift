// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// Random access to a chunked ciphertext: reads a byte range by decrypting only the chunks
/// it touches.
///
/// Opening checks the commitment and then authenticates the message length by decrypting
/// the final chunk — before anything is computed relative to the end, as the spec asks.
/// A range that touches a forged chunk fails; other ranges still read.
public final class ChunkedRandomAccessReader<AEAD: ChunkAEAD, Source: RandomAccessSource> {
    private let source: Source
    private let keys: MessageKeys<AEAD>
    private let bodyOffset: UInt64
    private let fullChunkCount: UInt64
    /// The authenticated plaintext length.
    public let plaintextLength: UInt64
    private var finalPlaintext: [UInt8]

    public convenience init(source: Source, key: SecretBytes, context: [UInt8]) throws {
        var header = [UInt8](repeating: 0, count: ChunkedScheme.headerByteCount)
        let total = try source.size
        guard total >= UInt64(ChunkedScheme.headerByteCount) else {
            throw ChunkedScheme.shortHeader()
        }
        _ = try header.withUnsafeMutableBytes { try source.read(at: 0, into: $0) }
        let keys = try MessageKeys<AEAD>(header: header, inputKey: key, context: context)
        try self.init(source: source, keys: keys, bodyOffset: UInt64(ChunkedScheme.headerByteCount))
    }

    /// Raw mode, for the published vectors.
    convenience init(rawSource: Source, aeadKey: [UInt8], baseNonce: [UInt8]) throws {
        try self.init(source: rawSource, keys: MessageKeys<AEAD>(rawKey: aeadKey, baseNonce: baseNonce), bodyOffset: 0)
    }

    private init(source: Source, keys: MessageKeys<AEAD>, bodyOffset: UInt64) throws {
        self.source = source
        self.keys = keys
        self.bodyOffset = bodyOffset
        let total = try source.size
        let body = total - bodyOffset
        let encryptedChunk = UInt64(ChunkedScheme.encryptedChunkSize(AEAD.self))
        let full = body / encryptedChunk
        let remainder = body % encryptedChunk
        // Exactly k full chunks means the short final chunk is missing.
        guard remainder != 0 else {
            throw ChunkedScheme.noFinalChunk()
        }
        guard remainder >= UInt64(AEAD.tagByteCount) else {
            throw ChunkedScheme.endsInsideTag()
        }
        guard full < ChunkedScheme.maxChunks else {
            throw ChunkedScheme.tooManyChunks()
        }
        fullChunkCount = full
        plaintextLength = full * UInt64(ChunkedScheme.chunkSize) + remainder - UInt64(AEAD.tagByteCount)
        var final = [UInt8]()
        try Self.decryptChunk(source: source, keys: keys, bodyOffset: bodyOffset, index: full,
                              encryptedLength: Int(remainder), into: &final)
        finalPlaintext = final
    }

    deinit {
        secureZero(&finalPlaintext)
    }

    /// Up to `count` bytes starting at plaintext `offset`. A range reaching past the end
    /// is cut at the end; an offset past the end is an error.
    public func read(offset: UInt64, count: Int) throws -> [UInt8] {
        guard count >= 0 else { throw Nu11Error(.invalidArgument, "negative read length") }
        guard offset <= plaintextLength else {
            throw Nu11Error(.invalidArgument, "offset \(offset) is past the end (\(plaintextLength) bytes)")
        }
        let end = min(plaintextLength, offset + UInt64(count))
        var result = [UInt8]()
        result.reserveCapacity(Int(end - offset))
        var position = offset
        var chunk = [UInt8]()
        defer { secureZero(&chunk) }
        let size = UInt64(ChunkedScheme.chunkSize)
        while position < end {
            let index = position / size
            let within = Int(position % size)
            chunk.removeAll(keepingCapacity: true)
            if index == fullChunkCount {
                chunk.append(contentsOf: finalPlaintext)
            } else {
                try Self.decryptChunk(source: source, keys: keys, bodyOffset: bodyOffset, index: index,
                                      encryptedLength: ChunkedScheme.encryptedChunkSize(AEAD.self), into: &chunk)
            }
            let take = min(chunk.count - within, Int(end - position))
            result.append(contentsOf: chunk[within..<(within + take)])
            position += UInt64(take)
        }
        return result
    }

    private static func decryptChunk(source: Source, keys: MessageKeys<AEAD>, bodyOffset: UInt64, index: UInt64,
                                     encryptedLength: Int, into output: inout [UInt8]) throws {
        var sealed = [UInt8](repeating: 0, count: encryptedLength)
        let offset = bodyOffset + index * UInt64(ChunkedScheme.encryptedChunkSize(AEAD.self))
        let n = try sealed.withUnsafeMutableBytes { try source.read(at: offset, into: $0) }
        guard n == encryptedLength else {
            throw Nu11Error(.truncated, "chunk \(index) is cut short", remedy: .advice(.changedWhileReading))
        }
        do {
            try sealed.withUnsafeBytes { raw in
                try keys.open(raw, index: index, appendingTo: &output)
            }
        } catch {
            throw ChunkedScheme.chunkFailed(index)
        }
    }
}
