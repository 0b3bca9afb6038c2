import Crypto
import Foundation

/// Streaming encryption: reader → writer, one 16 KiB chunk in memory at a time.
public enum ChunkedEncryption<AEAD: ChunkAEAD> {
    /// Encrypts everything `source` yields into `sink` under a fresh random salt.
    /// Returns the plaintext length.
    @discardableResult
    public static func encrypt(from source: inout some ByteSource, to sink: inout some ByteSink,
                               key: SecretBytes, context: [UInt8]) throws -> UInt64 {
        try encrypt(from: &source, to: &sink, key: key, context: context,
                    salt: SecureRandom.bytes(ChunkedScheme.saltByteCount))
    }

    /// Encrypts a message held in memory.
    public static func seal(_ plaintext: [UInt8], key: SecretBytes, context: [UInt8]) throws -> [UInt8] {
        var source = MemorySource(plaintext)
        var sink = MemorySink()
        try encrypt(from: &source, to: &sink, key: key, context: context)
        return sink.bytes
    }

    /// With an injected salt: only for deterministic tests against published vectors.
    static func encrypt(from source: inout some ByteSource, to sink: inout some ByteSink,
                        key: SecretBytes, context: [UInt8], salt: [UInt8]) throws -> UInt64 {
        guard salt.count == ChunkedScheme.saltByteCount else {
            throw Nu11Error(.invalidArgument, "salt must be \(ChunkedScheme.saltByteCount) bytes")
        }
        let keys = try MessageKeys<AEAD>(inputKey: key, salt: salt, context: context)
        try sink.write(salt + keys.commitment)
        return try encryptBody(from: &source, to: &sink, keys: keys)
    }

    /// Raw mode: the chunk sequence alone, under a given AEAD key and base nonce.
    static func encryptRaw(_ plaintext: [UInt8], aeadKey: [UInt8], baseNonce: [UInt8]) throws -> [UInt8] {
        var source = MemorySource(plaintext)
        var sink = MemorySink()
        _ = try encryptBody(from: &source, to: &sink, keys: MessageKeys<AEAD>(rawKey: aeadKey, baseNonce: baseNonce))
        return sink.bytes
    }

    /// Chunks per batch: 64 × 16 KiB are read at once and sealed on all cores (chunks are
    /// independent: each has its own nonce), then written with one call.
    static var batchChunks: Int { 64 }

    private static func encryptBody(from source: inout some ByteSource, to sink: inout some ByteSink,
                                    keys: MessageKeys<AEAD>) throws -> UInt64 {
        let chunk = ChunkedScheme.chunkSize
        let sealedChunk = chunk + AEAD.tagByteCount
        var plain = [UInt8](repeating: 0, count: batchChunks * chunk)
        defer { secureZero(&plain) }
        var sealed = [UInt8](repeating: 0, count: batchChunks * sealedChunk + AEAD.tagByteCount)
        var index: UInt64 = 0
        var total: UInt64 = 0
        while true {
            let n = try plain.withUnsafeMutableBytes { try source.readFully(into: $0) }
            let full = n / chunk
            // A short read means the end: the last chunk of this batch is the short (possibly
            // empty) final chunk. A full chunk is never final.
            let last = n < plain.count
            let count = full + (last ? 1 : 0)
            guard index + UInt64(count) <= ChunkedScheme.maxChunks else {
                throw Nu11Error(.invalidArgument, "message exceeds 2^38 chunks", remedy: "split the input into smaller items")
            }
            let outLength = n + count * AEAD.tagByteCount
            let failures = FailureFlag()
            plain.withUnsafeBytes { p in
                sealed.withUnsafeMutableBytes { o in
                    let pBase = SendableRawPointer(p), oBase = SendableMutableRawPointer(o)
                    let base = index
                    DispatchQueue.concurrentPerform(iterations: count) { j in
                        let length = j < full ? chunk : n - full * chunk
                        let input = UnsafeRawBufferPointer(rebasing: pBase.buffer[(j * chunk)..<(j * chunk + length)])
                        let output = UnsafeMutableRawBufferPointer(
                            rebasing: oBase.buffer[(j * sealedChunk)..<(j * sealedChunk + length + AEAD.tagByteCount)])
                        do {
                            try AEAD.seal(input, key: keys.key, nonce: keys.nonce(base + UInt64(j)), into: output)
                        } catch {
                            failures.set()
                        }
                    }
                }
            }
            guard !failures.isSet else { throw Nu11Error(.internalError, "sealing a chunk failed") }
            try sealed.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[0..<outLength])) }
            total += UInt64(n)
            index += UInt64(count)
            if last { return total }
        }
    }
}

/// Raw buffers handed to the worker threads of one batch; each thread touches its own slice
/// only, and the batch completes before the buffers change again.
struct SendableRawPointer: @unchecked Sendable {
    let buffer: UnsafeRawBufferPointer
    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }
}

struct SendableMutableRawPointer: @unchecked Sendable {
    let buffer: UnsafeMutableRawBufferPointer
    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }
}

final class FailureFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
