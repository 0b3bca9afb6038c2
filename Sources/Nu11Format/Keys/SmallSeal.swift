// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// Seals small values (index metadata: names, sizes, dates) with ChaCha20-Poly1305 and a
/// random nonce, under a subkey of a domain key, bound to the row they belong to through
/// the associated data. Output: `nonce(12) || ciphertext || tag(16)`.
public enum SmallSeal {
    public static func seal(_ plaintext: [UInt8], key: SecretBytes, associatedData: [UInt8]) throws -> [UInt8] {
        try seal(plaintext, key: key, associatedData: associatedData, nonce: SecureRandom.bytes(12))
    }

    /// Sealed straight into the output, after its nonce (libsodium's detached ChaCha20-Poly1305,
    /// the same RFC 8439 construction): one buffer, however large (an audit log's padded head
    /// is most of a megabyte, sealed at every unlock).
    static func seal(_ plaintext: [UInt8], key: SecretBytes, associatedData: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        try plaintext.withUnsafeBytes { try sealCombined($0, key: key, associatedData: associatedData, nonce: nonce) }
    }

    /// `nonce(12) || ciphertext || tag(16)` of `plaintext`, sealed in place in the output
    /// (also what `KeyWrap` writes, from guarded memory).
    static func sealCombined(_ plaintext: UnsafeRawBufferPointer, key: SecretBytes, associatedData: [UInt8],
                             nonce: [UInt8]) throws -> [UInt8] {
        guard nonce.count == 12 else { throw Nu11Error(.internalError, "ChaCha20-Poly1305: the nonce is not 12 bytes") }
        let total = 12 + plaintext.count + 16
        return try [UInt8](unsafeUninitializedCapacity: total) { out, initialized in
            let raw = UnsafeMutableRawBufferPointer(out)
            raw.copyBytes(from: nonce)
            try key.withUnsafeBytes { k in
                try associatedData.withUnsafeBytes { a in
                    try Sodium.chachaSeal(plaintext, key: k, nonce: UnsafeRawBufferPointer(rebasing: raw[0..<12]), associatedData: a,
                                          into: UnsafeMutableRawBufferPointer(rebasing: raw[12...]))
                }
            }
            initialized = total
        }
    }

    /// Opens `nonce(12) || ciphertext || tag(16)` into one buffer.
    public static func open(_ sealed: [UInt8], key: SecretBytes, associatedData: [UInt8]) throws -> [UInt8] {
        let failed = Nu11Error(.corrupted, "sealed metadata failed authentication", remedy: .check(reason: nil))
        guard sealed.count >= 12 + 16 else { throw failed }
        let count = sealed.count - 28
        do {
            return try [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
                try key.withUnsafeBytes { k in
                    try sealed.withUnsafeBytes { s in
                        try associatedData.withUnsafeBytes { a in
                            try Sodium.chachaOpen(UnsafeRawBufferPointer(rebasing: s[12...]), key: k,
                                                  nonce: UnsafeRawBufferPointer(rebasing: s[0..<12]), associatedData: a,
                                                  into: UnsafeMutableRawBufferPointer(out))
                        }
                    }
                }
                initialized = count
            }
        } catch {
            throw failed
        }
    }
}

/// Purpose-bound subkeys of a domain key (HKDF-SHA-256, info = "nu11vlt subkey v1 " + purpose),
/// so that one key never serves two purposes.
public enum Subkey {
    public static func derive(from key: SecretBytes, purpose: String) -> SecretBytes {
        let derived = HKDF<SHA256>.expand(pseudoRandomKey: key, info: Array("nu11vlt subkey v1 \(purpose)".utf8),
                                          outputByteCount: 32)
        return derived.withUnsafeBytes { SecretBytes(copying: $0) }
    }
}
