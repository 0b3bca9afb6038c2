// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// Push-style streaming decryption, for readers that hand out bytes (a ZIP entry's
/// consumer). Same guarantees as `ChunkedDecryptor`: the commitment is checked before any
/// chunk; a chunk's plaintext is passed on only after it authenticated; a full chunk is
/// never final, so `finish()` reports truncation when the short final chunk is missing;
/// errors are sticky.
public final class ChunkedPushDecryptor<AEAD: ChunkAEAD> {
    private let inputKey: SecretBytes
    private let context: [UInt8]
    private var keys: MessageKeys<AEAD>?
    private var buffer: [UInt8] = []
    private var index: UInt64 = 0
    private var failure: Nu11Error?
    private var finished = false
    public private(set) var plaintextLength: UInt64 = 0

    public init(key: SecretBytes, context: [UInt8]) throws {
        try ChunkedScheme.checkKey(key, AEAD.self)
        inputKey = key
        self.context = context
        buffer.reserveCapacity(ChunkedScheme.encryptedChunkSize(AEAD.self) * 2)
    }

    deinit { secureZero(&buffer) }

    /// Feeds ciphertext; `output` receives authenticated plaintext chunks.
    public func feed(_ bytes: some Collection<UInt8>, output: ([UInt8]) throws -> Void) throws {
        try guarded {
            guard !finished else { throw Nu11Error(.corrupted, "data after the end of the ciphertext") }
            buffer.append(contentsOf: bytes)
            if keys == nil {
                guard buffer.count >= ChunkedScheme.headerByteCount else { return }
                try readHeader()
            }
            let full = ChunkedScheme.encryptedChunkSize(AEAD.self)
            // Keep the last bytes until more arrive: a chunk is known to be full (hence not
            // final) only once it is complete.
            while buffer.count >= full {
                try output(open(buffer[0..<full]))
                buffer.removeFirst(full)
            }
        }
    }

    /// Ends the stream: the rest must be a short final chunk.
    public func finish(output: ([UInt8]) throws -> Void) throws {
        try guarded {
            guard !finished else { return }
            if keys == nil {
                guard buffer.count >= ChunkedScheme.headerByteCount else {
                    throw ChunkedScheme.shortHeader()
                }
                try readHeader()
            }
            guard !buffer.isEmpty else {
                throw ChunkedScheme.noFinalChunk()
            }
            guard buffer.count >= AEAD.tagByteCount else {
                throw ChunkedScheme.endsInsideTag()
            }
            try output(open(buffer[...]))
            buffer.removeAll()
            finished = true
        }
    }

    private func guarded(_ body: () throws -> Void) throws {
        if let failure { throw failure }
        do {
            try body()
        } catch let error as Nu11Error {
            failure = error
            throw error
        } catch {
            let wrapped = Nu11Error(.io, "output failed: \(error)")
            failure = wrapped
            throw wrapped
        }
    }

    private func readHeader() throws {
        keys = try MessageKeys<AEAD>(header: buffer.prefix(ChunkedScheme.headerByteCount), inputKey: inputKey, context: context)
        buffer.removeFirst(ChunkedScheme.headerByteCount)
    }

    private func open(_ sealed: ArraySlice<UInt8>) throws -> [UInt8] {
        guard let keys else { throw Nu11Error(.internalError, "no keys") }
        guard index < ChunkedScheme.maxChunks else { throw ChunkedScheme.tooManyChunks() }
        var out = [UInt8]()
        do {
            try Array(sealed).withUnsafeBytes { try keys.open($0, index: index, appendingTo: &out) }
        } catch {
            throw ChunkedScheme.chunkFailed(index)
        }
        index += 1
        plaintextLength += UInt64(out.count)
        return out
    }
}

/// Push-style streaming encryption: plaintext is fed in pieces; sealed bytes go to `output`
/// (the 56-byte header first). A full 16 KiB chunk is sealed as soon as it is complete — a
/// full chunk is never final — and `finish` seals the short (possibly empty) final chunk.
/// The pending chunk lives in one fixed buffer, zeroed whole after each chunk is sealed
/// (the last one too) and when the encryptor is freed.
public final class ChunkedPushEncryptor<AEAD: ChunkAEAD> {
    private let keys: MessageKeys<AEAD>
    private var header: [UInt8]?
    let pending = PlainScratch(capacity: ChunkedScheme.chunkSize, label: "ChunkedPushEncryptor.pending")
    private var index: UInt64 = 0
    public private(set) var plaintextLength: UInt64 = 0

    public init(key: SecretBytes, context: [UInt8]) throws {
        let salt = SecureRandom.bytes(ChunkedScheme.saltByteCount)
        keys = try MessageKeys<AEAD>(inputKey: key, salt: salt, context: context)
        header = salt + keys.commitment
    }

    public func feed(_ bytes: some Collection<UInt8>, output: ([UInt8]) throws -> Void) throws {
        if let h = header {
            header = nil
            try output(h)
        }
        plaintextLength += UInt64(bytes.count)
        let done: Void? = try bytes.withContiguousStorageIfAvailable { try take(UnsafeRawBufferPointer($0), output: output) }
        if done == nil {
            var copy = Array(bytes)
            defer { secureZero(&copy) }
            try copy.withUnsafeBytes { try take($0, output: output) }
        }
    }

    private func take(_ source: UnsafeRawBufferPointer, output: ([UInt8]) throws -> Void) throws {
        var at = 0
        while at < source.count {
            at += pending.append(UnsafeRawBufferPointer(rebasing: source[at...]))
            if pending.count == ChunkedScheme.chunkSize {
                // A full chunk is never final: sealed as soon as it is complete.
                let sealed = try seal(pending.used)
                pending.wipe("after a chunk")
                try output(sealed)
            }
        }
    }

    public func finish(output: ([UInt8]) throws -> Void) throws {
        if let h = header {
            header = nil
            try output(h)
        }
        let sealed = try seal(pending.used)
        pending.wipe("after the final chunk")
        try output(sealed)
    }

    private func seal(_ plain: UnsafeRawBufferPointer) throws -> [UInt8] {
        guard index < ChunkedScheme.maxChunks else { throw Nu11Error(.invalidArgument, "message exceeds 2^38 chunks") }
        var out = [UInt8]()
        try keys.seal(plain, index: index, appendingTo: &out)
        index += 1
        return out
    }
}
