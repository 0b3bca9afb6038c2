// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// The recovery phrase's public half (docs/FORMAT.md §5.2). The phrase is the TPM recovery
/// key's kind of secret (`RecoveryKey`: 128 random bits, 8 groups of 4 modhex letters); from
/// it and the vault ID comes an X25519 key pair. The vault folder keeps only the public key,
/// so the vault seals every new item key and every rotation's domain keys *to* it without
/// the phrase, and only the phrase opens them.
///
///     private = HKDF-SHA-256(IKM = phrase (16 bytes), salt = vault ID (16 bytes),
///                            info = "nu11vlt recovery phrase v1", L = 32)     (X25519 scalar)
///     SealTo(pub, secret, ad) = eph_pub (32) || KeyWrap(secret, under: HKDF-SHA-256(
///                            IKM = X25519(eph, pub), salt = eph_pub || pub,
///                            info = "nu11vlt recovery seal v1", L = 32), ad)
public enum RecoverySeal {
    public static let overhead = 32 + KeyWrap.overhead

    public static func privateKey(phrase: SecretBytes, vaultID: ItemID) throws -> Curve25519.KeyAgreement.PrivateKey {
        let derived = phrase.withUnsafeBytes { ikm in
            HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: vaultID.bytes,
                                   info: Array("nu11vlt recovery phrase v1".utf8), outputByteCount: 32)
        }
        return try derived.withUnsafeBytes { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
    }

    public static func publicKey(phrase: SecretBytes, vaultID: ItemID) throws -> [UInt8] {
        Array(try privateKey(phrase: phrase, vaultID: vaultID).publicKey.rawRepresentation)
    }

    public static func seal(_ secret: SecretBytes, to publicKey: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        let recipient = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey)
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let ephemeralPublic = Array(ephemeral.publicKey.rawRepresentation)
        let key = try wrappingKey(ephemeral.sharedSecretFromKeyAgreement(with: recipient),
                                  salt: ephemeralPublic + publicKey)
        return ephemeralPublic + (try KeyWrap.wrap(secret, under: key, associatedData: associatedData))
    }

    /// Every failure is the same error: a wrong phrase and a damaged seal look alike.
    public static func open(_ sealed: some Collection<UInt8>, with privateKey: Curve25519.KeyAgreement.PrivateKey,
                            associatedData: [UInt8]) throws -> SecretBytes {
        let bytes = Array(sealed)
        guard bytes.count > overhead,
              let ephemeral = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: bytes[0..<32]),
              let shared = try? privateKey.sharedSecretFromKeyAgreement(with: ephemeral) else { throw wrongPhrase }
        let key = wrappingKey(shared, salt: Array(bytes[0..<32]) + Array(privateKey.publicKey.rawRepresentation))
        do { return try KeyWrap.unwrap(bytes[32...], under: key, associatedData: associatedData) } catch { throw wrongPhrase }
    }

    public static let wrongPhrase = Nu11Error(
        .authenticationFailed, "the recovery phrase does not open this vault's recovery data",
        remedy: .advice(.typeRecoveryPhrase))

    fileprivate static func wrappingKey(_ shared: SharedSecret, salt: [UInt8]) -> SecretBytes {
        let key = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: salt,
                                                 sharedInfo: Array("nu11vlt recovery seal v1".utf8), outputByteCount: 32)
        return key.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// Seals many secrets to one public key with one ephemeral key (a session's new items): the
    /// same bytes as `seal` makes, eph_pub || KeyWrap, with one X25519 agreement for all of
    /// them instead of one each. One wrapping key then wraps many item keys, each with a fresh
    /// random nonce and bound to its item by the associated data, as a domain key wraps item
    /// keys (`KeyWrap`). The ephemeral private key is dropped at once; the wrapping key lives
    /// as long as this object (the open vault) and is zeroed with it.
    public final class Sealer: Sendable {
        public let publicKey: [UInt8]
        private let ephemeralPublic: [UInt8]
        private let key: SecretBytes

        public init(to publicKey: [UInt8]) throws {
            let recipient = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey)
            let ephemeral = Curve25519.KeyAgreement.PrivateKey()
            self.publicKey = publicKey
            ephemeralPublic = Array(ephemeral.publicKey.rawRepresentation)
            key = RecoverySeal.wrappingKey(try ephemeral.sharedSecretFromKeyAgreement(with: recipient),
                                           salt: ephemeralPublic + publicKey)
        }

        public func seal(_ secret: SecretBytes, associatedData: [UInt8]) throws -> [UInt8] {
            ephemeralPublic + (try KeyWrap.wrap(secret, under: key, associatedData: associatedData))
        }
    }

    /// The associated data of an item key's seal: it cannot be moved to another item or vault.
    public static func itemAAD(vaultID: ItemID, itemID: ItemID, kind: ItemKind) -> [UInt8] {
        Array("nu11vlt recovery item v1".utf8) + vaultID.bytes + itemID.bytes + [kind.rawValue]
    }
}

/// `<vault>/recovery.n11r`: the recovery public key and the primary vault's domain keys
/// sealed to it — the current set first; during a rotation also the sets rows may still be
/// sealed under (docs/FORMAT.md §5.2).
///
///     0   4    magic "N11Q"
///     4   1    version = 2 (1: the payloads also held the Fade key; still read)
///     5   1    n = number of key sets (1…8)
///     6   2    reserved = 0
///     8   16   vault ID
///     24  32   recovery public key
///     56  n ×  SealTo(pub, payload (128, §4.2), ad = "nu11vlt recovery keys v1" || bytes[8..<56])  (188)
///              || binding = HMAC-SHA-256(Subkey(main key, "recovery binding"), bytes[8..<56])   (32)
///
/// The binding lets the vault, which holds the main key, check that the public key is the one
/// it chose (a folder shared with others cannot redirect new items to another key).
public struct RecoveryRecord: Sendable {
    public static let magic: [UInt8] = Array("N11Q".utf8)
    static let setByteCount = RecoverySeal.overhead + DomainKeys.payloadByteCount + 32
    public static let maxSets = 8

    public let vaultID: ItemID
    public let publicKey: [UInt8]
    /// 2 (1: written before the Fade key was left out).
    public var version: UInt8 = 2
    /// Each set: the sealed payload and its binding.
    public let sets: [(sealed: [UInt8], binding: [UInt8])]

    var clear: [UInt8] { vaultID.bytes + publicKey }

    /// Seals `keys` (current first) to `publicKey`.
    public static func make(vaultID: ItemID, publicKey: [UInt8], keys: [DomainKeys]) throws -> RecoveryRecord {
        let clear = vaultID.bytes + publicKey
        let sets = try keys.prefix(maxSets).map { k in
            (sealed: try RecoverySeal.seal(k.forRecovery().payload(), to: publicKey,
                                           associatedData: Array("nu11vlt recovery keys v1".utf8) + clear),
             binding: binding(main: k.main, clear: clear))
        }
        return RecoveryRecord(vaultID: vaultID, publicKey: publicKey, sets: sets)
    }

    /// The commitment the key store keeps to this recovery data (in the slot's payload, §4.2):
    /// first 16 bytes of SHA-256("nu11vlt recovery commitment v1" || vault ID || public key).
    public static func commitment(vaultID: ItemID, publicKey: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: Array("nu11vlt recovery commitment v1".utf8) + vaultID.bytes + publicKey).prefix(16))
    }

    /// This record's commitment.
    public var commitment: [UInt8] { Self.commitment(vaultID: vaultID, publicKey: publicKey) }

    /// Whether `expected` (a slot's commitment) names this record (constant time).
    public func matches(commitment expected: [UInt8]) -> Bool { Self.constantTimeEqual(commitment, expected) }

    static func binding(main: SecretBytes, clear: [UInt8]) -> [UInt8] {
        let key = Subkey.derive(from: main, purpose: "recovery binding")
        return key.withUnsafeBytes { Array(HMAC<SHA256>.authenticationCode(for: clear, using: SymmetricKey(data: $0))) }
    }

    /// Whether the set sealed first was made by whoever holds `keys` (constant time).
    public func isBound(to keys: DomainKeys) -> Bool {
        guard let first = sets.first else { return false }
        return Self.constantTimeEqual(Self.binding(main: keys.main, clear: clear), first.binding)
    }

    /// Whether any set was made by whoever holds `keys`.
    public func mentions(_ keys: DomainKeys) -> Bool {
        let expected = Self.binding(main: keys.main, clear: clear)
        return sets.contains { Self.constantTimeEqual(expected, $0.binding) }
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// Every key set the phrase opens, current first.
    public func open(phrase: SecretBytes) throws -> [DomainKeys] {
        let key = try RecoverySeal.privateKey(phrase: phrase, vaultID: vaultID)
        guard RecoveryRecord.constantTimeEqual(Array(key.publicKey.rawRepresentation), publicKey) else {
            throw RecoverySeal.wrongPhrase
        }
        return try sets.map { set in
            let payload = try RecoverySeal.open(set.sealed, with: key, associatedData: Array("nu11vlt recovery keys v1".utf8) + clear)
            return try DomainKeys.fromPayload(payload)
        }
    }

    public func encoded() -> [UInt8] {
        var out = Self.magic + [2, UInt8(sets.count), 0, 0] + clear
        for set in sets { out += set.sealed + set.binding }
        return out
    }

    public static func parse(_ bytes: [UInt8]) throws -> RecoveryRecord {
        guard bytes.count >= 56, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "the vault's recovery data (recovery.n11r) is damaged",
                            remedy: .advice(.restoreRecoveryRecord))
        }
        guard bytes[4] == 1 || bytes[4] == 2 else {
            throw Nu11Error(.unsupportedVersion, "recovery data version \(bytes[4]) is not supported", remedy: .upgrade)
        }
        let n = Int(bytes[5])
        guard (1...maxSets).contains(n), bytes[6] == 0, bytes[7] == 0, bytes.count == 56 + n * setByteCount,
              let id = try? ItemID(bytes: Array(bytes[8..<24])) else {
            throw Nu11Error(.corrupted, "the vault's recovery data (recovery.n11r) is damaged",
                            remedy: .advice(.restoreRecoveryRecord))
        }
        let sets = (0..<n).map { i -> (sealed: [UInt8], binding: [UInt8]) in
            let start = 56 + i * setByteCount
            let split = start + setByteCount - 32
            return (Array(bytes[start..<split]), Array(bytes[split..<(start + setByteCount)]))
        }
        var record = RecoveryRecord(vaultID: id, publicKey: Array(bytes[24..<56]), sets: sets)
        record.version = bytes[4]
        return record
    }
}
