// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// What opens an age file: an X25519 or post-quantum secret key (32 bytes each: the
/// X25519 scalar, or the X-Wing seed), or a passphrase (scrypt).
public struct AgeIdentity: Sendable {
    public enum Kind: Sendable, Equatable { case x25519, postQuantum, passphrase }

    public let kind: Kind
    let secret: SecretBytes
    /// For passphrases: the highest scrypt work factor (log2 N) accepted from a file.
    let maxWorkFactor: Int

    /// The highest work factor read from a file by default (age's own limit; 2^22 × 1 KiB = 4 GiB).
    public static let defaultMaxWorkFactor = 22

    public init(kind: Kind, secret: SecretBytes, maxWorkFactor: Int = AgeIdentity.defaultMaxWorkFactor) throws {
        guard kind == .passphrase || secret.count == 32 else { throw AgeError.key("a secret key is not 32 bytes") }
        self.kind = kind
        self.secret = secret
        self.maxWorkFactor = maxWorkFactor
    }

    public static func passphrase(_ passphrase: SecretBytes, maxWorkFactor: Int = defaultMaxWorkFactor) -> AgeIdentity {
        AgeIdentity(unchecked: .passphrase, passphrase, maxWorkFactor)
    }

    private init(unchecked kind: Kind, _ secret: SecretBytes, _ maxWorkFactor: Int) {
        self.kind = kind
        self.secret = secret
        self.maxWorkFactor = maxWorkFactor
    }

    /// A fresh identity.
    public static func generate(_ kind: Kind) throws -> AgeIdentity {
        guard kind != .passphrase else { throw Nu11Error(.invalidArgument, "a passphrase is not generated") }
        return try AgeIdentity(kind: kind, secret: SecretBytes(randomCount: 32))
    }

    /// Parses `AGE-SECRET-KEY-1…` or `AGE-SECRET-KEY-PQ-1…`.
    public init(parsing text: String) throws {
        guard let (hrp, data) = Bech32.decode(text.trimmingCharacters(in: .whitespaces)), data.count == 32 else {
            throw AgeError.key("an identity is not a valid AGE-SECRET-KEY-… string")
        }
        var bytes = data
        switch hrp {
        case "age-secret-key-": try self.init(kind: .x25519, secret: SecretBytes(consuming: &bytes))
        case "age-secret-key-pq-": try self.init(kind: .postQuantum, secret: SecretBytes(consuming: &bytes))
        default:
            secureZero(&bytes)
            throw AgeError.key("an identity is neither AGE-SECRET-KEY-1… nor AGE-SECRET-KEY-PQ-1…")
        }
    }

    /// Every identity of an identity file (one per line; `#` comments and blank lines skipped).
    public static func parseFile(_ text: String) throws -> [AgeIdentity] {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        let identities = try lines.filter { !$0.isEmpty && !$0.hasPrefix("#") }.map { try AgeIdentity(parsing: $0) }
        guard !identities.isEmpty else { throw AgeError.key("the identity file holds no identity") }
        return identities
    }

    /// The secret key's string, to hand to another age program (it is a secret: the caller
    /// writes it only to a protected file).
    public func secretKeyString() -> String? {
        switch kind {
        case .passphrase: nil
        case .x25519: secret.withUnsafeBytes { Bech32.encode(hrp: "age-secret-key-", data: Array($0)) }.uppercased()
        case .postQuantum: secret.withUnsafeBytes { Bech32.encode(hrp: "age-secret-key-pq-", data: Array($0)) }.uppercased()
        }
    }

    /// The recipient others encrypt to; nil for a passphrase.
    public var recipient: AgeRecipient? {
        switch kind {
        case .passphrase: return nil
        case .x25519:
            guard let key = try? secret.withUnsafeBytes({ try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }) else { return nil }
            return AgeRecipient(kind: .x25519, key: Array(key.publicKey.rawRepresentation))
        case .postQuantum:
            guard let key = try? xwingKey() else { return nil }
            return AgeRecipient(kind: .postQuantum, key: Array(key.publicKey.rawRepresentation))
        }
    }

    private func xwingKey() throws -> XWingMLKEM768X25519.PrivateKey {
        try secret.withUnsafeBytes { try XWingMLKEM768X25519.PrivateKey(seedRepresentation: Data($0), publicKey: nil) }
    }

    /// The file key if `stanza` is addressed to this identity and opens; nil if it is not
    /// ours or does not open; throws (header failure) if it is ours but malformed.
    func unwrap(_ stanza: AgeStanza) throws -> SymmetricKey? {
        switch kind {
        case .x25519: try unwrapX25519(stanza)
        case .postQuantum: try unwrapXWing(stanza)
        case .passphrase: try unwrapScrypt(stanza)
        }
    }

    private func unwrapX25519(_ stanza: AgeStanza) throws -> SymmetricKey? {
        guard stanza.type == "X25519" else { return nil }
        guard stanza.arguments.count == 2, let share = AgeBase64.decode(Array(stanza.arguments[1].utf8)), share.count == 32 else {
            throw AgeError.header("an X25519 stanza is malformed")
        }
        guard stanza.body.count == 32 else { throw AgeError.header("an X25519 stanza body is not 32 bytes") }
        let key = try secret.withUnsafeBytes { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
        guard let shared = try? key.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: share)),
              !shared.withUnsafeBytes({ $0.allSatisfy { $0 == 0 } }) else {
            throw AgeError.header("an X25519 share is a low-order point")
        }
        let wrapKey = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: share + Array(key.publicKey.rawRepresentation),
                                                     sharedInfo: Array(AgeX25519.info.utf8), outputByteCount: 32)
        return try AgeWrap.open(stanza.body, with: wrapKey)
    }

    /// A fixed clamped scalar: X25519(k, P) is all zero for a clamped k exactly when P has
    /// low order, so this tests the X25519 half of an X-Wing ciphertext without our key.
    private static let probe = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0x5A, count: 32))

    private func unwrapXWing(_ stanza: AgeStanza) throws -> SymmetricKey? {
        guard stanza.type == "mlkem768x25519" else { return nil }
        guard stanza.arguments.count == 2, let enc = AgeBase64.decode(Array(stanza.arguments[1].utf8)),
              enc.count == AgeRecipient.xwingEncCount else {
            throw AgeError.header("an mlkem768x25519 stanza is malformed")
        }
        guard stanza.body.count == 32 else { throw AgeError.header("an mlkem768x25519 stanza body is not 32 bytes") }
        let share = Array(enc[(enc.count - 32)...])
        guard let probe = Self.probe,
              let shared = try? probe.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: share)),
              !shared.withUnsafeBytes({ $0.allSatisfy { $0 == 0 } }) else {
            throw AgeError.header("the X25519 part of an mlkem768x25519 stanza is a low-order point")
        }
        guard var recipient = try? HPKE.Recipient(privateKey: xwingKey(), ciphersuite: AgeXWing.suite,
                                                  info: Data(AgeXWing.info.utf8), encapsulatedKey: Data(enc)),
              var plain = try? recipient.open(stanza.body) else { return nil }
        defer { plain.resetBytes(in: 0..<plain.count) }
        guard plain.count == AgeWrap.fileKeyCount else { throw AgeError.header("a wrapped file key is not 16 bytes") }
        return SymmetricKey(data: plain)
    }

    private func unwrapScrypt(_ stanza: AgeStanza) throws -> SymmetricKey? {
        guard stanza.type == "scrypt" else { return nil }
        guard stanza.arguments.count == 3, let salt = AgeBase64.decode(Array(stanza.arguments[1].utf8)), salt.count == 16 else {
            throw AgeError.header("an scrypt stanza is malformed")
        }
        let digits = Array(stanza.arguments[2].utf8)
        guard let first = digits.first, (0x31...0x39).contains(first), digits.allSatisfy({ (0x30...0x39).contains($0) }),
              digits.count <= 3, let workFactor = Int(stanza.arguments[2]) else {
            throw AgeError.header("an scrypt work factor is not a plain decimal number")
        }
        guard workFactor <= maxWorkFactor, workFactor < 64 else { throw AgeError.costTooHigh(workFactor, limit: maxWorkFactor) }
        guard stanza.body.count == 32 else { throw AgeError.header("an scrypt stanza body is not 32 bytes") }
        let wrapKey = try AgeScrypt.key(passphrase: secret, salt: salt, workFactor: workFactor)
        return try AgeWrap.open(stanza.body, with: wrapKey)
    }
}

enum AgeScrypt {
    static let label = Array("age-encryption.org/v1/scrypt".utf8)
    /// What `age -p` uses by default (about a second).
    static let defaultWorkFactor = 18

    static func key(passphrase: SecretBytes, salt: [UInt8], workFactor: Int) throws -> SymmetricKey {
        var out = [UInt8](repeating: 0, count: 32)
        defer { secureZero(&out) }
        try passphrase.withUnsafeBytes { pw in
            try out.withUnsafeMutableBytes { try Sodium.scrypt(output: $0, password: pw, salt: label + salt, logN: workFactor, r: 8, p: 1) }
        }
        return SymmetricKey(data: out)
    }

    static func wrap(fileKey: SymmetricKey, passphrase: SecretBytes, workFactor: Int) throws -> AgeStanza {
        let salt = SecureRandom.bytes(16)
        let wrapKey = try key(passphrase: passphrase, salt: salt, workFactor: workFactor)
        return AgeStanza(arguments: ["scrypt", AgeBase64.encodeString(salt), String(workFactor)],
                         body: try AgeWrap.seal(fileKey, with: wrapKey))
    }
}
