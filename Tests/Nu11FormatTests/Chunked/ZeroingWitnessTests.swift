// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

/// Every buffer that holds plaintext on the chunked content path (Sources/Nu11Format/Chunked/)
/// is zeroed after use (issue 57). The buffers, enumerated:
///   - the pipeline's slots (plain and output): `ChunkPipeline.releaseWitness`, checked by
///     PipelineTests "closing the pipeline zeroes what its buffers held";
///   - every `PlainScratch` (the push encryptor's pending chunk — the last one too —, the
///     random-access reader's final chunk and per-read chunk): checked here, at every point
///     it is zeroed, and the list of them is read from the sources so a new one is not missed;
///   - the sequential decryptor's gathering buffer (`decryptAll`): one reserved array, zeroed
///     before it is emptied and at the end (never grown, so never freed with plaintext in it);
///   - the push decryptor holds ciphertext only; the chunks it opens are the caller's, as is
///     every range the random-access reader returns.
@Suite("zeroing witness: every plaintext buffer of the chunked path")
struct ZeroingWitnessTests {
    typealias Chunks = ChaCha20Poly1305Chunks
    static let c = ChunkedScheme.chunkSize

    /// What the witnesses saw: (label, point) → how often, and any buffer not all zero.
    final class Seen: @unchecked Sendable {
        // @unchecked Sendable: one test's thread only.
        var points: [String: Int] = [:]
        var dirty: [String] = []
        func record(_ label: String, _ point: String, _ bytes: UnsafeRawBufferPointer) {
            points["\(label) \(point)", default: 0] += 1
            if bytes.contains(where: { $0 != 0 }) { dirty.append("\(label) \(point): \(bytes.filter { $0 != 0 }.count) non-zero bytes") }
        }
    }

    /// Plaintext with no zero byte, so any byte left is seen.
    static func plain(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 % 251 + 1) } }

    /// The labels of every PlainScratch made in Sources/Nu11Format/Chunked and …/Age (the sources read as text).
    static func scratchLabels() throws -> Set<String> {
        var dir = URL(fileURLWithPath: #filePath)
        while dir.path != "/" && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
            dir.deleteLastPathComponent()
        }
        var out: Set<String> = []
        for sub in ["Chunked", "Age"] {
            let folder = dir.appendingPathComponent("Sources/Nu11Format/" + sub)
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                for m in text.matches(of: /PlainScratch\(capacity: [^,]+, label: "([^"]+)"\)/) { out.insert(String(m.1)) }
            }
        }
        return out
    }

    static let exercised: Set<String> = ["ChunkedPushEncryptor.pending", "ChunkedRandomAccessReader.finalPlaintext",
                                         "ChunkedRandomAccessReader.scratch", "AgeSealPipeline.slot",
                                         "ChunkedRange.finalPlaintext", "ChunkedRange.edge"]

    @Test("the list of plaintext buffers is complete: every PlainScratch in the sources is exercised below")
    func everyBufferListed() throws {
        let labels = try Self.scratchLabels()
        #expect(labels == Self.exercised, "PlainScratch buffers in Sources/Nu11Format/Chunked and Age: \(labels.sorted()); this test exercises \(Self.exercised.sorted())")
    }

    @Test("the push encryptor: each full chunk, the LAST chunk, and an encryptor dropped mid-chunk leave zeros", arguments: [false, true])
    func pushEncryptor(contiguous: Bool) throws {
        let key = SecretBytes(randomCount: 32)
        let seen = Seen()
        let message = Self.plain(2 * Self.c + Self.c / 2 + 7)
        var sealed: [UInt8] = []
        do {
            let encryptor = try ChunkedPushEncryptor<Chunks>(key: key, context: [7])
            encryptor.pending.witness = { seen.record($0, $1, $2) }
            var at = 0
            for piece in [1, Self.c - 1, 3, Self.c + 100, Self.c] {
                let end = min(message.count, at + piece)
                if contiguous {
                    try encryptor.feed(message[at..<end]) { sealed += $0 }
                } else {
                    // A collection without contiguous storage: the encryptor's own copy is zeroed too.
                    try encryptor.feed(message[at..<end].lazy.map { $0 }) { sealed += $0 }
                }
                at = end
            }
            try encryptor.finish { sealed += $0 }
            // After finish, before release: the last chunk is gone from memory already.
            #expect(seen.points["ChunkedPushEncryptor.pending after the final chunk"] == 1, "\(seen.points)")
        }
        #expect(seen.points["ChunkedPushEncryptor.pending after a chunk"] == 2, "\(seen.points)")
        #expect(seen.points["ChunkedPushEncryptor.pending released"] == 1, "\(seen.points)")
        #expect(seen.dirty.isEmpty, "plaintext left in memory: \(seen.dirty)")
        #expect(try ChunkedEncryption<Chunks>.open(sealed, key: key, context: [7]) == message)

        // Dropped with a partial chunk pending (an import that failed half-way).
        let dropped = Seen()
        do {
            let encryptor = try ChunkedPushEncryptor<Chunks>(key: key, context: [7])
            encryptor.pending.witness = { dropped.record($0, $1, $2) }
            try encryptor.feed(message.prefix(Self.c / 3)) { _ in }
        }
        #expect(dropped.points["ChunkedPushEncryptor.pending released"] == 1, "\(dropped.points)")
        #expect(dropped.dirty.isEmpty, "a dropped encryptor left its pending plaintext: \(dropped.dirty)")
    }

    @Test("the random-access reader: every read's chunks and the final chunk leave zeros, reads across chunks and a forged one")
    func randomAccess() throws {
        let key = SecretBytes(randomCount: 32)
        let message = Self.plain(3 * Self.c + 1000)
        let sealed = try ChunkedEncryption<Chunks>.seal(message, key: key, context: [9])
        let seen = Seen()
        do {
            let reader = try ChunkedRandomAccessReader<Chunks, MemorySource>(source: MemorySource(sealed), key: key, context: [9])
            reader.plaintextWitness = { seen.record($0, $1, $2) }
            #expect(try reader.read(offset: 10, count: 2 * Self.c) == Array(message[10..<(10 + 2 * Self.c)]))
            #expect(try reader.read(offset: UInt64(Self.c * 3 - 5), count: 2000) == Array(message[(Self.c * 3 - 5)...]))
            #expect(try reader.read(offset: 0, count: message.count) == message)
            #expect(seen.points["ChunkedRandomAccessReader.scratch after a read"] == 3, "\(seen.points)")
            #expect(seen.points["ChunkedRandomAccessReader.scratch released"] == 3, "\(seen.points)")
        }
        #expect(seen.points["ChunkedRandomAccessReader.finalPlaintext released"] == 1, "\(seen.points)")
        #expect(seen.dirty.isEmpty, "plaintext left in memory: \(seen.dirty)")

        // A forged chunk: the range fails, and what was decrypted before it is zeroed too.
        var forged = sealed
        forged[ChunkedScheme.headerByteCount + ChunkedScheme.encryptedChunkSize(Chunks.self) + 5] ^= 1
        let failed = Seen()
        do {
            let reader = try ChunkedRandomAccessReader<Chunks, MemorySource>(source: MemorySource(forged), key: key, context: [9])
            reader.plaintextWitness = { failed.record($0, $1, $2) }
            #expect(throws: Nu11Error.self) { try reader.read(offset: 0, count: 2 * Self.c) }
        }
        #expect(failed.points["ChunkedRandomAccessReader.scratch after a failed chunk"] == 1, "\(failed.points)")
        #expect(failed.points["ChunkedRandomAccessReader.scratch after a read"] == 1, "\(failed.points)")
        #expect(failed.dirty.isEmpty, "plaintext left in memory: \(failed.dirty)")
    }

    @Test("the range reader (a share's): its edge chunks after every read, a failed one too, and its final chunk leave zeros")
    func chunkedRange() throws {
        let message = Self.plain(5 * Self.c + 1000)
        let file = try ChunkedRangeTests.Message(message)
        let seen = Seen()
        do {
            let range = try file.open()
            range.plaintextWitness = { seen.record($0, $1, $2) }
            #expect(try ChunkedRangeTests.read(range, 10, 2 * Self.c) == Array(message[10..<(10 + 2 * Self.c)]))
            #expect(try ChunkedRangeTests.read(range, 0, message.count) == message)
            #expect(seen.points["ChunkedRange.edge after a read"] == 2, "\(seen.points)")
        }
        #expect(seen.points["ChunkedRange.edge released"] == 1, "\(seen.points)")
        #expect(seen.points["ChunkedRange.finalPlaintext released"] == 1, "\(seen.points)")
        #expect(seen.dirty.isEmpty, "plaintext left in memory: \(seen.dirty)")

        try file.edit { $0[file.chunkOffset(2) + 1] ^= 1 }
        let failed = Seen()
        do {
            let range = try file.open()
            range.plaintextWitness = { failed.record($0, $1, $2) }
            #expect(throws: Nu11Error.self) { _ = try ChunkedRangeTests.read(range, 100, 3 * Self.c) }
        }
        #expect(failed.points["ChunkedRange.edge after a read"] == 1, "\(failed.points)")
        #expect(failed.dirty.isEmpty, "plaintext left in memory: \(failed.dirty)")
    }

    @Test("the age sealing slots: a finished payload and one dropped half-way (sealer thread running) leave zeros")
    func ageSlots() throws {
        let identity = try AgeIdentity.generate(.x25519)
        let recipient = try #require(identity.recipient)
        let slot = AgeSealPipeline.slotPlainBytes
        let message = Self.plain(2 * slot + slot / 2 + 9)
        // Finished: three slots went through the sealer thread (four made), all zeroed at the end.
        let seen = Seen()
        var file = MemorySink()
        do {
            var encryptor = try AgeEncryptor(to: MemorySink(), recipients: [recipient])
            encryptor.sealer.scratchWitness = { seen.record($0, $1, $2) }
            try message.withUnsafeBytes { try encryptor.write($0) }
            file = try encryptor.finish()
        }
        #expect(seen.points["AgeSealPipeline.slot stopped"] == AgeSealPipeline.slotCount, "\(seen.points)")
        #expect(seen.dirty.isEmpty, "plaintext or ciphertext left in a slot: \(seen.dirty)")
        var opened = MemorySink()
        try Age.decrypt(from: MemorySource(file.bytes), to: &opened, identities: [identity])
        #expect(opened.bytes == message)

        // Dropped with a slot half full of plaintext and another queued (a share whose next
        // item failed): the thread stops and every slot is zeroed.
        let dropped = Seen()
        do {
            var encryptor = try AgeEncryptor(to: MemorySink(), recipients: [recipient])
            encryptor.sealer.scratchWitness = { dropped.record($0, $1, $2) }
            try message.withUnsafeBytes { try encryptor.write(UnsafeRawBufferPointer(rebasing: $0[..<(slot + slot / 3)])) }
        }
        #expect(dropped.points["AgeSealPipeline.slot stopped"] == AgeSealPipeline.slotCount, "\(dropped.points)")
        #expect(dropped.dirty.isEmpty, "a dropped age encryptor left plaintext: \(dropped.dirty)")

        // One slot or less: sealed on the caller's thread, its one slot zeroed too.
        let small = Seen()
        do {
            var encryptor = try AgeEncryptor(to: MemorySink(), recipients: [recipient])
            encryptor.sealer.scratchWitness = { small.record($0, $1, $2) }
            try message.withUnsafeBytes { try encryptor.write(UnsafeRawBufferPointer(rebasing: $0[..<1000])) }
            _ = try encryptor.finish()
        }
        #expect(small.points["AgeSealPipeline.slot stopped"] == 1, "\(small.points)")
        #expect(small.dirty.isEmpty, "plaintext left in the one slot: \(small.dirty)")
    }
}
