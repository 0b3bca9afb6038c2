// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto

/// age v1 (c2sp.org/age), written from the spec: files others can open with `age -d`, and
/// files from `age -e` / `age -p` opened here. Streaming, constant memory: the header is
/// parsed line by line, the payload goes through in 64 KiB chunks, and a plaintext chunk
/// reaches the sink only once it is authenticated.
public enum Age {
    /// How the input is read: armored (PEM), binary, or whichever it is.
    public enum ArmorMode: Sendable { case detect, armored, binary }

    /// Encrypts all of `source` to the recipients. Post-quantum and classical recipients are
    /// not mixed in one file (the spec: that would give up the post-quantum protection).
    public static func encrypt<S: ByteSource, K: ByteSink>(from source: inout S, to sink: inout K,
                                                          recipients: [AgeRecipient], armor: Bool = false) throws {
        var encryptor = try AgeEncryptor(to: sink, recipients: recipients, armor: armor)
        sink = try pump(&source, into: &encryptor)
    }

    /// Encrypts all of `source` under a passphrase (an scrypt stanza, alone in its header).
    public static func encrypt<S: ByteSource, K: ByteSink>(from source: inout S, to sink: inout K, passphrase: SecretBytes,
                                                          workFactor: Int = 18, armor: Bool = false) throws {
        var encryptor = try AgeEncryptor(to: sink, passphrase: passphrase, workFactor: workFactor, armor: armor)
        sink = try pump(&source, into: &encryptor)
    }

    private static func pump<S: ByteSource, K: ByteSink>(_ source: inout S, into encryptor: inout AgeEncryptor<K>) throws -> K {
        var buffer = [UInt8](repeating: 0, count: AgePayload.chunkSize)
        defer { buffer.withUnsafeMutableBytes { Sodium.zero($0) } }
        while true {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            try buffer.withUnsafeBytes { try encryptor.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        }
        return try encryptor.finish()
    }

    /// Decrypts `source` to `sink` with the identities. When the file is passphrase-encrypted
    /// and no passphrase identity is given, `passphrase` is asked (once). Throws with an
    /// `AgeFailure` class; whatever reached `sink` before a payload failure was authenticated,
    /// but the file as a whole is good only if this returns.
    public static func decrypt<S: ByteSource, K: ByteSink>(from source: S, to sink: inout K, identities: [AgeIdentity],
                                                          armor: ArmorMode = .detect,
                                                          passphrase: (() throws -> SecretBytes)? = nil) throws {
        var reader = try AgeDecryptingSource(source, identities: identities, armor: armor, passphrase: passphrase)
        var buffer = [UInt8](repeating: 0, count: AgePayload.chunkSize)
        defer { buffer.withUnsafeMutableBytes { Sodium.zero($0) } }
        while true {
            let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            if n == 0 { return }
            try buffer.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        }
    }

    static func unwrap(_ header: AgeHeader, identities: [AgeIdentity], passphrase: (() throws -> SecretBytes)?) throws -> SymmetricKey {
        var candidates = identities
        if header.stanzas.contains(where: { $0.type == "scrypt" }) {
            guard header.stanzas.count == 1 else { throw AgeError.header("an scrypt stanza is not alone in the header") }
            if !candidates.contains(where: { $0.kind == .passphrase }), let passphrase {
                candidates.append(.passphrase(try passphrase()))
            }
        }
        for identity in candidates {
            for stanza in header.stanzas {
                if let fileKey = try identity.unwrap(stanza) { return fileKey }
            }
        }
        throw AgeError.noMatch
    }
}

/// An age file's plaintext as a `ByteSource`: the header is read and the file key unwrapped
/// when it is made; reading returns authenticated plaintext, 0 only after the final chunk
/// checked out with nothing after it, and throws on any other end. A consumer that must not
/// keep anything of a damaged file (an import) commits only after reading 0.
public struct AgeDecryptingSource: ByteSource {
    private var payload: AgePayloadReader
    /// Whether the file was passphrase-encrypted.
    public let wasPassphrase: Bool

    public init(_ source: some ByteSource, identities: [AgeIdentity], armor: Age.ArmorMode = .detect,
                passphrase: (() throws -> SecretBytes)? = nil) throws {
        var reader = AgeReader(AnyByteSource(base: source))
        var armored = armor == .armored
        if armor == .detect {
            // Whitespace may precede an armored file; "-----BEGIN" says it is one.
            var skipped = false
            while let c = try reader.peek(), AgeArmor.isSpace(c) {
                reader.skipByte()
                skipped = true
            }
            armored = try reader.peek() == UInt8(ascii: "-")
            if !armored, skipped { throw AgeError.header("not an age file (it starts with white space)") }
        }
        var inner = armored ? AgeReader(AnyByteSource(base: try AgeArmorDecoder(reader))) : reader
        let header = try AgeHeader.parse(&inner)
        let fileKey = try Age.unwrap(header, identities: identities, passphrase: passphrase)
        try header.verify(fileKey: fileKey)
        wasPassphrase = header.stanzas.first?.type == "scrypt"
        payload = try AgePayloadReader(fileKey: fileKey, source: AnyByteSource(base: inner))
    }

    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        do {
            let n = try payload.read(into: buffer)
            if n == 0 { payload.wipe() }
            return n
        } catch {
            payload.wipe()
            throw error
        }
    }
}
