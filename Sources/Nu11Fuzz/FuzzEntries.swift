// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Media
import Nu11Storage
import Nu11Vault

/// The fuzz harnesses' bodies: each takes arbitrary bytes and must never crash, hang or
/// leak; errors are the expected outcome. Used by libFuzzer (`make fuzz`) and by the test
/// suite, which replays the checked-in corpus (Fuzz/corpus/<harness>/).
public enum FuzzEntries {
    public static let harnesses = ["n11", "keystore", "settings", "archive", "video-location"]

    /// A fixed key, so that valid seeds open and mutations reach the decryptor.
    static let key: SecretBytes = {
        var bytes = [UInt8](repeating: 0x42, count: 32)
        return SecretBytes(consuming: &bytes)
    }()

    /// Runs one input; returns whether the harness accepted it (it parsed and, where there
    /// is content, authenticated). Where several code paths read the same input they must
    /// agree — one accepting what another rejects is a bug, and stops the run.
    @discardableResult
    public static func run(_ harness: String, _ data: [UInt8]) -> Bool {
        switch harness {
        case "n11": n11(data)
        case "keystore": keystore(data)
        case "settings": settings(data)
        case "archive": archive(data)
        case "video-location": videoLocation(data)
        default: false
        }
    }

    /// The video location walkers (they run on plaintext in the process that holds keys): a
    /// strip that succeeds keeps the size, and a second strip of its result changes nothing.
    static func videoLocation(_ data: [UInt8]) -> Bool {
        guard let format = VideoFormat.sniff(data) else { return false }
        var file = data
        guard (try? VideoLocationStripper.strip(&file, format: format)) != nil else { return false }
        guard file.count == data.count else { fatalError("stripping changed the size") }
        var again = file
        guard let second = try? VideoLocationStripper.strip(&again, format: format), !second.changed, again == file else {
            fatalError("a stripped video strips again differently")
        }
        return true
    }

    /// `.n11` header and chunked stream: streaming and random access.
    static func n11(_ data: [UInt8]) -> Bool {
        guard let header = try? N11Header.parse(data) else { return false }
        guard header.encoded() == Array(data.prefix(N11Header.byteCount)) else { fatalError("header round trip differs") }
        // Streaming, random access and the push decryptor must agree byte for byte.
        var sink = MemorySink()
        let streamed: [UInt8]? = (try? N11Envelope.open(from: MemorySource(data), to: &sink, expected: header, itemKey: key)) != nil
            ? sink.bytes : nil
        var random: [UInt8]?
        if let reader = try? N11Envelope.randomAccess(MemorySource(data), expected: header, itemKey: key) {
            random = try? reader.read(offset: 0, count: Int(min(reader.plaintextLength, 1 << 20)))
            _ = try? reader.read(offset: reader.plaintextLength / 2, count: 100)
        }
        var pushed: [UInt8]? = []
        do {
            let push = try ChunkedPushDecryptor<ChaCha20Poly1305Chunks>(key: key, context: header.context)
            try push.feed(data.dropFirst(N11Header.byteCount)) { pushed?.append(contentsOf: $0) }
            try push.finish { pushed?.append(contentsOf: $0) }
        } catch {
            pushed = nil
        }
        if let streamed, streamed.count <= 1 << 20 {
            guard random == streamed else { fatalError("random access disagrees with streaming") }
        }
        guard (streamed == nil) == (pushed == nil), streamed == nil || streamed == pushed else {
            fatalError("the push decryptor disagrees with streaming (one accepted what the other refused)")
        }
        return streamed != nil
    }

    /// Key store records: item key records, the master record, the device key record.
    static func keystore(_ data: [UInt8]) -> Bool {
        var accepted = false
        if let record = try? ItemKeyRecord.parse(data) {
            guard record.encoded() == data else { fatalError("item key record round trip differs") }
            _ = try? record.open(domainKey: key)
            accepted = true
        }
        if let master = try? MasterRecord.parse(data) {
            guard master.encoded() == data else { fatalError("master record round trip differs") }
            _ = try? master.open(kek: key)
            accepted = true
        }
        if (try? DeviceKeyRecord.parse(data)) != nil { accepted = true }
        if (try? DeviceState.open(data, deviceKey: key)) != nil { accepted = true }
        return accepted
    }

    /// The settings decoder: sealed files and raw (decrypted) documents with migrations.
    static func settings(_ data: [UInt8]) -> Bool {
        var accepted = (try? Settings.open(data, deviceKey: key)) != nil
        if let (parsed, _) = try? Settings.parseDocument(data) {
            accepted = true
            for d in Settings.definitions {
                guard let v = try? parsed.value(d.key) else { fatalError("setting \(d.key) unreadable") }
                var copy = Settings()
                guard (try? copy.set(d.key, v)) != nil else { fatalError("setting \(d.key)=\(v) does not round trip") }
            }
        }
        if (try? DurationText.parse(String(decoding: data.prefix(64), as: UTF8.self))) != nil { accepted = true }
        return accepted
    }

    /// Archive import up to the password: ZIP checks, header, manifest decryption.
    static func archive(_ data: [UInt8]) -> Bool {
        let path = "/dev/shm/nu11vlt-fuzz-\(getpid()).zip"
        guard FileManager.default.createFile(atPath: path, contents: Data(data)) else { return false }
        defer { unlink(path) }
        guard let zip = try? ZipReader(path: path) else { return false }
        guard let headerBytes = try? zip.read(ArchiveFormat.headerName, limit: ArchiveFormat.maxHeaderBytes),
              (try? ArchiveFormat.Header.parse(headerBytes)) != nil else { return false }
        if let push = try? ChunkedPushDecryptor<AES256GCMChunks>(key: key, context: ArchiveFormat.manifestContext) {
            _ = try? zip.stream(ArchiveFormat.manifestName) { data in try push.feed(data) { _ in } }
            _ = try? push.finish { _ in }
        }
        for name in zip.entries.keys.sorted().prefix(4) {
            _ = try? zip.stream(name) { _ in }
        }
        return true
    }

    /// Replays every file of a corpus folder through a harness; returns the names of the
    /// inputs and whether each was accepted.
    @discardableResult
    public static func replay(_ harness: String, folder: String) -> [String: Bool] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var out: [String: Bool] = [:]
        for name in files.sorted() {
            if let data = FileManager.default.contents(atPath: folder + "/" + name) { out[name] = run(harness, [UInt8](data)) }
        }
        return out
    }
}
