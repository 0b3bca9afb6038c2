// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// Plaintext that any thread can read by range, each range straight into the caller's
/// buffer: what the age payload's workers decrypt a vault item from, into the slots they
/// then seal (`AgeEncryptor.write(range:)`), with no copy between the two ciphers.
public protocol PlaintextRange: AnyObject, Sendable {
    /// The authenticated plaintext length.
    var count: UInt64 { get }
    /// Fills all of `buffer` with the plaintext at `offset` (the range lies within `count`),
    /// or throws: only authenticated bytes are written.
    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws
}

/// A chunked message in a file, read by range from several threads at once (`pread` on one
/// descriptor, which this reader owns and closes). Like `ChunkedRandomAccessReader`, opening
/// checks the commitment and authenticates the final chunk, and so the length, before
/// anything is read. A range's whole chunks are read into a reused buffer and opened straight
/// into the caller's buffer; a chunk the range cuts is opened into a scratch chunk and the
/// part in range copied. Each thread borrows a reader of its own (cipher context, ciphertext
/// buffer, scratch chunk) from a small pool.
///
/// Plaintext held here: the final chunk, and each reader's scratch chunk (`PlainScratch`),
/// zeroed after every use and when freed.
public final class ChunkedRange<AEAD: ChunkAEAD>: PlaintextRange, @unchecked Sendable {
    // @unchecked Sendable: after init, `fd`, `keys`, the lengths and `finalPlaintext` are only
    // read (pread is safe from any thread); the pool is guarded by `lock`; a borrowed reader
    // is one thread's until it is given back.
    private let fd: Int32
    private let bodyOffset: UInt64
    private let keys: MessageKeys<AEAD>
    private let fullChunkCount: UInt64
    public let count: UInt64
    /// Names the message in errors ("item 3fa2…").
    private let label: String
    let finalPlaintext: PlainScratch
    private let lock = NSLock()
    private var pool: [Reader] = []
    /// Whole chunks read at once.
    static var chunksPerRead: Int { 32 }
    /// A test seam: given to every plaintext buffer of this reader (`PlainScratch.witness`).
    var plaintextWitness: ((String, String, UnsafeRawBufferPointer) -> Void)? {
        didSet { finalPlaintext.witness = plaintextWitness }
    }

    /// Opens the message at `offset` of `fd` (its salt ‖ commitment first), taking over the
    /// descriptor (closed when the reader is freed, or here on failure).
    public init(owning fd: Int32, offset: UInt64, key: SecretBytes, context: [UInt8], label: String) throws {
        self.fd = fd
        self.label = label
        bodyOffset = offset + UInt64(ChunkedScheme.headerByteCount)
        finalPlaintext = PlainScratch(capacity: ChunkedScheme.chunkSize, label: "ChunkedRange.finalPlaintext")
        do {
            var st = stat()
            guard fstat(fd, &st) == 0 else { throw SystemIO.error("stat", item: label) }
            let total = UInt64(max(0, st.st_size))
            guard total >= bodyOffset else { throw ChunkedScheme.shortHeader() }
            var header = [UInt8](repeating: 0, count: ChunkedScheme.headerByteCount)
            let n = try header.withUnsafeMutableBytes { try SystemIO.read(fd, at: offset, into: $0) }
            guard n == header.count else { throw ChunkedScheme.shortHeader() }
            keys = try MessageKeys<AEAD>(header: header, inputKey: key, context: context)
            let body = total - bodyOffset
            let sealed = UInt64(ChunkedScheme.encryptedChunkSize(AEAD.self))
            let full = body / sealed, remainder = body % sealed
            // Exactly k full chunks means the short final chunk is missing.
            guard remainder != 0 else { throw ChunkedScheme.noFinalChunk() }
            guard remainder >= UInt64(AEAD.tagByteCount) else { throw ChunkedScheme.endsInsideTag() }
            guard full < ChunkedScheme.maxChunks else { throw ChunkedScheme.tooManyChunks() }
            fullChunkCount = full
            count = full * UInt64(ChunkedScheme.chunkSize) + remainder - UInt64(AEAD.tagByteCount)
            let reader = try Reader(keys: keys, chunks: 1, witness: nil)
            try open(reader, first: full, chunks: 1, length: Int(remainder),
                     into: UnsafeMutableRawBufferPointer(rebasing: finalPlaintext.bytes[0..<Int(remainder - UInt64(AEAD.tagByteCount))]))
            finalPlaintext.count = Int(remainder) - AEAD.tagByteCount
        } catch let error as Nu11Error {
            close(fd)
            throw error.code == .io ? error : error.about(label)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        lock.lock()
        pool.removeAll()
        lock.unlock()
        close(fd)
    }

    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws {
        guard offset <= count, UInt64(buffer.count) <= count - offset else {
            throw Nu11Error(.internalError, "a range read past the end of \(label)")
        }
        guard buffer.count > 0, let base = buffer.baseAddress, let last = finalPlaintext.bytes.baseAddress else { return }
        let reader = try borrow()
        defer { giveBack(reader) }
        defer { reader.edge.wipe("after a read") }
        let size = UInt64(ChunkedScheme.chunkSize), chunk = ChunkedScheme.chunkSize
        var position = offset, done = 0
        do {
            while done < buffer.count {
                let index = position / size, within = Int(position % size)
                let want = buffer.count - done
                if index == fullChunkCount {
                    (base + done).copyMemory(from: last + within, byteCount: want)
                    done += want
                } else if within != 0 || want < chunk {
                    // A chunk the range cuts: opened whole into the scratch chunk.
                    try open(reader, first: index, chunks: 1, length: ChunkedScheme.encryptedChunkSize(AEAD.self), into: reader.edge.bytes)
                    let take = min(chunk - within, want)
                    (base + done).copyMemory(from: UnsafeRawPointer(reader.edgeBase) + within, byteCount: take)
                    done += take
                } else {
                    let whole = min(want / chunk, Int(fullChunkCount - index), reader.capacity)
                    try open(reader, first: index, chunks: whole, length: whole * ChunkedScheme.encryptedChunkSize(AEAD.self),
                             into: UnsafeMutableRawBufferPointer(start: base + done, count: whole * chunk))
                    done += whole * chunk
                }
                position = offset + UInt64(done)
            }
        } catch let error as Nu11Error {
            throw error.code == .io ? error : error.about(label)
        }
    }

    /// Reads `chunks` chunks from chunk `first` (`length` ciphertext bytes) and opens them into `output`.
    private func open(_ reader: Reader, first: UInt64, chunks: Int, length: Int, into output: UnsafeMutableRawBufferPointer) throws {
        let at = bodyOffset + first * UInt64(ChunkedScheme.encryptedChunkSize(AEAD.self))
        let sealed = UnsafeMutableRawBufferPointer(rebasing: reader.sealed[0..<length])
        let n = try SystemIO.read(fd, at: at, into: sealed)
        guard n == length else {
            throw Nu11Error(.truncated, "chunk \(first + UInt64(n / ChunkedScheme.encryptedChunkSize(AEAD.self))) is cut short",
                            remedy: .advice(.changedWhileReading))
        }
        let (written, failed) = try reader.cipher.openChunks(baseNonce: keys.baseNonce, first: first,
                                                             input: UnsafeRawBufferPointer(sealed), output: output)
        if let failed { throw ChunkedScheme.chunkFailed(failed) }
        guard written == length - chunks * AEAD.tagByteCount else { throw ChunkedScheme.chunkFailed(first) }
    }

    private func borrow() throws -> Reader {
        lock.lock()
        let reader = pool.popLast()
        lock.unlock()
        return try reader ?? Reader(keys: keys, chunks: Self.chunksPerRead, witness: plaintextWitness)
    }

    private func giveBack(_ reader: Reader) {
        lock.lock()
        pool.append(reader)
        lock.unlock()
    }

    /// One thread's cipher context, ciphertext buffer and scratch chunk.
    final class Reader {
        let cipher: ChunkCipher
        /// Ciphertext only.
        let sealed: UnsafeMutableRawBufferPointer
        let capacity: Int
        let edge: PlainScratch
        let edgeBase: UnsafeMutableRawPointer

        init(keys: MessageKeys<AEAD>, chunks: Int, witness: ((String, String, UnsafeRawBufferPointer) -> Void)?) throws {
            cipher = try ChunkCipher(algorithm: AEAD.algorithm, key: keys.key)
            capacity = chunks
            sealed = .allocate(byteCount: chunks * ChunkedScheme.encryptedChunkSize(AEAD.self), alignment: 64)
            sealed.initializeMemory(as: UInt8.self, repeating: 0)
            edge = PlainScratch(capacity: ChunkedScheme.chunkSize, label: "ChunkedRange.edge")
            edge.witness = witness
            guard let base = edge.bytes.baseAddress else { throw Nu11Error(.internalError, "a scratch chunk has no storage") }
            edgeBase = base
        }

        deinit { sealed.deallocate() }
    }
}
