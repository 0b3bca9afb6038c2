// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto

/// The age payload: a 16-byte nonce, then ChaCha20-Poly1305 over 64 KiB chunks under
/// HKDF-SHA-256(file key, nonce, "payload"), with an 11-byte big-endian counter and a final
/// flag as the chunk nonce (the STREAM construction). Constant memory: two chunks.
enum AgePayload {
    static let chunkSize = 64 << 10
    static let tagSize = 16
    static let sealedChunkSize = chunkSize + tagSize
    static let nonceSize = 16
    /// 2^88 chunks would wrap the counter; far beyond any file, refused anyway.
    static let maxChunks: UInt64 = .max

    static func payloadKey(fileKey: SymmetricKey, nonce: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: nonce, info: Array("payload".utf8), outputByteCount: 32)
    }

    static func chunkNonce(_ counter: UInt64, final: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        for i in 0..<8 { nonce[10 - i] = UInt8(truncatingIfNeeded: counter >> UInt64(8 * i)) }
        nonce[11] = final ? 1 : 0
        return nonce
    }
}

/// Any byte source behind one concrete type (the armored and the binary path alike).
struct AnyByteSource: ByteSource {
    var base: any ByteSource
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try base.read(into: buffer) }
}

/// The payload decrypted as it is read: a chunk is released only once it is authenticated,
/// the end comes only after a valid final chunk with nothing after it, and any other end
/// throws. Two sealed chunks and one plain chunk of memory, whatever the size.
struct AgePayloadReader: ByteSource {
    private var source: AnyByteSource
    private let cipher: ChunkCipher
    private var current = [UInt8](repeating: 0, count: AgePayload.sealedChunkSize)
    private var next = [UInt8](repeating: 0, count: AgePayload.sealedChunkSize)
    private var currentCount = 0
    private var plain = [UInt8](repeating: 0, count: AgePayload.chunkSize)
    private var plainCount = 0
    private var position = 0
    private var counter: UInt64 = 0
    private var finished = false
    /// Thrown once the chunk released before it has been read (a file cut after a whole chunk).
    private var pending: Nu11Error?

    init(fileKey: SymmetricKey, source: AnyByteSource) throws {
        var input = source
        var nonce = [UInt8](repeating: 0, count: AgePayload.nonceSize)
        guard try nonce.withUnsafeMutableBytes({ try input.readFully(into: $0) }) == AgePayload.nonceSize else {
            throw AgeError.header("the payload nonce is missing or short")
        }
        cipher = try ChunkCipher(algorithm: .chacha20Poly1305, key: AgePayload.payloadKey(fileKey: fileKey, nonce: nonce))
        var first = [UInt8](repeating: 0, count: AgePayload.sealedChunkSize)
        currentCount = try first.withUnsafeMutableBytes { try input.readFully(into: $0) }
        current = first
        self.source = input
        guard currentCount > 0 else { throw AgeError.truncated("the payload has no chunk") }
    }

    /// Zeroes the plaintext buffer (call when done with the reader).
    mutating func wipe() { plain.withUnsafeMutableBytes { Sodium.zero($0) } }

    private mutating func open(final: Bool) -> Int? {
        let count = currentCount
        guard count >= AgePayload.tagSize else { return nil }
        let nonce = AgePayload.chunkNonce(counter, final: final)
        let cipher = cipher
        return current.withUnsafeBytes { sealed in
            plain.withUnsafeMutableBytes { out in
                do {
                    try cipher.open(UnsafeRawBufferPointer(rebasing: sealed[..<count]), nonce: nonce,
                                    into: UnsafeMutableRawBufferPointer(rebasing: out[..<(count - AgePayload.tagSize)]))
                    return count - AgePayload.tagSize
                } catch { return nil }
            }
        }
    }

    /// Decrypts the next chunk into `plain`, or marks the end.
    private mutating func advance() throws {
        if let pending { throw pending }
        if currentCount < AgePayload.sealedChunkSize {
            // A short chunk can only be the final one.
            guard currentCount >= AgePayload.tagSize else { throw AgeError.truncated("chunk \(counter) is shorter than its tag") }
            guard let n = open(final: true) else {
                if open(final: false) != nil { throw AgeError.truncated("the payload ends without its final chunk") }
                throw AgeError.payload("chunk \(counter) failed authentication")
            }
            guard n > 0 || counter == 0 else { throw AgeError.payload("the final chunk is empty") }
            release(n, last: true)
            return
        }
        let nextCount = try next.withUnsafeMutableBytes { try source.readFully(into: $0) }
        if nextCount == 0 {
            // A whole chunk at the end: final, or the file was cut after it.
            if let n = open(final: true) {
                release(n, last: true)
                return
            }
            guard let n = open(final: false) else { throw AgeError.payload("chunk \(counter) failed authentication") }
            release(n, last: true)
            pending = AgeError.truncated("the payload ends without its final chunk")
            return
        }
        guard let n = open(final: false) else {
            // A final chunk with more after it: its plaintext is authentic (released, as age
            // does), the file is not.
            guard let last = open(final: true) else { throw AgeError.payload("chunk \(counter) failed authentication") }
            release(last, last: true)
            pending = AgeError.payload("data follows the final chunk")
            return
        }
        release(n, last: false)
        counter += 1
        swap(&current, &next)
        currentCount = nextCount
    }

    private mutating func release(_ n: Int, last: Bool) {
        plainCount = n
        position = 0
        if last { finished = true }
    }

    mutating func read(into out: UnsafeMutableRawBufferPointer) throws -> Int {
        while position == plainCount {
            if finished {
                if let pending { throw pending }
                return 0
            }
            try advance()
        }
        let n = min(out.count, plainCount - position)
        plain.withUnsafeBytes { src in out.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[position..<(position + n)])) }
        position += n
        return n
    }
}
