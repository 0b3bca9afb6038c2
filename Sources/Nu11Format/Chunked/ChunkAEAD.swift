// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// The chunk ciphers, by name only: no backend's constant crosses the public API.
public enum ChunkAlgorithm: Sendable, CaseIterable {
    case chacha20Poly1305
    case aes256GCM
}

/// An AEAD that c2sp.org/chunked-encryption can be instantiated with.
///
/// The chunked scheme needs only: a name from the IANA AEAD registry (it enters the HKDF
/// info), key/nonce/tag sizes, the HKDF hash, and seal/open of one chunk with empty
/// associated data. Nonces are computed by the scheme, never chosen by a caller.
public protocol ChunkAEAD: Sendable {
    static var aeadName: String { get }
    static var keyByteCount: Int { get }
    static var nonceByteCount: Int { get }
    static var tagByteCount: Int { get }
    /// Which cipher; the backend (OpenSSL's EVP, behind `ChunkCipher`) maps it to its own.
    static var algorithm: ChunkAlgorithm { get }
    /// HKDF-Expand(prk, info, count) with this instantiation's hash.
    static func expand(prk: SecretBytes, info: [UInt8], count: Int) throws -> SymmetricKey
    /// Appends ciphertext || tag of `plaintext` to `output`.
    static func seal(_ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: [UInt8],
                     appendingTo output: inout [UInt8]) throws
    /// Seals into exactly `plaintext.count + tagByteCount` bytes of `output`.
    static func seal(_ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: [UInt8],
                     into output: UnsafeMutableRawBufferPointer) throws
    /// Appends the plaintext of `ciphertext` (which ends with the tag) to `output`, or throws
    /// without appending anything.
    static func open(_ ciphertext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: [UInt8],
                     appendingTo output: inout [UInt8]) throws
}

/// Both instantiations use 256-bit keys, 96-bit nonces, 128-bit tags and HKDF-SHA-512, and
/// run on OpenSSL's EVP (CNu11Cipher) between caller buffers: no copies, no allocation per
/// chunk on the pipelined path (ChunkPipeline keeps one context per worker).
extension ChunkAEAD {
    public static var keyByteCount: Int { 32 }
    public static var nonceByteCount: Int { 12 }
    public static var tagByteCount: Int { 16 }

    /// HKDF-SHA-512 expand through libsodium's HMAC (the same bytes as swift-crypto's
    /// `HKDF<SHA512>.expand`, which the chunked-encryption vectors hold; a quarter of its
    /// time, once per item).
    public static func expand(prk: SecretBytes, info: [UInt8], count: Int) throws -> SymmetricKey {
        var okm = [UInt8](repeating: 0, count: count)
        defer { okm.withUnsafeMutableBytes { Sodium.zero($0) } }
        try prk.withUnsafeBytes { key in
            try info.withUnsafeBytes { i in
                try okm.withUnsafeMutableBytes { out in try Sodium.hkdfSHA512Expand(prk: key, info: i, into: out) }
            }
        }
        return SymmetricKey(data: okm)
    }

    public static func seal(_ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: [UInt8],
                            into output: UnsafeMutableRawBufferPointer) throws {
        try ChunkCipher(algorithm: algorithm, key: key).seal(plaintext, nonce: nonce, into: output)
    }

    public static func seal(_ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: [UInt8],
                            appendingTo output: inout [UInt8]) throws {
        try ChunkedScheme.append(plaintext.count + tagByteCount, to: &output) { out in
            try seal(plaintext, key: key, nonce: nonce, into: out)
        }
    }

    public static func open(_ ciphertext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: [UInt8],
                            appendingTo output: inout [UInt8]) throws {
        guard ciphertext.count >= tagByteCount else { throw ChunkedScheme.shortChunk() }
        try ChunkedScheme.append(ciphertext.count - tagByteCount, to: &output) { out in
            try ChunkCipher(algorithm: algorithm, key: key).open(ciphertext, nonce: nonce, into: out)
        }
    }
}

/// ChaCha20-Poly1305 (RFC 8439) with HKDF-SHA-512: the `.n11` / `.n11note` content cipher.
public enum ChaCha20Poly1305Chunks: ChunkAEAD {
    public static let aeadName = "AEAD_CHACHA20_POLY1305"
    public static var algorithm: ChunkAlgorithm { .chacha20Poly1305 }
}

/// Cobblestone-256: AES-256-GCM with HKDF-SHA-512, the portable-archive cipher. This is
/// the instantiation the Wycheproof `c2sp_chunked_encryption_aes_256_gcm_test.json` covers.
public enum AES256GCMChunks: ChunkAEAD {
    public static let aeadName = "AEAD_AES_256_GCM"
    public static var algorithm: ChunkAlgorithm { .aes256GCM }
}
