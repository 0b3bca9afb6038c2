// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// Who an age file is encrypted to: an X25519 recipient (`age1…`) or a post-quantum
/// MLKEM768-X25519 recipient (`age1pq1…`, X-Wing through HPKE).
public struct AgeRecipient: Sendable, Equatable, Hashable {
    public enum Kind: String, Sendable { case x25519 = "X25519", postQuantum = "mlkem768x25519" }

    public let kind: Kind
    /// The public key: 32 bytes (X25519) or 1,216 bytes (X-Wing).
    let key: [UInt8]

    static let xwingPublicKeyCount = 1216
    static let xwingEncCount = 1120

    init(kind: Kind, key: [UInt8]) {
        self.kind = kind
        self.key = key
    }

    /// Parses `age1…` or `age1pq1…`; anything else is refused with one line and a hint.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("AGE-SECRET-KEY-") {
            throw AgeError.key("that is a secret identity, not a recipient: never share it")
        }
        guard let (hrp, data) = Bech32.decode(trimmed) else {
            throw AgeError.key("\(Self.sample(trimmed)) is not a valid age recipient (bad encoding or checksum)")
        }
        switch hrp {
        case "age" where data.count == 32: self.init(kind: .x25519, key: data)
        case "age1pq" where data.count == Self.xwingPublicKeyCount:
            guard (try? XWingMLKEM768X25519.PublicKey(rawRepresentation: data)) != nil else {
                throw AgeError.key("\(Self.sample(trimmed)) is not a valid post-quantum recipient")
            }
            self.init(kind: .postQuantum, key: data)
        default:
            throw AgeError.key("\(Self.sample(trimmed)) is not an X25519 (age1…) or post-quantum (age1pq1…) recipient")
        }
    }

    /// A short, safe excerpt of what was given, for errors.
    static func sample(_ text: String) -> String {
        let head = text.prefix(12).filter { $0.isASCII && !$0.isWhitespace && !$0.isNewline }
        return head.isEmpty ? "the recipient" : "\"\(head)\(text.count > 12 ? "…" : "")\""
    }

    /// `age1…` or `age1pq1…`.
    public var encoded: String { Bech32.encode(hrp: kind == .x25519 ? "age" : "age1pq", data: key) }

    public var isPostQuantum: Bool { kind == .postQuantum }

    /// A short name for logs: the first 8 bytes of SHA-256 of the encoding, in hex.
    public var fingerprint: String {
        SHA256.hash(data: Array(encoded.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// One stanza carrying `fileKey` (16 bytes) to this recipient.
    func wrap(fileKey: SymmetricKey) throws -> AgeStanza {
        switch kind {
        case .x25519:
            let ephemeral = Curve25519.KeyAgreement.PrivateKey()
            let share = Array(ephemeral.publicKey.rawRepresentation)
            let shared = try ephemeral.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: key))
            let wrapKey = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: share + key,
                                                         sharedInfo: Array(AgeX25519.info.utf8), outputByteCount: 32)
            return AgeStanza(arguments: ["X25519", AgeBase64.encodeString(share)], body: try AgeWrap.seal(fileKey, with: wrapKey))
        case .postQuantum:
            var sender = try HPKE.Sender(recipientKey: XWingMLKEM768X25519.PublicKey(rawRepresentation: key),
                                         ciphersuite: AgeXWing.suite, info: Data(AgeXWing.info.utf8))
            let body = try fileKey.withUnsafeBytes { try sender.seal($0) }
            return AgeStanza(arguments: ["mlkem768x25519", AgeBase64.encodeString(sender.encapsulatedKey)], body: Array(body))
        }
    }
}

/// The file-key wrap both X25519 and scrypt stanzas use: ChaCha20-Poly1305, zero nonce.
enum AgeWrap {
    static let fileKeyCount = 16

    static func seal(_ fileKey: SymmetricKey, with key: SymmetricKey) throws -> [UInt8] {
        let box = try fileKey.withUnsafeBytes { try ChaChaPoly.seal($0, using: key, nonce: ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 12))) }
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// The file key, or nil if the tag does not verify. The body length is checked (32)
    /// before anything is decrypted.
    static func open(_ body: [UInt8], with key: SymmetricKey) throws -> SymmetricKey? {
        guard body.count == fileKeyCount + 16 else { throw AgeError.header("a stanza body is not 32 bytes") }
        let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 12)),
                                           ciphertext: body[..<fileKeyCount], tag: body[fileKeyCount...])
        guard var plain = try? ChaChaPoly.open(box, using: key) else { return nil }
        defer { plain.resetBytes(in: 0..<plain.count) }
        return SymmetricKey(data: plain)
    }
}

enum AgeX25519 {
    static let info = "age-encryption.org/v1/X25519"
}

enum AgeXWing {
    static let info = "age-encryption.org/mlkem768x25519"
    static let suite = HPKE.Ciphersuite(kem: .XWingMLKEM768X25519, kdf: .HKDF_SHA256, aead: .chaChaPoly)
}
