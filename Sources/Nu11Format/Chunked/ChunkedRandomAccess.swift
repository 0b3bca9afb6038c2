// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// Random access to a chunked ciphertext: reads a byte range by decrypting only the chunks
/// it touches.
///
/// Opening checks the commitment and then authenticates the message length by decrypting
/// the final chunk — before anything is computed relative to the end, as the spec asks.
/// A range that touches a forged chunk fails; other ranges still read.
///
/// Plaintext is held in fixed buffers, never grown: the final chunk (kept from the opening,
/// zeroed when the reader is freed) and each read's chunk scratch (zeroed whole at the end of
/// the read) (`PlainScratch`). The range read is the caller's.
public final class ChunkedRandomAccessReader<AEAD: ChunkAEAD, Source: RandomAccessSource> {
    private let source: Source
    private let keys: MessageKeys<AEAD>
    private let bodyOffset: UInt64
    private let fullChunkCount: UInt64
    /// The authenticated plaintext length.
    public let plaintextLength: UInt64
    let finalPlaintext: PlainScratch
    /// A test seam: passed to every plaintext buffer of this reader (`PlainScratch.witness`).
    var plaintextWitness: ((String, String, UnsafeRawBufferPointer) -> Void)? {
        didSet { finalPlaintext.witness = plaintextWitness }
    }

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
        finalPlaintext = PlainScratch(capacity: ChunkedScheme.chunkSize, label: "ChunkedRandomAccessReader.finalPlaintext")
        try Self.decryptChunk(source: source, keys: keys, bodyOffset: bodyOffset, index: full,
                              encryptedLength: Int(remainder), into: finalPlaintext)
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
        let scratch = PlainScratch(capacity: ChunkedScheme.chunkSize, label: "ChunkedRandomAccessReader.scratch")
        scratch.witness = plaintextWitness
        defer { scratch.wipe("after a read") }
        let size = UInt64(ChunkedScheme.chunkSize)
        while position < end {
            let index = position / size
            let within = Int(position % size)
            let chunk: PlainScratch
            if index == fullChunkCount {
                chunk = finalPlaintext
            } else {
                try Self.decryptChunk(source: source, keys: keys, bodyOffset: bodyOffset, index: index,
                                      encryptedLength: ChunkedScheme.encryptedChunkSize(AEAD.self), into: scratch)
                chunk = scratch
            }
            let take = min(chunk.count - within, Int(end - position))
            result.append(contentsOf: chunk.used[within..<(within + take)])
            position += UInt64(take)
        }
        return result
    }

    private static func decryptChunk(source: Source, keys: MessageKeys<AEAD>, bodyOffset: UInt64, index: UInt64,
                                     encryptedLength: Int, into output: PlainScratch) throws {
        var sealed = [UInt8](repeating: 0, count: encryptedLength)
        let offset = bodyOffset + index * UInt64(ChunkedScheme.encryptedChunkSize(AEAD.self))
        let n = try sealed.withUnsafeMutableBytes { try source.read(at: offset, into: $0) }
        guard n == encryptedLength else {
            throw Nu11Error(.truncated, "chunk \(index) is cut short", remedy: .advice(.changedWhileReading))
        }
        output.wipe("before a chunk")
        guard encryptedLength >= AEAD.tagByteCount, encryptedLength - AEAD.tagByteCount <= output.bytes.count else {
            throw ChunkedScheme.chunkFailed(index)
        }
        do {
            try sealed.withUnsafeBytes { raw in
                try keys.open(raw, index: index, into: UnsafeMutableRawBufferPointer(rebasing: output.bytes[0..<(encryptedLength - AEAD.tagByteCount)]))
            }
        } catch {
            output.wipe("after a failed chunk")
            throw ChunkedScheme.chunkFailed(index)
        }
        output.count = encryptedLength - AEAD.tagByteCount
    }
}
