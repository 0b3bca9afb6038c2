// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11Cipher
import Crypto
import Foundation
import Testing
import Nu11CipherBench
@testable import Nu11Format

/// The content pipeline (mapped and streamed input, many batches, workers) against the
/// one-chunk-at-a-time definition, and the cipher backends against each other.
@Suite("content pipeline and cipher backends")
struct PipelineTests {
    typealias Chunks = ChaCha20Poly1305Chunks
    static let c = ChunkedScheme.chunkSize
    static let batch = ChunkPipeline.chunksPerBatch * c
    /// Sizes around every boundary: empty, chunk, batch, several batches (more than the ring).
    /// (Streams cut 64-chunk batches; a mapped file at least 32 chunks, cut for the workers.)
    static let sizes = [0, 1, c - 1, c, c + 1, 32 * c - 1, 32 * c, 32 * c + 1, 48 * c + 3, batch - 1, batch, batch + 1,
                        3 * batch + 7, 4 * batch, 4 * batch + 1, 13 * batch + c + 5]

    /// The reference: each chunk sealed on its own through the single-chunk API.
    static func reference<A: ChunkAEAD>(_: A.Type, _ plain: [UInt8], key: SecretBytes, salt: [UInt8], context: [UInt8]) throws -> [UInt8] {
        let keys = try MessageKeys<A>(inputKey: key, salt: salt, context: context)
        var out = salt + keys.commitment
        var i = 0
        var index: UInt64 = 0
        repeat {
            let n = min(c, plain.count - i)
            try plain.withUnsafeBytes { p in
                try A.seal(UnsafeRawBufferPointer(rebasing: p[i..<(i + n)]), key: keys.key, nonce: keys.nonce(index), appendingTo: &out)
            }
            i += n
            index += 1
            if n < c { break }
        } while true
        return out
    }

    static func tempFile(_ bytes: [UInt8]) throws -> (path: String, cleanup: () -> Void) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("n11-pipe-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return (path, { try? FileManager.default.removeItem(atPath: path) })
    }

    @Test("sealing, streamed and mapped, equals the chunk-by-chunk definition at every batch boundary, and opens back", arguments: sizes)
    func sealEqualsReference(size: Int) throws {
        let plain = SecureRandom.bytes(size)
        let key = SecretBytes(randomCount: 32)
        let salt = SecureRandom.bytes(ChunkedScheme.saltByteCount)
        let expected = try Self.reference(Chunks.self, plain, key: key, salt: salt, context: [1, 2])
        var streamed = MemorySink()
        var memory = MemorySource(plain)
        try ChunkedEncryption<Chunks>.encrypt(from: &memory, to: &streamed, key: key, context: [1, 2], salt: salt)
        #expect(same(streamed.bytes, expected), "streamed")
        let file = try Self.tempFile(plain)
        defer { file.cleanup() }
        let fd = open(file.path, O_RDONLY)
        defer { close(fd) }
        var source = FileDescriptorStream(fd: fd, label: "plain")
        var mapped = MemorySink()
        #expect(try ChunkedEncryption<Chunks>.encrypt(from: &source, to: &mapped, key: key, context: [1, 2], salt: salt) == UInt64(size))
        #expect(same(mapped.bytes, expected), "mapped")
        #expect(lseek(fd, 0, SEEK_CUR) == off_t(size))  // the position moved past what was consumed
        // Opening, streamed and from the file.
        var opened = MemorySink()
        #expect(try ChunkedEncryption<Chunks>.decrypt(from: MemorySource(expected), to: &opened, key: key, context: [1, 2]) == UInt64(size))
        #expect(same(opened.bytes, plain), "opened")
        let sealedFile = try Self.tempFile(expected)
        defer { sealedFile.cleanup() }
        let sfd = open(sealedFile.path, O_RDONLY)
        defer { close(sfd) }
        var fromFile = MemorySink()
        try ChunkedEncryption<Chunks>.decrypt(from: FileDescriptorStream(fd: sfd, label: "sealed"), to: &fromFile, key: key, context: [1, 2])
        #expect(same(fromFile.bytes, plain), "opened from a file")
    }

    @Test("a damaged chunk in a late batch: the error names it and only the chunks before it come out, streamed and mapped")
    func damagedChunk() throws {
        let plain = SecureRandom.bytes(9 * Self.batch + 99)
        let key = SecretBytes(randomCount: 32)
        var ct = try ChunkedEncryption<Chunks>.seal(plain, key: key, context: [])
        let bad = 7 * ChunkPipeline.chunksPerBatch + 5
        ct[ChunkedScheme.headerByteCount + bad * (Self.c + 16) + 3] ^= 0x40
        let file = try Self.tempFile(ct)
        defer { file.cleanup() }
        let fd = open(file.path, O_RDONLY)
        defer { close(fd) }
        for source in [AnySource(MemorySource(ct)), AnySource(FileDescriptorStream(fd: fd, label: "ct"))] {
            _ = lseek(fd, 0, SEEK_SET)
            var sink = MemorySink()
            let error = #expect(throws: Nu11Error.self) {
                try ChunkedEncryption<Chunks>.decrypt(from: source, to: &sink, key: key, context: [])
            }
            #expect(error?.code == .corrupted)
            #expect(error?.message.contains("chunk \(bad) failed") == true)
            #expect(same(sink.bytes, Array(plain[0..<(bad * Self.c)])), "the authenticated prefix")
        }
    }

    @Test("truncation anywhere is refused with the right error, and never yields a byte past the cut",
          arguments: [0, 1, 15, 16, 17, Self.c + 16, ChunkPipeline.chunksPerBatch * (Self.c + 16), ChunkPipeline.chunksPerBatch * (Self.c + 16) + 8])
    func truncation(keep: Int) throws {
        let plain = SecureRandom.bytes(2 * Self.batch)  // an exact multiple: the final chunk is empty
        let key = SecretBytes(randomCount: 32)
        let ct = try ChunkedEncryption<Chunks>.seal(plain, key: key, context: [])
        let cut = Array(ct[0..<(ChunkedScheme.headerByteCount + keep)])
        var sink = MemorySink()
        let error = #expect(throws: Nu11Error.self) {
            try ChunkedEncryption<Chunks>.decrypt(from: MemorySource(cut), to: &sink, key: key, context: [])
        }
        #expect(error?.code == .truncated || error?.code == .corrupted)
        #expect(sink.bytes.count <= keep)
        #expect(same(sink.bytes, Array(plain[0..<sink.bytes.count])), "a prefix of the plaintext")
        // Cutting off only the empty final chunk is truncation, not a valid shorter message.
        var whole = MemorySink()
        let lastCut = Array(ct[0..<(ct.count - 16)])
        #expect(throws: Nu11Error.self) { try ChunkedEncryption<Chunks>.decrypt(from: MemorySource(lastCut), to: &whole, key: key, context: []) }
    }

    @Test("a mapped input that shrinks under the cipher is an error, not a crash")
    func shrinkingFile() throws {
        let file = try Self.tempFile(SecureRandom.bytes(4 * Self.batch))
        defer { file.cleanup() }
        let fd = open(file.path, O_RDWR)
        defer { close(fd) }
        guard let address = n11c_map(fd, 0, 4 * Self.batch) else {
            Issue.record("mapping failed")
            return
        }
        defer { n11c_unmap(address, 0, 4 * Self.batch) }
        #expect(ftruncate(fd, 0) == 0)
        let cipher = try ChunkCipher(algorithm: Chunks.algorithm, key: SymmetricKey(size: .bits256))
        var out = [UInt8](repeating: 0, count: 4 * Self.batch + 4 * ChunkPipeline.chunksPerBatch * 16 + 16)
        let error = #expect(throws: Nu11Error.self) {
            try out.withUnsafeMutableBytes { o in
                try cipher.sealChunks(baseNonce: [UInt8](repeating: 0, count: 12), first: 0,
                                      input: UnsafeRawBufferPointer(start: address, count: 4 * Self.batch), final: true, output: o)
            }
        }
        #expect(error?.code == .io)
    }

    @Test("every cipher candidate produces the same bytes on random inputs (OpenSSL, swift-crypto, libsodium)",
          arguments: CipherCandidate.Algorithm.allCases)
    func crossCheck(algorithm: CipherCandidate.Algorithm) throws {
        for length in [0, 1, 15, 16, 17, 63, 64, 65, 1000, Self.c - 1, Self.c] {
            let key = SecureRandom.bytes(32), nonce = SecureRandom.bytes(12), plain = SecureRandom.bytes(length)
            var outputs: [[UInt8]] = []
            for candidate in CipherCandidate.allCases where candidate.supports(algorithm) {
                var out = [UInt8](repeating: 0, count: length + 16)
                try plain.withUnsafeBytes { p in try out.withUnsafeMutableBytes { try candidate.sealer(algorithm, key: key)(nonce, p, $0) } }
                outputs.append(out)
            }
            #expect(outputs.count >= 2)
            #expect(Set(outputs).count == 1, "candidates disagree at \(length) bytes")
            // And the shipped one opens it, and refuses any flipped bit.
            let aead: any ChunkAEAD.Type = algorithm == .aes256GCM ? AES256GCMChunks.self : ChaCha20Poly1305Chunks.self
            var back = [UInt8]()
            try outputs[0].withUnsafeBytes { try aead.open($0, key: SymmetricKey(data: key), nonce: nonce, appendingTo: &back) }
            #expect(same(back, plain), "opened")
            var flipped = outputs[0]
            flipped[Int.random(in: 0..<flipped.count)] ^= 1 << UInt8.random(in: 0...7)
            var none = [UInt8]()
            #expect(throws: Nu11Error.self) {
                try flipped.withUnsafeBytes { try aead.open($0, key: SymmetricKey(data: key), nonce: nonce, appendingTo: &none) }
            }
            #expect(none.isEmpty)
        }
    }
}

/// Compares megabytes without handing both arrays to the expectation (whose failure message
/// would print them).
func same(_ a: [UInt8], _ b: [UInt8]) -> Bool { a == b }

/// A source of either kind, for running one test body over both input paths.
struct AnySource: ByteSource {
    private var base: any ByteSource
    init(_ base: any ByteSource) { self.base = base }
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try base.read(into: buffer) }
    func mappableRegion() -> MappableRegion? { base.mappableRegion() }
}

extension PipelineTests {
    @Test("closing the pipeline zeroes what its buffers held (plaintext and ciphertext) before freeing them, streamed and sealed or opened")
    func buffersZeroedOnClose() throws {
        let plain = (0..<(3 * Self.batch + 5)).map { _ in UInt8.random(in: 1...255) }
        let key = SecretBytes(randomCount: 32)
        let keys = try MessageKeys<Chunks>(inputKey: key, salt: [UInt8](repeating: 1, count: 16), context: [2])
        var sealed: [UInt8] = []
        for direction in [ChunkPipeline.Direction.seal, .open] {
            let input = direction == .seal ? plain : sealed
            let pipeline = ChunkPipeline(direction: direction, algorithm: Chunks.algorithm, key: keys.key, baseNonce: keys.baseNonce,
                                         input: .stream(SourceBox(MemorySource(input))))
            var slots = 0, dirty: [String] = []
            pipeline.releaseWitness = { plainBuffer, output, used in
                slots += 1
                if plainBuffer[0..<min(used, plainBuffer.count)].contains(where: { $0 != 0 }) { dirty.append("input buffer") }
                if output[0..<min(used + 256, output.count)].contains(where: { $0 != 0 }) { dirty.append("output buffer") }
            }
            var out: [UInt8] = []
            while try pipeline.next({ out += $0 }) {}
            if direction == .seal { sealed = out } else { #expect(out == plain) }
            pipeline.close()
            #expect(slots > 0, "\(direction): no buffer was released")
            #expect(dirty.isEmpty, "\(direction): left in memory after close: \(dirty)")
        }
    }
}
