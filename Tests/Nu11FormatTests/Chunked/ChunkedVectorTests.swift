// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

/// One generic runner for every chunked-encryption vector file, through both the streaming
/// and the random-access paths, applying the PartialPlaintext and ValidFinalChunk rules of
/// the Wycheproof how-to.
struct ChunkedVectorRunner<AEAD: ChunkAEAD> {
    let file: String
    let expectedCount: Int

    func run() throws {
        let vectors = try Vectors.load(file)
        #expect(vectors.tests.count == expectedCount)
        #expect(vectors.numberOfTests == expectedCount)
        for vector in vectors.tests {
            try check(vector)
        }
    }

    func check(_ v: ChunkedVector) throws {
        let key = hexBytes(v.key)
        let ctx = hexBytes(v.ctx)
        let ct = try inflate(hexBytes(v.ct))
        let secret = SecretBytes(copying: key.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[...]) })

        if v.has("InvalidKeySize") {
            #expect(throws: Nu11Error.self, "\(v.label): key of \(key.count) bytes accepted") {
                _ = try ChunkedDecryptor<AEAD, MemorySource>(source: MemorySource(ct), key: secret, context: ctx)
            }
            return
        }

        // The content pipeline (what import and export run), from memory and from a mapped file.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("n11-vec-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(ct)))
        defer { unlink(path) }
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        for source in [AnySource(MemorySource(ct)), AnySource(FileDescriptorStream(fd: fd, label: "vector"))] {
            var sink = MemorySink()
            let outcome = Result { try ChunkedEncryption<AEAD>.decrypt(from: source, to: &sink, key: secret, context: ctx) }
            if v.isValid {
                #expect((try? outcome.get()) == UInt64(v.msgLength ?? -1), "\(v.label): valid vector failed in the pipeline: \(outcome)")
                #expect(sha512Hex(sink.bytes) == v.msgSha512, "\(v.label): pipeline SHA-512")
            } else {
                #expect((try? outcome.get()) == nil, "\(v.label): invalid vector decrypted by the pipeline")
                let prefix = v.has("PartialPlaintext") ? (v.msgLength ?? 0) : 0
                #expect(sink.bytes.count <= prefix, "\(v.label): the pipeline released \(sink.bytes.count) bytes")
            }
        }

        // Streaming, with both whole and trickling reads.
        for step in [Int.max, 1000] {
            let source = TricklingSource(ct, step: step == Int.max ? ct.count + 1 : step)
            let decryptor = try ChunkedDecryptor<AEAD, TricklingSource>(source: source, key: secret, context: ctx)
            var sink = MemorySink()
            let outcome = Result { try decryptor.decryptAll(to: &sink) }
            if v.isValid {
                #expect((try? outcome.get()) != nil, "\(v.label): valid vector failed: \(outcome)")
                #expect(sink.bytes.count == v.msgLength, "\(v.label): length")
                #expect(sha512Hex(sink.bytes) == v.msgSha512, "\(v.label): SHA-512")
            } else {
                #expect((try? outcome.get()) == nil, "\(v.label): invalid vector decrypted")
                // Never a byte beyond the authenticated prefix.
                let prefix = v.has("PartialPlaintext") ? (v.msgLength ?? 0) : 0
                #expect(sink.bytes.count <= prefix, "\(v.label): released \(sink.bytes.count) bytes")
                if v.has("PartialPlaintext") && sink.bytes.count == prefix {
                    #expect(sha512Hex(sink.bytes) == v.msgSha512, "\(v.label): prefix SHA-512")
                }
                // Sticky failure: reading on keeps failing.
                var more = [UInt8]()
                #expect(throws: Nu11Error.self, "\(v.label): decryptor recovered") {
                    _ = try decryptor.nextChunk(appendingTo: &more)
                }
                #expect(more.isEmpty)
            }
        }

        // The push decryptor (archive import feeds ZIP pieces into it): same rules.
        for step in [ct.count + 1, 1000, 7] {
            let push = try ChunkedPushDecryptor<AEAD>(key: secret, context: ctx)
            var released: [UInt8] = []
            let outcome = Result {
                var offset = 0
                while offset < ct.count {
                    let end = min(ct.count, offset + step)
                    try push.feed(ct[offset..<end]) { released += $0 }
                    offset = end
                }
                try push.finish { released += $0 }
            }
            if v.isValid {
                #expect((try? outcome.get()) != nil, "\(v.label): push decryptor refused a valid vector (step \(step))")
                #expect(released.count == v.msgLength && sha512Hex(released) == v.msgSha512, "\(v.label): push bytes")
            } else {
                #expect((try? outcome.get()) == nil, "\(v.label): push decryptor accepted an invalid vector (step \(step))")
                let prefix = v.has("PartialPlaintext") ? (v.msgLength ?? 0) : 0
                #expect(released.count <= prefix, "\(v.label): push released \(released.count) unauthenticated bytes")
            }
        }
        if v.isValid {
            // The push and pull encryptors produce what the decryptor opens, at the vector's length.
            var plain = MemorySink()
            _ = try ChunkedDecryptor<AEAD, MemorySource>(source: MemorySource(ct), key: secret, context: ctx).decryptAll(to: &plain)
            let encryptor = try ChunkedPushEncryptor<AEAD>(key: secret, context: ctx)
            var pushed: [UInt8] = []
            var offset = 0
            while offset < plain.bytes.count {
                let end = min(plain.bytes.count, offset + 999)
                try encryptor.feed(plain.bytes[offset..<end]) { pushed += $0 }
                offset = end
            }
            try encryptor.finish { pushed += $0 }
            let pull = try ChunkedStreamEncryptor<AEAD, MemorySource>(source: MemorySource(plain.bytes), key: secret, context: ctx)
            var pulled: [UInt8] = []
            while let piece = try pull.next() { pulled += piece }
            for (name, sealed) in [("push", pushed), ("pull", pulled)] {
                #expect(sealed.count == ct.count, "\(v.label): \(name) encryptor length \(sealed.count) ≠ \(ct.count)")
                var back = MemorySink()
                _ = try ChunkedDecryptor<AEAD, MemorySource>(source: MemorySource(sealed), key: secret, context: ctx).decryptAll(to: &back)
                #expect(back.bytes == plain.bytes, "\(v.label): \(name) encryptor round trip")
            }
            #expect(pushed != pulled && Array(pushed.prefix(24)) != Array(ct.prefix(24)), "\(v.label): a salt repeated")
        }

        // Random access: opening authenticates the length through the final chunk.
        let opened = Result {
            try ChunkedRandomAccessReader<AEAD, MemorySource>(source: MemorySource(ct), key: secret, context: ctx)
        }
        switch opened {
        case .success(let reader):
            #expect(v.isValid || v.has("ValidFinalChunk"), "\(v.label): length authentication passed")
            let whole = Result { try reader.read(offset: 0, count: Int(reader.plaintextLength)) }
            if v.isValid {
                let bytes = try whole.get()
                #expect(bytes.count == v.msgLength && sha512Hex(bytes) == v.msgSha512, "\(v.label): random read")
                try checkRanges(reader, whole: bytes, label: v.label)
            } else {
                #expect((try? whole.get()) == nil, "\(v.label): invalid vector read through random access")
            }
        case .failure:
            #expect(!v.isValid, "\(v.label): valid vector failed to open for random access")
            #expect(!v.has("ValidFinalChunk"), "\(v.label): a genuine final chunk should authenticate the length")
        }

        // Raw mode, where the vector gives the derived AEAD key and base nonce.
        if let aeadKey = v.aeadKey, let baseNonce = v.baseNonce, ct.count >= ChunkedScheme.headerByteCount {
            let body = Array(ct[ChunkedScheme.headerByteCount...])
            let raw = ChunkedDecryptor<AEAD, MemorySource>(
                rawSource: MemorySource(body), aeadKey: hexBytes(aeadKey), baseNonce: hexBytes(baseNonce))
            var sink = MemorySink()
            let outcome = Result { try raw.decryptAll(to: &sink) }
            #expect(((try? outcome.get()) != nil) == v.isValid, "\(v.label): raw mode disagrees")
            if v.isValid {
                // Encryption is deterministic given the AEAD key and base nonce, and given the salt.
                let again = try ChunkedEncryption<AEAD>.encryptRaw(sink.bytes, aeadKey: hexBytes(aeadKey),
                                                                   baseNonce: hexBytes(baseNonce))
                #expect(again == body, "\(v.label): raw re-encryption differs")
                var src = MemorySource(sink.bytes)
                var out = MemorySink()
                _ = try ChunkedEncryption<AEAD>.encrypt(from: &src, to: &out, key: secret, context: ctx,
                                                        salt: Array(ct[0..<ChunkedScheme.saltByteCount]))
                #expect(out.bytes == ct, "\(v.label): re-encryption with the same salt differs")
            }
        }
    }

    /// First, middle and last chunk, ranges that straddle chunks, and past the end.
    func checkRanges(_ reader: ChunkedRandomAccessReader<AEAD, MemorySource>, whole: [UInt8], label: String) throws {
        let n = whole.count
        let c = ChunkedScheme.chunkSize
        let ranges = [(0, 1), (0, n), (c - 3, 7), (c, c), (n / 2, 33), (max(n - 5, 0), 5), (max(n - 5, 0), 50), (n, 10)]
        for (offset, count) in ranges where offset <= n {
            let got = try reader.read(offset: UInt64(offset), count: count)
            let end = min(n, offset + count)
            #expect(got == Array(whole[offset..<end]), "\(label): range \(offset)+\(count)")
        }
        #expect(throws: Nu11Error.self) { _ = try reader.read(offset: UInt64(n + 1), count: 1) }
    }
}

@Suite("c2sp.org/chunked-encryption vectors")
struct ChunkedVectorTests {
    @Test("Cobblestone-256: all 35 Wycheproof vectors, streaming and random access")
    func wycheproofCobblestone256() throws {
        try ChunkedVectorRunner<AES256GCMChunks>(file: "c2sp_chunked_encryption_aes_256_gcm_test.json",
                                                 expectedCount: 35).run()
    }

    @Test("ChaCha20-Poly1305 instantiation: our own vectors")
    func ownChaCha() throws {
        try ChunkedVectorRunner<ChaCha20Poly1305Chunks>(file: "nu11vlt_chunked_chacha20_poly1305_test.json",
                                                        expectedCount: 35).run()
    }
}
