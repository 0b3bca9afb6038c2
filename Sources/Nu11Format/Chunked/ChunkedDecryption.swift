// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// Streaming decryption that never releases a byte it has not authenticated.
///
/// Each chunk is opened before any of its bytes are handed out; the commitment is checked
/// before the first chunk. An error is sticky: once a decryptor has failed, every later
/// call fails with the same error, so a caller that ignores one error cannot go on reading
/// past a forged chunk.
public final class ChunkedDecryptor<AEAD: ChunkAEAD, Source: ByteSource> {
    private var source: Source
    private let inputKey: SecretBytes
    private let context: [UInt8]
    private var keys: MessageKeys<AEAD>?
    private var index: UInt64 = 0
    private var finished = false
    private var failure: Nu11Error?
    private var buffer: [UInt8]
    /// Plaintext bytes released so far.
    public private(set) var plaintextLength: UInt64 = 0

    public init(source: Source, key: SecretBytes, context: [UInt8]) throws {
        try ChunkedScheme.checkKey(key, AEAD.self)
        self.source = source
        self.inputKey = key
        self.context = context
        self.buffer = [UInt8](repeating: 0, count: ChunkedScheme.chunkSize + AEAD.tagByteCount)
    }

    /// Raw mode (no header, given AEAD key and base nonce), for the published vectors.
    init(rawSource: Source, aeadKey: [UInt8], baseNonce: [UInt8]) {
        self.source = rawSource
        self.inputKey = SecretBytes(randomCount: AEAD.keyByteCount)
        self.context = []
        self.keys = MessageKeys<AEAD>(rawKey: aeadKey, baseNonce: baseNonce)
        self.buffer = [UInt8](repeating: 0, count: ChunkedScheme.chunkSize + AEAD.tagByteCount)
    }

    /// The next authenticated chunk of plaintext appended to `output`; false once the
    /// message has ended (after its short final chunk was authenticated).
    public func nextChunk(appendingTo output: inout [UInt8]) throws -> Bool {
        if let failure { throw failure }
        if finished { return false }
        do {
            return try step(&output)
        } catch let error as Nu11Error {
            failure = error
            throw error
        } catch {
            let wrapped = Nu11Error(.corrupted, "ciphertext failed authentication",
                                    remedy: .advice(.damaged))
            failure = wrapped
            throw wrapped
        }
    }

    /// Decrypts the rest of the message into `sink`; returns the plaintext length.
    @discardableResult
    public func decryptAll(to sink: inout some ByteSink) throws -> UInt64 {
        // Authenticated chunks are gathered into about 1 MiB per write; on an error, what
        // was gathered (all authenticated) is written before the error is passed on.
        let flushAt = 64 * ChunkedScheme.chunkSize
        var chunk = [UInt8]()
        chunk.reserveCapacity(flushAt + ChunkedScheme.chunkSize)
        defer { secureZero(&chunk) }
        while true {
            let more: Bool
            do {
                more = try nextChunk(appendingTo: &chunk)
            } catch {
                if !chunk.isEmpty { try sink.write(chunk) }
                throw error
            }
            if !more || chunk.count >= flushAt {
                if !chunk.isEmpty { try sink.write(chunk) }
                secureZero(&chunk)
                chunk.removeAll(keepingCapacity: true)
            }
            if !more { return plaintextLength }
        }
    }

    private func step(_ output: inout [UInt8]) throws -> Bool {
        let keys = try messageKeys()
        guard index < ChunkedScheme.maxChunks else {
            throw ChunkedScheme.tooManyChunks()
        }
        let n = try buffer.withUnsafeMutableBytes { try source.readFully(into: $0) }
        if n == 0 {
            throw ChunkedScheme.noFinalChunk()
        }
        if n < AEAD.tagByteCount {
            throw ChunkedScheme.endsInsideTag()
        }
        let before = output.count
        do {
            try buffer.withUnsafeBytes { raw in
                try keys.open(UnsafeRawBufferPointer(rebasing: raw[0..<n]), index: index, appendingTo: &output)
            }
        } catch {
            output.removeSubrange(before...)
            throw ChunkedScheme.chunkFailed(index)
        }
        plaintextLength += UInt64(output.count - before)
        index += 1
        if n < buffer.count { finished = true }
        return true
    }

    private func messageKeys() throws -> MessageKeys<AEAD> {
        if let keys { return keys }
        let derived = try MessageKeys<AEAD>(reading: &source, inputKey: inputKey, context: context)
        keys = derived
        return derived
    }
}

extension MessageKeys {
    /// Reads the 56-byte header (salt ‖ commitment) and derives the keys, refusing a header
    /// whose commitment does not match.
    init(reading source: inout some ByteSource, inputKey: SecretBytes, context: [UInt8]) throws {
        var header = [UInt8](repeating: 0, count: ChunkedScheme.headerByteCount)
        let n = try header.withUnsafeMutableBytes { try source.readFully(into: $0) }
        guard n == ChunkedScheme.headerByteCount else {
            throw ChunkedScheme.shortHeader()
        }
        self = try MessageKeys<AEAD>(header: header, inputKey: inputKey, context: context)
    }
}

extension ChunkedEncryption {
    /// Decrypts `source` into `sink`. On error, `sink` holds at most the authenticated
    /// prefix, never a byte beyond it.
    @discardableResult
    public static func decrypt(from source: some ByteSource, to sink: inout some ByteSink,
                               key: SecretBytes, context: [UInt8]) throws -> UInt64 {
        try ChunkedScheme.checkKey(key, AEAD.self)
        var source = source
        let keys = try MessageKeys<AEAD>(reading: &source, inputKey: key, context: context)
        return try ChunkPipeline.run(.open, AEAD.self, keys: keys, from: &source, to: &sink)
    }

    /// Decrypts a message held in memory; all or nothing.
    public static func open(_ ciphertext: [UInt8], key: SecretBytes, context: [UInt8]) throws -> [UInt8] {
        var sink = MemorySink()
        try decrypt(from: MemorySource(ciphertext), to: &sink, key: key, context: context)
        return sink.bytes
    }
}
