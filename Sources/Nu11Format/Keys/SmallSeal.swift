// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// Seals small values (index metadata: names, sizes, dates) with ChaCha20-Poly1305 and a
/// random nonce, under a subkey of a domain key, bound to the row they belong to through
/// the associated data. Output: `nonce(12) || ciphertext || tag(16)`.
public enum SmallSeal {
    public static func seal(_ plaintext: [UInt8], key: SecretBytes, associatedData: [UInt8]) throws -> [UInt8] {
        let box = try ChaChaPoly.seal(plaintext, using: SymmetricKey(data: key),
                                      nonce: ChaChaPoly.Nonce(data: SecureRandom.bytes(12)),
                                      authenticating: associatedData)
        return Array(box.combined)
    }

    public static func open(_ sealed: [UInt8], key: SecretBytes, associatedData: [UInt8]) throws -> [UInt8] {
        do {
            let box = try ChaChaPoly.SealedBox(combined: sealed)
            return Array(try ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: associatedData))
        } catch {
            throw Nu11Error(.corrupted, "sealed metadata failed authentication", remedy: .check(reason: nil))
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
