// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11Cipher
import Crypto

/// The chunk cipher's backend: the only Swift file that imports `CNu11Cipher` (OpenSSL's EVP
/// and the fault-safe input mapping), as swift-crypto keeps BoringSSL behind its `_boring`
/// files. Everything above it (`ChunkAEAD`, the pipeline, the readers) speaks Swift types:
/// `ChunkAlgorithm`, `SymmetricKey`, buffers and `Nu11Error`. SourceHygieneTests checks that
/// no other file imports the C module.
///
/// A keyed OpenSSL EVP context for one message (the key schedule runs once; each chunk sets
/// only its nonce). One thread uses it at a time; freeing it cleanses the key schedule.
final class ChunkCipher {
    private let ctx: OpaquePointer

    init(algorithm: ChunkAlgorithm, key: SymmetricKey) throws {
        let id: Int32 = switch algorithm {
        case .chacha20Poly1305: Int32(N11C_CHACHA20_POLY1305)
        case .aes256GCM: Int32(N11C_AES_256_GCM)
        }
        let made = key.withUnsafeBytes { k -> OpaquePointer? in
            guard k.count == 32, let base = k.baseAddress else { return nil }
            return n11c_new(id, base.assumingMemoryBound(to: UInt8.self))
        }
        guard let made else {
            throw Nu11Error(.internalError, "OpenSSL could not make a cipher context",
                            remedy: .advice(.reinstallOpenSSL))
        }
        ctx = made
    }

    deinit { n11c_free(ctx) }

    /// Seals `input` as chunks from `first` (see n11c_seal_chunks); `output` must hold
    /// `input.count + chunks × 16` bytes. A fault on a mapped input throws `.io`.
    func sealChunks(baseNonce: [UInt8], first: UInt64, input: UnsafeRawBufferPointer, final: Bool,
                    output: UnsafeMutableRawBufferPointer) throws {
        let chunk = ChunkedScheme.chunkSize
        let count = input.count / chunk + (final ? 1 : 0)
        guard output.count >= input.count + count * 16, let out = output.baseAddress else {
            throw Nu11Error(.internalError, "chunk output buffer is too small")
        }
        let rc = baseNonce.withUnsafeBufferPointer { n in
            n11c_seal_chunks(ctx, n.baseAddress, first, chunk, input.baseAddress?.assumingMemoryBound(to: UInt8.self),
                             input.count, final ? 1 : 0, out.assumingMemoryBound(to: UInt8.self))
        }
        if rc == -2 { throw ChunkCipher.fileChanged }
        guard rc == 0 else { throw Nu11Error(.internalError, "sealing a chunk failed") }
    }

    /// Opens whole chunks (`input` holds chunk ‖ tag pieces, the last possibly short but at
    /// least a tag). Returns the plaintext bytes written and, when a chunk failed, its
    /// number counted from `first` (the output then holds the chunks before it).
    func openChunks(baseNonce: [UInt8], first: UInt64, input: UnsafeRawBufferPointer,
                    output: UnsafeMutableRawBufferPointer) throws -> (written: Int, failed: UInt64?) {
        var opened = 0, written = 0
        let rc = baseNonce.withUnsafeBufferPointer { n in
            n11c_open_chunks(ctx, n.baseAddress, first, ChunkedScheme.chunkSize,
                             input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count,
                             output.baseAddress?.assumingMemoryBound(to: UInt8.self), &opened, &written)
        }
        if rc == -2 { throw ChunkCipher.fileChanged }
        return (written, rc == 0 ? nil : first + UInt64(opened))
    }

    static let fileChanged = Nu11Error(.io, "the file changed size while it was being read",
                                       remedy: .advice(.waitForWriter))

    /// Seals one chunk (plaintext ‖ tag into `output`).
    func seal(_ plaintext: UnsafeRawBufferPointer, nonce: [UInt8], into output: UnsafeMutableRawBufferPointer) throws {
        guard nonce.count == 12, output.count == plaintext.count + 16, let out = output.baseAddress else {
            throw Nu11Error(.internalError, "chunk cipher: bad buffer sizes")
        }
        let o = out.assumingMemoryBound(to: UInt8.self)
        let rc = nonce.withUnsafeBufferPointer { n in
            n11c_seal(ctx, n.baseAddress, plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), plaintext.count,
                      plaintext.isEmpty ? nil : o, o + plaintext.count)
        }
        guard rc == 0 else { throw Nu11Error(.internalError, "sealing a chunk failed") }
    }

    /// Opens one chunk (ciphertext ‖ tag) into `output` (ciphertext.count - 16 bytes); zeroed
    /// on failure.
    func open(_ ciphertext: UnsafeRawBufferPointer, nonce: [UInt8], into output: UnsafeMutableRawBufferPointer) throws {
        guard nonce.count == 12, ciphertext.count >= 16, output.count == ciphertext.count - 16,
              let c = ciphertext.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw Nu11Error(.corrupted, "chunk cipher: bad buffer sizes")
        }
        let body = ciphertext.count - 16
        let rc = nonce.withUnsafeBufferPointer { n in
            n11c_open(ctx, n.baseAddress, body > 0 ? c : nil, body, c + body,
                      body > 0 ? output.baseAddress?.assumingMemoryBound(to: UInt8.self) : nil)
        }
        guard rc == 0 else { throw Nu11Error(.corrupted, "chunk authentication failed") }
    }
}

/// The version of the cipher library, for the benchmark and `nu11vlt --version`-style reports.
public var cipherBackendDescription: String { String(cString: n11c_version()) }

/// One keyed chunk sealer on the shipped backend, for callers outside this module that seal
/// chunk by chunk with one key (the cipher benchmark): the key schedule runs once.
public final class ChunkSealer {
    private let cipher: ChunkCipher
    public init(_ algorithm: ChunkAlgorithm, key: SymmetricKey) throws { cipher = try ChunkCipher(algorithm: algorithm, key: key) }
    /// Seals into exactly `plaintext.count + 16` bytes of `output`.
    public func seal(_ plaintext: UnsafeRawBufferPointer, nonce: [UInt8], into output: UnsafeMutableRawBufferPointer) throws {
        try cipher.seal(plaintext, nonce: nonce, into: output)
    }
}

/// A read-only mapping of part of a regular file, populated up front, so that a file cut short
/// while it is read faults inside the backend (reported as `ChunkCipher.fileChanged`) rather
/// than in Swift.
struct MappedInput {
    let bytes: UnsafeRawBufferPointer
    private let address: UnsafePointer<UInt8>
    private let offset: UInt64

    init(fd: Int32, offset: UInt64, count: Int) throws {
        guard let address = n11c_map(fd, offset, count) else {
            throw SystemIO.error("mmap", item: "the input")
        }
        self.address = address
        self.offset = offset
        bytes = UnsafeRawBufferPointer(start: address, count: count)
    }

    func unmap() { n11c_unmap(address, offset, bytes.count) }
}
