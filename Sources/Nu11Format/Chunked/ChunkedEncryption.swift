// SPDX-License-Identifier: GPL-3.0-or-later
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

    /// The chunk sequence through the pipeline (reader, sealers on every core, writer).
    private static func encryptBody(from source: inout some ByteSource, to sink: inout some ByteSink,
                                    keys: MessageKeys<AEAD>) throws -> UInt64 {
        try ChunkPipeline.run(.seal, AEAD.self, keys: keys, from: &source, to: &sink)
    }
}
