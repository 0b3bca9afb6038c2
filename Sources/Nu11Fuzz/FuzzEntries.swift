import Foundation
import Nu11Format
import Nu11Storage
import Nu11Vault

/// The fuzz harnesses' bodies: each takes arbitrary bytes and must never crash, hang or
/// leak; errors are the expected outcome. Used by libFuzzer (`make fuzz`) and by the test
/// suite, which replays the checked-in corpus (Fuzz/corpus/<harness>/).
public enum FuzzEntries {
    public static let harnesses = ["n11", "keystore", "settings", "archive"]

    /// A fixed key, so that valid seeds open and mutations reach the decryptor.
    static let key: SecretBytes = {
        var bytes = [UInt8](repeating: 0x42, count: 32)
        return SecretBytes(consuming: &bytes)
    }()

    public static func run(_ harness: String, _ data: [UInt8]) {
        switch harness {
        case "n11": n11(data)
        case "keystore": keystore(data)
        case "settings": settings(data)
        case "archive": archive(data)
        default: break
        }
    }

    /// `.n11` header and chunked stream: streaming and random access.
    static func n11(_ data: [UInt8]) {
        guard let header = try? N11Header.parse(data) else { return }
        guard header.encoded() == Array(data.prefix(N11Header.byteCount)) else { fatalError("header round trip differs") }
        var sink = MemorySink()
        _ = try? N11Envelope.open(from: MemorySource(data), to: &sink, expected: header, itemKey: key)
        if let reader = try? N11Envelope.randomAccess(MemorySource(data), expected: header, itemKey: key) {
            _ = try? reader.read(offset: 0, count: Int(min(reader.plaintextLength, 1 << 20)))
            _ = try? reader.read(offset: reader.plaintextLength / 2, count: 100)
        }
        let push = try? ChunkedPushDecryptor<ChaCha20Poly1305Chunks>(key: key, context: header.context)
        _ = try? push?.feed(data.dropFirst(N11Header.byteCount)) { _ in }
        _ = try? push?.finish { _ in }
    }

    /// Key store records: item key records, the master record, the device key record.
    static func keystore(_ data: [UInt8]) {
        if let record = try? ItemKeyRecord.parse(data) {
            guard record.encoded() == data else { fatalError("item key record round trip differs") }
            _ = try? record.open(domainKey: key)
        }
        if let master = try? MasterRecord.parse(data) {
            guard master.encoded() == data else { fatalError("master record round trip differs") }
            _ = try? master.open(kek: key)
        }
        _ = try? DeviceKeyRecord.parse(data)
        _ = try? DeviceState.open(data, deviceKey: key)
    }

    /// The settings decoder: sealed files and raw (decrypted) documents with migrations.
    static func settings(_ data: [UInt8]) {
        _ = try? Settings.open(data, deviceKey: key)
        if let (parsed, _) = try? Settings.parseDocument(data) {
            for d in Settings.definitions {
                guard let v = try? parsed.value(d.key) else { fatalError("setting \(d.key) unreadable") }
                var copy = Settings()
                guard (try? copy.set(d.key, v)) != nil else { fatalError("setting \(d.key)=\(v) does not round trip") }
            }
        }
        _ = try? DurationText.parse(String(decoding: data.prefix(64), as: UTF8.self))
    }

    /// Archive import up to the password: ZIP checks, header, manifest decryption.
    static func archive(_ data: [UInt8]) {
        let path = "/dev/shm/nu11vlt-fuzz-\(getpid()).zip"
        guard FileManager.default.createFile(atPath: path, contents: Data(data)) else { return }
        defer { unlink(path) }
        guard let zip = try? ZipReader(path: path) else { return }
        guard let headerBytes = try? zip.read(ArchiveFormat.headerName, limit: ArchiveFormat.maxHeaderBytes),
              (try? ArchiveFormat.Header.parse(headerBytes)) != nil else { return }
        guard let push = try? ChunkedPushDecryptor<AES256GCMChunks>(key: key, context: ArchiveFormat.manifestContext) else { return }
        _ = try? zip.stream(ArchiveFormat.manifestName) { data in try push.feed(data) { _ in } }
        _ = try? push.finish { _ in }
        for name in zip.entries.keys.sorted().prefix(4) {
            _ = try? zip.stream(name) { _ in }
        }
    }

    /// Replays every file of a corpus folder through a harness; returns how many ran.
    @discardableResult
    public static func replay(_ harness: String, folder: String) -> Int {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in files.sorted() {
            if let data = FileManager.default.contents(atPath: folder + "/" + name) { run(harness, [UInt8](data)) }
        }
        return files.count
    }
}
