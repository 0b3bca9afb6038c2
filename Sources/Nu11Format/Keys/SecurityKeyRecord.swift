// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto

/// `security-keys.n11u` (docs/FORMAT.md §4.2d): the FIDO2 security keys that open the primary
/// slot, in a file of one fixed size whether none or four are enrolled.
///
///     0  4  magic "N11U"     4  1  version = 2 (1: entries of 400 bytes, read)     5  3  reserved = 0
///     8  …  SmallSeal(body, under: Subkey(device key, "security keys"), ad = bytes[0..<8])
///
///     body (1,976 bytes; version 1: 1,720):
///     0    60   KeyWrap(F, under: Subkey(base KEK of slot 0, "security keys f"), ad = "N11U f v1")
///     60   60   KeyWrap(base KEK of slot 0, under: F, ad = "N11U kek v1")
///     120  4 × 464  entries (version 1: 400):
///          0 1 kind (0 = free; 1 = F wrapped under W; 2 = F sealed to the entry's public key)
///          1 1 policy (1 touch, 2 touch + the key's PIN)
///          2 2 credential ID length (big-endian, 1…256)    4 256 credential ID, zero-padded
///          260 32 salt    292 16 entry ID    308 32 label (UTF-8, zero-padded)
///          kind 1: 340 60 KeyWrap(F, under: W, ad = "N11U entry v1" || entry ID), then 64 random
///          kind 2: 340 32 P_e = X25519(e, 9), e = HKDF-SHA-256(IKM = W, salt = "",
///                         info = "nu11vlt security key entry v2")
///                  372 92 SealTo(P_e, F): eph_pub || KeyWrap(F, under: HKDF-SHA-256(IKM = X25519(eph, P_e),
///                         salt = eph_pub || P_e, info = "nu11vlt security key seal v1"),
///                         ad = "N11U entry v2" || entry ID)
///     W = HKDF-SHA-256(IKM = the key's hmac-secret for the salt, salt = device key,
///                      info = "nu11vlt security key v1")
///
/// Kind 2 lets a new F reach every remaining key without touching it: `fido2 remove` draws a new
/// F, seals it to each remaining entry's public key and changes slot 0's KEK (the master
/// record's pepper), so the removed key's entry, from any old copy of this file, opens nothing.
///
/// A key store without enrolled keys holds a decoy of the same size (random bytes).
public struct SecurityKeyRecord: Sendable {
    public static let magic: [UInt8] = Array("N11U".utf8) + [2, 0, 0, 0]
    static let magicV1: [UInt8] = Array("N11U".utf8) + [1, 0, 0, 0]
    public static let capacity = 4
    public static let maxCredentialID = 256
    static let entrySize = 464
    static let entrySizeV1 = 400
    static let bodySize = 120 + capacity * entrySize
    /// The file's size, always.
    public static let fileSize = 8 + 12 + bodySize + 16
    static let fileSizeV1 = 8 + 12 + 120 + capacity * entrySizeV1 + 16
    /// The largest file a reader accepts (either version).
    public static let maxFileSize = max(fileSize, fileSizeV1)

    public enum Policy: UInt8, Sendable, CaseIterable {
        /// A touch (user presence): like Face ID, the key alone opens; the vault PIN stays the fallback.
        case touch = 1
        /// A touch and the key's own PIN (user verification): the key's "with UV" secret, which a
        /// touch alone never gives.
        case touchAndKeyPIN = 2
    }

    public struct Entry: Sendable, Equatable {
        public let id: [UInt8]
        public var label: String
        public let policy: Policy
        public let credentialID: [UInt8]
        public let salt: [UInt8]
        /// Kind 1: F wrapped under W (60 bytes). Kind 2: the entry's public key (32) and F
        /// sealed to it (92).
        var wrappedF: [UInt8]
        var publicKey: [UInt8]?
        /// Whether a new F can reach this entry without its key (kind 2).
        public var takesNewF: Bool { publicKey != nil }
    }

    public private(set) var entries: [Entry]
    var fWrap: [UInt8]
    var kekWrap: [UInt8]

    /// No entries (the file a key store starts with).
    public static var empty: SecurityKeyRecord { SecurityKeyRecord(entries: [], fWrap: [], kekWrap: []) }

    /// The decoy: random bytes of the file's size.
    public static func decoy() -> [UInt8] { magic + SecureRandom.bytes(fileSize - magic.count) }

    static func sealKey(deviceKey: SecretBytes) -> SecretBytes { Subkey.derive(from: deviceKey, purpose: "security keys") }
    static func fKey(baseKEK: SecretBytes) -> SecretBytes { Subkey.derive(from: baseKEK, purpose: "security keys f") }
    static let fAD = Array("N11U f v1".utf8)
    static let kekAD = Array("N11U kek v1".utf8)
    static func entryAD(_ id: [UInt8]) -> [UInt8] { Array("N11U entry v1".utf8) + id }
    static func entryADv2(_ id: [UInt8]) -> [UInt8] { Array("N11U entry v2".utf8) + id }

    /// The entry's X25519 key pair, from W.
    static func entryPrivateKey(_ w: SecretBytes) throws -> Curve25519.KeyAgreement.PrivateKey {
        let derived = w.withUnsafeBytes { ikm in
            HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: [UInt8](),
                                   info: Array("nu11vlt security key entry v2".utf8), outputByteCount: 32)
        }
        return try derived.withUnsafeBytes { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
    }

    static func sealKey(_ shared: SharedSecret, salt: [UInt8]) -> SecretBytes {
        let key = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: salt,
                                                 sharedInfo: Array("nu11vlt security key seal v1".utf8), outputByteCount: 32)
        return key.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// SealTo(P_e, F) for entry `id`.
    static func seal(_ f: SecretBytes, to publicKey: [UInt8], id: [UInt8]) throws -> [UInt8] {
        let recipient = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey)
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let eph = Array(ephemeral.publicKey.rawRepresentation)
        let key = sealKey(try ephemeral.sharedSecretFromKeyAgreement(with: recipient), salt: eph + publicKey)
        return eph + (try KeyWrap.wrap(f, under: key, associatedData: entryADv2(id)))
    }

    /// F from an entry, with W (nil: not this entry's key).
    static func openF(_ entry: Entry, entryKey w: SecretBytes) -> SecretBytes? {
        guard let publicKey = entry.publicKey else {
            return try? KeyWrap.unwrap(entry.wrappedF, under: w, associatedData: entryAD(entry.id))
        }
        guard entry.wrappedF.count == 92, let privateKey = try? entryPrivateKey(w),
              Array(privateKey.publicKey.rawRepresentation) == publicKey,
              let eph = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: entry.wrappedF[0..<32]),
              let shared = try? privateKey.sharedSecretFromKeyAgreement(with: eph) else { return nil }
        let key = sealKey(shared, salt: Array(entry.wrappedF[0..<32]) + publicKey)
        return try? KeyWrap.unwrap(entry.wrappedF[32...], under: key, associatedData: entryADv2(entry.id))
    }

    /// W: the key-encryption key an entry's hmac-secret gives.
    public static func entryKey(hmacSecret: SecretBytes, deviceKey: SecretBytes) -> SecretBytes {
        var ikm = hmacSecret.withUnsafeBytes { Array($0) }
        defer { secureZero(&ikm) }
        let key = deviceKey.withUnsafeBytes { device in
            HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: device,
                                   info: Array("nu11vlt security key v1".utf8), outputByteCount: 32)
        }
        return key.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// Reads the file; a decoy, a damaged file or another key store's reads as no entries.
    public static func parse(_ bytes: [UInt8], deviceKey: SecretBytes) -> SecurityKeyRecord {
        let v1 = bytes.count == fileSizeV1 && Array(bytes.prefix(8)) == magicV1
        let header = v1 ? magicV1 : magic
        let size = v1 ? entrySizeV1 : entrySize
        guard v1 || (bytes.count == fileSize && Array(bytes.prefix(8)) == magic),
              let body = try? SmallSeal.open(Array(bytes[8...]), key: sealKey(deviceKey: deviceKey), associatedData: header),
              body.count == 120 + capacity * size else { return .empty }
        var entries: [Entry] = []
        for i in 0..<capacity {
            let e = Array(body[(120 + i * size)..<(120 + (i + 1) * size)])
            guard e[0] == 1 || (!v1 && e[0] == 2), let policy = Policy(rawValue: e[1]) else { continue }
            let length = Int(e[2]) << 8 | Int(e[3])
            guard (1...maxCredentialID).contains(length) else { continue }
            let labelBytes = e[308..<340].prefix { $0 != 0 }
            let kind2 = e[0] == 2
            entries.append(Entry(id: Array(e[292..<308]), label: String(decoding: labelBytes, as: UTF8.self), policy: policy,
                                 credentialID: Array(e[4..<(4 + length)]), salt: Array(e[260..<292]),
                                 wrappedF: kind2 ? Array(e[372..<464]) : Array(e[340..<400]),
                                 publicKey: kind2 ? Array(e[340..<372]) : nil))
        }
        return SecurityKeyRecord(entries: entries, fWrap: Array(body[0..<60]), kekWrap: Array(body[60..<120]))
    }

    /// The file's bytes: the decoy when no entry is left.
    public func encoded(deviceKey: SecretBytes) throws -> [UInt8] {
        guard !entries.isEmpty, fWrap.count == 60, kekWrap.count == 60 else { return Self.decoy() }
        var body = fWrap + kekWrap
        for i in 0..<Self.capacity {
            guard i < entries.count else {
                body += SecureRandom.bytes(Self.entrySize)
                continue
            }
            let entry = entries[i]
            var e: [UInt8] = [entry.publicKey == nil ? 1 : 2, entry.policy.rawValue,
                              UInt8(entry.credentialID.count >> 8), UInt8(entry.credentialID.count & 0xff)]
            e += entry.credentialID + [UInt8](repeating: 0, count: Self.maxCredentialID - entry.credentialID.count)
            e += entry.salt + entry.id
            let label = Array(Self.trimmed(entry.label).utf8)
            e += label + [UInt8](repeating: 0, count: 32 - label.count)
            if let publicKey = entry.publicKey {
                e += publicKey + entry.wrappedF
            } else {
                e += entry.wrappedF + SecureRandom.bytes(Self.entrySize - 400)
            }
            body += e
        }
        return Self.magic + (try SmallSeal.seal(body, key: Self.sealKey(deviceKey: deviceKey), associatedData: Self.magic))
    }

    /// A label cut to 32 bytes on a character boundary.
    static func trimmed(_ label: String) -> String {
        var out = ""
        for ch in label where out.utf8.count + String(ch).utf8.count <= 32 && ch != "\0" { out.append(ch) }
        return out
    }

    /// F, opened with the base KEK of slot 0 (the primary PIN's unlock); nil when there are no
    /// entries or the KEK is not the one they were made for.
    public func f(baseKEK: SecretBytes) -> SecretBytes? {
        guard !entries.isEmpty else { return nil }
        return try? KeyWrap.unwrap(fWrap, under: Self.fKey(baseKEK: baseKEK), associatedData: Self.fAD)
    }

    /// The base KEK of slot 0 that an entry's W opens (through F); nil when W is not that entry's.
    public func baseKEK(entry: Entry, entryKey w: SecretBytes) -> SecretBytes? {
        guard let f = Self.openF(entry, entryKey: w) else { return nil }
        return try? KeyWrap.unwrap(kekWrap, under: f, associatedData: Self.kekAD)
    }

    /// An entry of kind 1 made kind 2 (at an unlock with its key, which gives W): from then on
    /// a new F reaches it without a touch. False when W is not the entry's.
    public mutating func upgrade(entryAt index: Int, entryKey w: SecretBytes) throws -> Bool {
        guard entries.indices.contains(index), entries[index].publicKey == nil,
              let f = Self.openF(entries[index], entryKey: w) else { return false }
        let publicKey = Array(try Self.entryPrivateKey(w).publicKey.rawRepresentation)
        entries[index].wrappedF = try Self.seal(f, to: publicKey, id: entries[index].id)
        entries[index].publicKey = publicKey
        return true
    }

    /// Removes entry `index` for good: a new F, sealed to every remaining entry's public key and
    /// wrapped for `baseKEK` (slot 0's new KEK). Entries of kind 1 cannot take it without their
    /// key and go too: their labels are returned.
    public mutating func revoke(at index: Int, baseKEK: SecretBytes) throws -> [String] {
        entries.remove(at: index)
        let dropped = entries.filter { $0.publicKey == nil }.map(\.label)
        entries.removeAll { $0.publicKey == nil }
        let f = SecretBytes(randomCount: 32)
        for i in entries.indices {
            guard let publicKey = entries[i].publicKey else { continue }
            entries[i].wrappedF = try Self.seal(f, to: publicKey, id: entries[i].id)
        }
        try rewrap(f: f, baseKEK: baseKEK)
        return dropped
    }

    /// Adds an entry. `f`: the record's F (nil for the first entry: a new one is made).
    public mutating func add(label: String, policy: Policy, credentialID: [UInt8], salt: [UInt8], entryKey w: SecretBytes,
                             f existing: SecretBytes?, baseKEK: SecretBytes) throws {
        guard entries.count < Self.capacity else {
            throw Nu11Error(.invalidArgument, "\(Self.capacity) security keys are enrolled already", remedy: .removeSecurityKeyFirst)
        }
        guard (1...Self.maxCredentialID).contains(credentialID.count), salt.count == 32 else {
            throw Nu11Error(.invalidArgument, "the security key's credential ID is longer than \(Self.maxCredentialID) bytes",
                            remedy: .advice(.otherSecurityKey))
        }
        let f = existing ?? SecretBytes(randomCount: 32)
        if existing == nil || fWrap.count != 60 { try rewrap(f: f, baseKEK: baseKEK) }
        let id = SecureRandom.bytes(16)
        let publicKey = Array(try Self.entryPrivateKey(w).publicKey.rawRepresentation)
        entries.append(Entry(id: id, label: Self.trimmed(label), policy: policy, credentialID: credentialID, salt: salt,
                             wrappedF: try Self.seal(f, to: publicKey, id: id), publicKey: publicKey))
    }

    /// F and the base KEK of slot 0 wrapped again (a new KEK after a PIN change or a TPM change).
    public mutating func rewrap(f: SecretBytes, baseKEK: SecretBytes) throws {
        fWrap = try KeyWrap.wrap(f, under: Self.fKey(baseKEK: baseKEK), associatedData: Self.fAD)
        kekWrap = try KeyWrap.wrap(baseKEK, under: f, associatedData: Self.kekAD)
    }

    public mutating func remove(at index: Int) { entries.remove(at: index) }

    public mutating func rename(at index: Int, to label: String) { entries[index].label = Self.trimmed(label) }
}
