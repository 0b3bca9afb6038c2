// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto

/// An age file written as its plaintext is pushed in (or, for a vault item, handed over as a
/// range to read): the header goes out first, then the payload's 64 KiB chunks, sealed 8 at
/// a time on a second thread and this one and written 512 KiB at a time (`AgeSealPipeline`); a
/// full chunk is sealed as not the last only once the next byte shows it is not; `finish()`
/// seals the final chunk (and the armor's last lines). Twelve slots of 8 chunks of memory,
/// whatever the size.
public struct AgeEncryptor<K: ByteSink>: ByteSink {
    private var plain: K?
    private var armored: AgeArmorEncoder<K>?
    let sealer: AgeSealPipeline
    private var finished = false

    /// Starts a file to `recipients` (post-quantum and classical are not mixed).
    public init(to sink: K, recipients: [AgeRecipient], armor: Bool = false) throws {
        guard !recipients.isEmpty else { throw AgeError.key("no recipient given") }
        guard Set(recipients.map(\.isPostQuantum)).count == 1 else {
            throw AgeError.key("post-quantum (age1pq1…) and classical (age1…) recipients cannot share one file; make one file for each kind")
        }
        let fileKey = SymmetricKey(size: .bits128)
        try self.init(to: sink, stanzas: recipients.map { try $0.wrap(fileKey: fileKey) }, fileKey: fileKey, armor: armor)
    }

    /// Starts a file under a passphrase (one scrypt stanza, alone).
    public init(to sink: K, passphrase: SecretBytes, workFactor: Int = 18, armor: Bool = false) throws {
        guard passphrase.count > 0 else { throw Nu11Error(.invalidArgument, "the passphrase is empty", remedy: .longerPIN) }
        guard (10...AgeIdentity.defaultMaxWorkFactor).contains(workFactor) else {
            throw Nu11Error(.invalidArgument, "the scrypt work factor must be 10 to \(AgeIdentity.defaultMaxWorkFactor)")
        }
        let fileKey = SymmetricKey(size: .bits128)
        let stanza = try AgeScrypt.wrap(fileKey: fileKey, passphrase: passphrase, workFactor: workFactor)
        try self.init(to: sink, stanzas: [stanza], fileKey: fileKey, armor: armor)
    }

    private init(to sink: K, stanzas: [AgeStanza], fileKey: SymmetricKey, armor: Bool) throws {
        let nonce = SecureRandom.bytes(AgePayload.nonceSize)
        sealer = try AgeSealPipeline(key: AgePayload.payloadKey(fileKey: fileKey, nonce: nonce))
        if armor { armored = try AgeArmorEncoder(sink) } else { plain = sink }
        try emit(AgeHeader.encode(stanzas: stanzas, fileKey: fileKey) + nonce)
    }

    private mutating func emit(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try emit($0) }
    }

    private mutating func emit(_ bytes: UnsafeRawBufferPointer) throws {
        if plain != nil { try plain?.write(bytes) } else { try armored?.write(bytes) }
    }

    public mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !finished else { throw Nu11Error(.internalError, "an age file was written to after its end") }
        let sealer = sealer
        try sealer.write(bytes) { try emit($0) }
    }

    /// Takes all of `range`'s plaintext, as `write` would, without reading it on this thread:
    /// the slots that hold it read it (a vault item: decrypt it straight into the slot) when
    /// they are sealed, on the sealer thread or this one. A failed read is thrown by a later
    /// `write`, `write(range:)` or `finish`, in order, before anything after it is written.
    public mutating func write(range: some PlaintextRange) throws {
        guard !finished else { throw Nu11Error(.internalError, "an age file was written to after its end") }
        let sealer = sealer
        try sealer.write(range: range) { try emit($0) }
    }

    /// Seals the final chunk and hands back the sink.
    public mutating func finish() throws -> K {
        guard !finished else { throw Nu11Error(.internalError, "an age file was finished twice") }
        finished = true
        let sealer = sealer
        try sealer.finish { try emit($0) }
        if var armored {
            try armored.finish()
            return armored.base
        }
        guard let plain else { throw Nu11Error(.internalError, "an age file has no output") }
        return plain
    }
}
