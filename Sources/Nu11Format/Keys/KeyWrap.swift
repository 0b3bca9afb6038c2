// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// Wraps one key under another: ChaCha20-Poly1305 with a fresh random 96-bit nonce and the
/// record's clear fields as associated data, so a wrapped key cannot be moved to another
/// item, domain or slot. Output: `nonce(12) || ciphertext || tag(16)`.
///
/// Random nonces are safe here: a domain key wraps at most millions of item keys, far below
/// the 2^32 messages at which a 96-bit random nonce collision becomes a concern.
public enum KeyWrap {
    public static let overhead = 12 + 16

    public static func wrap(_ secret: SecretBytes, under key: SecretBytes, associatedData: [UInt8]) throws -> [UInt8] {
        try wrap(secret, under: key, associatedData: associatedData, nonce: SecureRandom.bytes(12))
    }

    /// Sealed straight from guarded memory into the output, after its nonce (libsodium's
    /// detached ChaCha20-Poly1305: the same RFC 8439 construction as before, a third of the
    /// time; `unwrap` opens either). A nonce of the caller's only for tests.
    static func wrap(_ secret: SecretBytes, under key: SecretBytes, associatedData: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        try secret.withUnsafeBytes { try SmallSeal.sealCombined($0, key: key, associatedData: associatedData, nonce: nonce) }
    }

    /// Unwraps into guarded memory. Every failure is the same `.authenticationFailed`, so a
    /// wrong key and a damaged record look alike.
    public static func unwrap(_ wrapped: some Collection<UInt8>, under key: SecretBytes,
                              associatedData: [UInt8]) throws -> SecretBytes {
        guard wrapped.count > overhead else { throw Nu11Error.wrongPIN }
        do {
            let box = try ChaChaPoly.SealedBox(combined: Array(wrapped))
            var plain = [UInt8](try ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: associatedData))
            return SecretBytes(consuming: &plain)
        } catch {
            throw Nu11Error.wrongPIN
        }
    }
}

/// A per-item key record, kept in the key store (never next to the data):
///
///     0   4  magic "N11R"
///     4   1  version (1)
///     5   1  domain whose key wraps this one
///     6   1  item kind
///     7   1  reserved, 0
///     8   16 item ID
///     24  60 KeyWrap(item key) with bytes 0..<24 as associated data
///
/// Deleting this record is crypto-shredding the item.
public struct ItemKeyRecord: Sendable, Equatable {
    public static let magic: [UInt8] = Array("N11R".utf8)
    public static let byteCount = 24 + 32 + KeyWrap.overhead

    public let domain: Domain
    public let kind: ItemKind
    public let itemID: ItemID
    public let wrapped: [UInt8]

    public static func seal(itemKey: SecretBytes, domain: Domain, kind: ItemKind, itemID: ItemID,
                            domainKey: SecretBytes) throws -> ItemKeyRecord {
        let clear = clearFields(domain: domain, kind: kind, itemID: itemID)
        return ItemKeyRecord(domain: domain, kind: kind, itemID: itemID,
                             wrapped: try KeyWrap.wrap(itemKey, under: domainKey, associatedData: clear))
    }

    static func clearFields(domain: Domain, kind: ItemKind, itemID: ItemID) -> [UInt8] {
        magic + [1, domain.rawValue, kind.rawValue, 0] + itemID.bytes
    }

    public func encoded() -> [UInt8] { Self.clearFields(domain: domain, kind: kind, itemID: itemID) + wrapped }

    public static func parse(_ bytes: [UInt8]) throws -> ItemKeyRecord {
        guard bytes.count == byteCount, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "key record is damaged", remedy: .check(reason: nil))
        }
        guard bytes[4] == 1 else {
            throw Nu11Error(.unsupportedVersion, "key record version \(bytes[4]) is not supported",
                            remedy: .upgrade)
        }
        guard let domain = Domain(rawValue: bytes[5]), let kind = ItemKind(rawValue: bytes[6]), bytes[7] == 0 else {
            throw Nu11Error(.corrupted, "key record is damaged", remedy: .check(reason: nil))
        }
        return ItemKeyRecord(domain: domain, kind: kind, itemID: try ItemID(bytes: Array(bytes[8..<24])),
                             wrapped: Array(bytes[24...]))
    }

    /// The item key, if `domainKey` is the right one and the record is intact.
    public func open(domainKey: SecretBytes) throws -> SecretBytes {
        do {
            return try KeyWrap.unwrap(wrapped, under: domainKey,
                                      associatedData: Self.clearFields(domain: domain, kind: kind, itemID: itemID))
        } catch {
            throw Nu11Error(.corrupted, "key record of item \(itemID) does not open",
                            remedy: .check(reason: "the record was altered"), item: itemID.hex)
        }
    }
}

extension ItemKeyRecord {
    /// The same record re-wrapped under `newKey` (a fresh nonce), if `oldKey` opens it.
    /// The item key passes through an ordinary buffer zeroed at once, not guarded memory:
    /// a rotation re-wraps every record of the vault, and a guarded allocation costs six
    /// system calls each.
    public func rewrapped(from oldKey: SecretBytes, to newKey: SecretBytes) -> ItemKeyRecord? {
        let clear = Self.clearFields(domain: domain, kind: kind, itemID: itemID)
        guard let box = try? ChaChaPoly.SealedBox(combined: wrapped),
              var plain = try? [UInt8](ChaChaPoly.open(box, using: SymmetricKey(data: oldKey), authenticating: clear)) else {
            return nil
        }
        defer { secureZero(&plain) }
        guard let nonce = try? ChaChaPoly.Nonce(data: SecureRandom.bytes(12)),
              let sealed = try? ChaChaPoly.seal(plain, using: SymmetricKey(data: newKey), nonce: nonce, authenticating: clear) else {
            return nil
        }
        return ItemKeyRecord(domain: domain, kind: kind, itemID: itemID, wrapped: Array(sealed.combined))
    }

    /// Whether `key` opens this record (nothing is kept).
    public func opens(under key: SecretBytes) -> Bool {
        guard let box = try? ChaChaPoly.SealedBox(combined: wrapped),
              var plain = try? [UInt8](ChaChaPoly.open(box, using: SymmetricKey(data: key),
                                                       authenticating: Self.clearFields(domain: domain, kind: kind, itemID: itemID))) else {
            return false
        }
        secureZero(&plain)
        return true
    }
}
