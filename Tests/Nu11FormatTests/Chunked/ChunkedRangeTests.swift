// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

/// The range reader a share decrypts a vault item with (`ChunkedRange`): every range of every
/// length reads the plaintext, from several threads at once; a damaged or cut message is
/// refused at opening (the final chunk, so the length) or by the range that touches the
/// damage, naming the message; and the age payload fed from ranges (`AgeEncryptor.write(range:)`)
/// opens to the same bytes as one fed by copies.
@Suite("chunked range reads, and the age payload fed from them")
struct ChunkedRangeTests {
    typealias Chunks = ChaCha20Poly1305Chunks
    static let c = ChunkedScheme.chunkSize
    static let sealedChunk = ChunkedScheme.encryptedChunkSize(Chunks.self)

    static func plain(_ count: Int, seed: Int = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 131 &+ ($0 >> 14)) }
    }

    /// A file holding `prefix` bytes and then the chunked message of `plaintext`.
    final class Message {
        let path: String
        let key = SecretBytes(randomCount: 32)
        let context: [UInt8] = Array("range test".utf8)
        let prefix: Int
        init(_ plaintext: [UInt8], prefix: Int = 24) throws {
            self.prefix = prefix
            path = (ProcessInfo.processInfo.environment["TMPDIR"] ?? NSTemporaryDirectory()) + "/range-" + UUID().uuidString
            let sealed = try ChunkedEncryption<Chunks>.seal(plaintext, key: key, context: context)
            try Data([UInt8](repeating: 0xEE, count: prefix) + sealed).write(to: URL(fileURLWithPath: path))
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        func open() throws -> ChunkedRange<Chunks> {
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Nu11Error(.io, "cannot open \(path)") }
            return try ChunkedRange<Chunks>(owning: fd, offset: UInt64(prefix), key: key, context: context, label: "message m")
        }

        func edit(_ body: (inout [UInt8]) -> Void) throws {
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            body(&bytes)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }

        /// Where chunk `i` starts in the file.
        func chunkOffset(_ i: Int) -> Int { prefix + ChunkedScheme.headerByteCount + i * ChunkedRangeTests.sealedChunk }
    }

    static func read(_ range: ChunkedRange<Chunks>, _ offset: Int, _ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        try out.withUnsafeMutableBytes { try range.read(at: UInt64(offset), into: $0) }
        return out
    }

    @Test("every length, ranges inside a chunk, across chunks, in the final chunk and the whole message",
          arguments: [0, 1, c - 1, c, c + 1, 3 * c, 70 * c + 5, 130 * c])
    func ranges(size: Int) throws {
        let plaintext = Self.plain(size)
        let message = try Message(plaintext)
        let range = try message.open()
        #expect(range.count == UInt64(size))
        #expect(try Self.read(range, 0, size) == plaintext)
        var spans: [(Int, Int)] = [(0, min(size, 1)), (size, 0), (max(0, size - 1), min(size, 1))]
        if size > Self.c + 10 { spans += [(5, Self.c), (Self.c - 3, 7), (Self.c, Self.c), (size - Self.c - 9, Self.c + 9)] }
        if size > 66 * Self.c { spans += [(700, 65 * Self.c + 3), (Self.c, 64 * Self.c), (2 * Self.c + 1, 63 * Self.c)] }
        for _ in 0..<20 where size > 0 {
            let offset = Int.random(in: 0..<size)
            spans.append((offset, Int.random(in: 0...(size - offset))))
        }
        for (offset, count) in spans {
            #expect(try Self.read(range, offset, count) == Array(plaintext[offset..<(offset + count)]), "range \(offset)+\(count) of \(size)")
        }
        #expect(throws: Nu11Error.self) { _ = try Self.read(range, size, 1) }
    }

    @Test("read from several threads at once, each range gives its own bytes")
    func threads() throws {
        let plaintext = Self.plain(200 * Self.c + 77, seed: 5)
        let message = try Message(plaintext)
        let range = try message.open()
        let bad = Box()
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for n in 0..<25 {
                let offset = (t * 7919 + n * 104_729) % plaintext.count
                let count = min(plaintext.count - offset, (n + 1) * 40_000)
                if (try? Self.read(range, offset, count)) != Array(plaintext[offset..<(offset + count)]) { bad.add() }
            }
        }
        #expect(bad.count == 0)
    }

    final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var count = 0
        func add() { lock.lock(); count += 1; lock.unlock() }
    }

    @Test("a flipped chunk fails the ranges that touch it, naming the message and the chunk; the others read")
    func flipped() throws {
        let plaintext = Self.plain(100 * Self.c + 3000)
        let message = try Message(plaintext)
        try message.edit { $0[message.chunkOffset(70) + 100] ^= 0x08 }
        let range = try message.open()
        for (offset, count) in [(0, 100 * Self.c), (70 * Self.c + 5, 10), (69 * Self.c + 1, Self.c), (60 * Self.c, 11 * Self.c)] {
            do {
                _ = try Self.read(range, offset, count)
                Issue.record("range \(offset)+\(count) over a flipped chunk read")
            } catch let error as Nu11Error {
                #expect(error.code == .corrupted && error.message.contains("message m") && error.message.contains("chunk 70"), "\(error.message)")
            }
        }
        #expect(try Self.read(range, 0, 70 * Self.c) == Array(plaintext[0..<(70 * Self.c)]))
        #expect(try Self.read(range, 71 * Self.c, 29 * Self.c + 3000) == Array(plaintext[(71 * Self.c)...]))
    }

    @Test("cut, grown, wrong key, flipped final chunk: refused at opening, in one line naming the message")
    func refusedAtOpening() throws {
        let plaintext = Self.plain(5 * Self.c + 100)
        let cases: [(String, (Message) throws -> Void, String)] = [
            ("cut mid-chunk", { m in try m.edit { $0.removeLast(40) } }, "chunk 5"),
            ("cut at a chunk", { m in try m.edit { $0.removeLast(116) } }, "no final chunk"),
            ("cut inside the tag", { m in try m.edit { $0.removeLast(106) } }, "inside a chunk tag"),
            ("grown by a byte", { m in try m.edit { $0.append(0) } }, "chunk 5"),
            ("flipped final chunk", { m in try m.edit { $0[$0.count - 3] ^= 1 } }, "chunk 5"),
            ("flipped commitment", { m in try m.edit { $0[m.prefix + 30] ^= 1 } }, "commitment"),
            ("header only", { m in try m.edit { $0.removeLast($0.count - m.prefix - 20) } }, "header"),
        ]
        for (label, damage, says) in cases {
            let message = try Message(plaintext)
            try damage(message)
            do {
                _ = try message.open()
                Issue.record("\(label): opened")
            } catch let error as Nu11Error {
                #expect(error.message.contains("message m") && error.message.contains(says) && !error.message.contains("\n"),
                        "\(label): \(error.message)")
            }
        }
    }

    @Test("an age payload fed from ranges between copied bytes opens to the same bytes, binary and armored, across slots",
          arguments: [false, true])
    func agePayload(armor: Bool) throws {
        let identity = try AgeIdentity.generate(.x25519)
        let recipient = try #require(identity.recipient)
        let slot = AgeSealPipeline.slotPlainBytes
        // Ranges starting mid-slot and ending mid-slot, one of several slots, one tiny, one
        // ending exactly on a slot; copied bytes between them.
        let pieces: [Either] = [.bytes(Self.plain(512, seed: 1)), .range(Self.plain(3 * slot + 12_345, seed: 2)),
                                .bytes(Self.plain(700, seed: 3)), .range(Self.plain(5, seed: 4)),
                                .range(Self.plain(slot - 512 - 12_345 - 700 - 5, seed: 5)), .range(Self.plain(2 * slot, seed: 6)),
                                .bytes(Self.plain(1024, seed: 7))]
        var expected: [UInt8] = []
        var messages: [Message] = []
        var encryptor = try AgeEncryptor(to: MemorySink(), recipients: [recipient], armor: armor)
        for piece in pieces {
            switch piece {
            case .bytes(let b):
                expected += b
                try b.withUnsafeBytes { try encryptor.write($0) }
            case .range(let p):
                expected += p
                let message = try Message(p)
                messages.append(message)
                try encryptor.write(range: try message.open())
            }
        }
        let file = try encryptor.finish().bytes
        var opened = MemorySink()
        try Age.decrypt(from: MemorySource(file), to: &opened, identities: [identity])
        #expect(opened.bytes == expected)
        // The same plaintext fed by copies gives a file of the same length.
        var copied = try AgeEncryptor(to: MemorySink(), recipients: [recipient], armor: armor)
        try expected.withUnsafeBytes { try copied.write($0) }
        #expect(try copied.finish().bytes.count == file.count)
    }

    enum Either {
        case bytes([UInt8])
        case range([UInt8])
    }

    @Test("a damaged range in an age payload: the error comes out of a later write or the finish, naming the message")
    func agePayloadDamaged() throws {
        let identity = try AgeIdentity.generate(.x25519)
        let recipient = try #require(identity.recipient)
        let slot = AgeSealPipeline.slotPlainBytes
        for chunk in [1, 3 * slot / Self.c + 2, 8 * slot / Self.c - 1] {
            let message = try Message(Self.plain(8 * slot))
            try message.edit { $0[message.chunkOffset(chunk) + 9] ^= 0x80 }
            do {
                var encryptor = try AgeEncryptor(to: MemorySink(), recipients: [recipient])
                try [UInt8](repeating: 1, count: 512).withUnsafeBytes { try encryptor.write($0) }
                try encryptor.write(range: try message.open())
                try [UInt8](repeating: 2, count: 3 * slot).withUnsafeBytes { try encryptor.write($0) }
                _ = try encryptor.finish()
                Issue.record("chunk \(chunk) flipped: the payload was finished")
            } catch let error as Nu11Error {
                #expect(error.code == .corrupted && error.message.contains("message m") && error.message.contains("chunk \(chunk)"),
                        "\(error.message)")
            }
        }
    }
}
