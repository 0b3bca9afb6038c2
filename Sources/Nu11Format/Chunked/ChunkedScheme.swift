// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// c2sp.org/chunked-encryption ("Cobblestone" when instantiated with AES-256-GCM), generic
/// over the AEAD. Layout: `salt(24) || commitment(32) || chunk_0 || ... || chunk_n`.
///
/// Why this design and not a home-made one: the key commitment stops an attacker from
/// crafting a ciphertext that opens under two keys; the always-short final chunk makes
/// truncation at a chunk boundary detectable; the counter in the nonce makes reordering,
/// dropping or duplicating chunks fail; the context binds a ciphertext to its identity
/// (for `.n11`: format, domain and item ID), so a file swapped for another fails to open.
public enum ChunkedScheme {
    public static let saltByteCount = 24
    public static let commitmentByteCount = 32
    public static let headerByteCount = saltByteCount + commitmentByteCount
    public static let chunkSize = 16384
    /// At most 2^38 chunks per message.
    public static let maxChunks: UInt64 = 1 << 38

    static func info<AEAD: ChunkAEAD>(_: AEAD.Type, salt: [UInt8], context: [UInt8]) -> [UInt8] {
        Array("c2sp.org/chunked-encryption@v1+".utf8) + Array(AEAD.aeadName.utf8) + [0] + salt + context
    }

    /// The encrypted size of `chunk k` when it is a full chunk.
    static func encryptedChunkSize<AEAD: ChunkAEAD>(_: AEAD.Type) -> Int { chunkSize + AEAD.tagByteCount }

    /// The ciphertext length of a message of `plaintextLength` bytes.
    public static func ciphertextLength<AEAD: ChunkAEAD>(_: AEAD.Type, plaintextLength: UInt64) -> UInt64 {
        let chunks = plaintextLength / UInt64(chunkSize) + 1
        return UInt64(headerByteCount) + plaintextLength + chunks * UInt64(AEAD.tagByteCount)
    }

    /// Checks the input key is exactly the AEAD's key length.
    static func checkKey<AEAD: ChunkAEAD>(_ key: SecretBytes, _: AEAD.Type) throws {
        guard key.count == AEAD.keyByteCount else {
            throw Nu11Error(.invalidArgument,
                            "chunked encryption key must be \(AEAD.keyByteCount) bytes, not \(key.count)")
        }
    }
}

/// The per-message key, base nonce and commitment that HKDF-Expand derives.
struct MessageKeys<AEAD: ChunkAEAD> {
    let key: SymmetricKey
    let baseNonce: [UInt8]
    let commitment: [UInt8]
    /// One cipher context for the message, made at first use (one thread at a time; the
    /// pipeline's workers make their own).
    private var cache = CipherCache()

    /// Seals chunk `index` of the message, appending ciphertext ‖ tag.
    func seal(_ plaintext: UnsafeRawBufferPointer, index: UInt64, appendingTo output: inout [UInt8]) throws {
        try ChunkedScheme.append(plaintext.count + AEAD.tagByteCount, to: &output) { out in
            try cache.cipher(AEAD.algorithm, key).seal(plaintext, nonce: nonce(index), into: out)
        }
    }

    /// Opens chunk `index` (ciphertext ‖ tag), appending the plaintext, or throws and
    /// appends nothing.
    func open(_ ciphertext: UnsafeRawBufferPointer, index: UInt64, appendingTo output: inout [UInt8]) throws {
        guard ciphertext.count >= AEAD.tagByteCount else { throw ChunkedScheme.shortChunk() }
        try ChunkedScheme.append(ciphertext.count - AEAD.tagByteCount, to: &output) { out in
            try cache.cipher(AEAD.algorithm, key).open(ciphertext, nonce: nonce(index), into: out)
        }
    }

    /// Opens chunk `index` into exactly `ciphertext.count - tag` bytes of `output`, or throws.
    func open(_ ciphertext: UnsafeRawBufferPointer, index: UInt64, into output: UnsafeMutableRawBufferPointer) throws {
        guard ciphertext.count >= AEAD.tagByteCount, output.count == ciphertext.count - AEAD.tagByteCount else { throw ChunkedScheme.shortChunk() }
        try cache.cipher(AEAD.algorithm, key).open(ciphertext, nonce: nonce(index), into: output)
    }

    /// The keys of a message from its 56-byte header (salt ‖ commitment), refusing a header
    /// whose commitment does not match: the one check every reader makes.
    init(header: some Collection<UInt8>, inputKey: SecretBytes, context: [UInt8]) throws {
        guard header.count == ChunkedScheme.headerByteCount else { throw ChunkedScheme.shortHeader() }
        let bytes = Array(header)
        let derived = try MessageKeys<AEAD>(inputKey: inputKey, salt: Array(bytes[0..<ChunkedScheme.saltByteCount]), context: context)
        guard derived.commitmentMatches(bytes[ChunkedScheme.saltByteCount...]) else { throw ChunkedScheme.commitmentMismatch() }
        self = derived
    }

    init(inputKey: SecretBytes, salt: [UInt8], context: [UInt8]) throws {
        try ChunkedScheme.checkKey(inputKey, AEAD.self)
        let info = ChunkedScheme.info(AEAD.self, salt: salt, context: context)
        let okm = try AEAD.expand(prk: inputKey, info: info,
                              count: AEAD.keyByteCount + AEAD.nonceByteCount + ChunkedScheme.commitmentByteCount)
        (key, baseNonce, commitment) = okm.withUnsafeBytes { bytes in
            let k = SymmetricKey(data: UnsafeRawBufferPointer(rebasing: bytes[0..<AEAD.keyByteCount]))
            let n = Array(bytes[AEAD.keyByteCount..<(AEAD.keyByteCount + AEAD.nonceByteCount)])
            let c = Array(bytes[(AEAD.keyByteCount + AEAD.nonceByteCount)...])
            return (k, n, c)
        }
    }

    /// Raw mode (the Wycheproof `aeadKey`/`baseNonce` fields): no derivation, no commitment.
    init(rawKey: [UInt8], baseNonce: [UInt8]) {
        key = SymmetricKey(data: rawKey)
        self.baseNonce = baseNonce
        commitment = []
    }

    /// nonce_i = base_nonce XOR i, i big-endian and as wide as the nonce.
    func nonce(_ index: UInt64) -> [UInt8] {
        var n = baseNonce
        var i = index
        var position = n.count - 1
        while i != 0 && position >= 0 {
            n[position] ^= UInt8(truncatingIfNeeded: i)
            i >>= 8
            position -= 1
        }
        return n
    }

    func commitmentMatches(_ candidate: ArraySlice<UInt8>) -> Bool {
        guard candidate.count == commitment.count else { return false }
        return commitment.withUnsafeBytes { a in
            Array(candidate).withUnsafeBytes { b in Sodium.constantTimeEqual(a, b) }
        }
    }
}

/// Holds a message's cipher context once made.
final class CipherCache {
    private var made: ChunkCipher?
    func cipher(_ algorithm: ChunkAlgorithm, _ key: SymmetricKey) throws -> ChunkCipher {
        if let made { return made }
        let cipher = try ChunkCipher(algorithm: algorithm, key: key)
        made = cipher
        return cipher
    }
}
