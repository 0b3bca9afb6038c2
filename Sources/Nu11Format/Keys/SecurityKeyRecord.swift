// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto

/// `security-keys.n11u` (docs/FORMAT.md §4.2d): the FIDO2 security keys that open the primary
/// slot, in a file of one fixed size whether none or four are enrolled.
///
///     0  4  magic "N11U"     4  1  version = 1     5  3  reserved = 0
///     8  …  SmallSeal(body, under: Subkey(device key, "security keys"), ad = bytes[0..<8])
///
///     body (1,720 bytes):
///     0    60   KeyWrap(F, under: Subkey(base KEK of slot 0, "security keys f"), ad = "N11U f v1")
///     60   60   KeyWrap(base KEK of slot 0, under: F, ad = "N11U kek v1")
///     120  4 × 400  entries:
///          0 1 in use (1; 0 = free)   1 1 policy (1 touch, 2 touch + the key's PIN)
///          2 2 credential ID length (big-endian, 1…256)    4 256 credential ID, zero-padded
///          260 32 salt    292 16 entry ID    308 32 label (UTF-8, zero-padded)
///          340 60 KeyWrap(F, under: W, ad = "N11U entry v1" || entry ID)
///     W = HKDF-SHA-256(IKM = the key's hmac-secret for the salt, salt = device key,
///                      info = "nu11vlt security key v1")
///
/// A key store without enrolled keys holds a decoy of the same size (random bytes).
public struct SecurityKeyRecord: Sendable {
    public static let magic: [UInt8] = Array("N11U".utf8) + [1, 0, 0, 0]
    public static let capacity = 4
    public static let maxCredentialID = 256
    static let entrySize = 400
    static let bodySize = 120 + capacity * entrySize
    /// The file's size, always.
    public static let fileSize = 8 + 12 + bodySize + 16

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
        let wrappedF: [UInt8]
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
        guard bytes.count == fileSize, Array(bytes[0..<8]) == magic,
              let body = try? SmallSeal.open(Array(bytes[8...]), key: sealKey(deviceKey: deviceKey), associatedData: magic),
              body.count == bodySize else { return .empty }
        var entries: [Entry] = []
        for i in 0..<capacity {
            let e = Array(body[(120 + i * entrySize)..<(120 + (i + 1) * entrySize)])
            guard e[0] == 1, let policy = Policy(rawValue: e[1]) else { continue }
            let length = Int(e[2]) << 8 | Int(e[3])
            guard (1...maxCredentialID).contains(length) else { continue }
            let labelBytes = e[308..<340].prefix { $0 != 0 }
            entries.append(Entry(id: Array(e[292..<308]), label: String(decoding: labelBytes, as: UTF8.self), policy: policy,
                                 credentialID: Array(e[4..<(4 + length)]), salt: Array(e[260..<292]),
                                 wrappedF: Array(e[340..<400])))
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
            var e: [UInt8] = [1, entry.policy.rawValue, UInt8(entry.credentialID.count >> 8), UInt8(entry.credentialID.count & 0xff)]
            e += entry.credentialID + [UInt8](repeating: 0, count: Self.maxCredentialID - entry.credentialID.count)
            e += entry.salt + entry.id
            let label = Array(Self.trimmed(entry.label).utf8)
            e += label + [UInt8](repeating: 0, count: 32 - label.count)
            e += entry.wrappedF
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
        guard let f = try? KeyWrap.unwrap(entry.wrappedF, under: w, associatedData: Self.entryAD(entry.id)) else { return nil }
        return try? KeyWrap.unwrap(kekWrap, under: f, associatedData: Self.kekAD)
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
        let wrapped = try KeyWrap.wrap(f, under: w, associatedData: Self.entryAD(id))
        entries.append(Entry(id: id, label: Self.trimmed(label), policy: policy, credentialID: credentialID, salt: salt, wrappedF: wrapped))
    }

    /// F and the base KEK of slot 0 wrapped again (a new KEK after a PIN change or a TPM change).
    public mutating func rewrap(f: SecretBytes, baseKEK: SecretBytes) throws {
        fWrap = try KeyWrap.wrap(f, under: Self.fKey(baseKEK: baseKEK), associatedData: Self.fAD)
        kekWrap = try KeyWrap.wrap(baseKEK, under: f, associatedData: Self.kekAD)
    }

    public mutating func remove(at index: Int) { entries.remove(at: index) }

    public mutating func rename(at index: Int, to label: String) { entries[index].label = Self.trimmed(label) }
}
