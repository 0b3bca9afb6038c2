// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

@Suite("streaming and random access")
struct StreamingTests {
    @Test("streaming round trip through file descriptors, with random-access ranges")
    func fileRoundTrip() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("n11-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = SecureRandom.bytes(5 * ChunkedScheme.chunkSize + 123)
        let key = SecretBytes(randomCount: 32)
        let ct = try ChunkedEncryption<ChaCha20Poly1305Chunks>.seal(plain, key: key, context: [9])
        let path = dir.appendingPathComponent("c").path
        FileManager.default.createFile(atPath: path, contents: Data(ct))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        let reader = try ChunkedRandomAccessReader<ChaCha20Poly1305Chunks, FileDescriptorStream>(
            source: FileDescriptorStream(fd: fd, label: "c"), key: key, context: [9])
        #expect(reader.plaintextLength == UInt64(plain.count))
        let c = ChunkedScheme.chunkSize
        for (o, n) in [(0, 10), (c - 1, 2), (2 * c, c), (plain.count - 1, 1), (plain.count - 100, 1000), (plain.count, 5)] {
            #expect(try reader.read(offset: UInt64(o), count: n) == Array(plain[o..<min(plain.count, o + n)]))
        }
        #expect(throws: Nu11Error.self) { _ = try reader.read(offset: UInt64(plain.count + 1), count: 1) }
        // Corrupt the middle chunk: ranges that avoid it still read; those that touch it fail.
        var damaged = ct
        damaged[ChunkedScheme.headerByteCount + 2 * (c + 16) + 7] ^= 1
        let damagedReader = try ChunkedRandomAccessReader<ChaCha20Poly1305Chunks, MemorySource>(
            source: MemorySource(damaged), key: key, context: [9])
        #expect(try damagedReader.read(offset: 0, count: c) == Array(plain[0..<c]))
        #expect(throws: Nu11Error.self) { _ = try damagedReader.read(offset: UInt64(2 * c + 5), count: 1) }
    }

    @Test("a decryption error is sticky and releases nothing of the bad chunk")
    func sticky() throws {
        let key = SecretBytes(randomCount: 32)
        let plain = SecureRandom.bytes(3 * ChunkedScheme.chunkSize)
        var ct = try ChunkedEncryption<ChaCha20Poly1305Chunks>.seal(plain, key: key, context: [])
        ct[ChunkedScheme.headerByteCount + (ChunkedScheme.chunkSize + 16) + 1] ^= 1
        let d = try ChunkedDecryptor<ChaCha20Poly1305Chunks, MemorySource>(source: MemorySource(ct), key: key, context: [])
        var out = [UInt8]()
        #expect(try d.nextChunk(appendingTo: &out))
        #expect(out == Array(plain[0..<ChunkedScheme.chunkSize]))
        #expect(throws: Nu11Error.self) { _ = try d.nextChunk(appendingTo: &out) }
        #expect(throws: Nu11Error.self) { _ = try d.nextChunk(appendingTo: &out) }
        #expect(out.count == ChunkedScheme.chunkSize)
    }
}
