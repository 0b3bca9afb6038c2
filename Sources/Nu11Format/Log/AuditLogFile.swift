// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// One security event, as the audit log keeps it: never a name, a path or content — item
/// IDs (opaque) and counts only.
public struct AuditEntry: Codable, Sendable, Equatable {
    public var seq: UInt64 = 0
    public var time: Double
    public var event: String
    public var count: Int?
    public var items: [String]?
    public var detail: String?

    public init(time: Double, event: String, count: Int? = nil, items: [String]? = nil, detail: String? = nil) {
        self.time = time
        self.event = event
        self.count = count
        self.items = items
        self.detail = detail
    }
}

/// What older entries were compacted into.
public struct AuditCheckpoint: Codable, Sendable, Equatable {
    /// The last compacted entry (0: none).
    public var through: UInt64
    public var since: Double?
    /// Compacted entries by event.
    public var events: [String: Int]
}

/// The head: the last entry and the mark of the device journal folded in so far.
public struct AuditHead: Codable, Sendable, Equatable {
    public var last: UInt64
    public var folded: UInt64
}

/// An audit log file (docs/FORMAT.md §7): sealed entries in a hash chain, a checkpoint
/// first and an authenticated head last, rewritten atomically on every append.
///
///     0   4   magic "N11L"      4  1  version (1)      5  3  reserved, 0
///     8   16  log ID
///     24  records, each: length (4, big-endian, of what follows) || type (1) || seq (8) || body
///         type 1 checkpoint: body = chain hash H_k (32) || SmallSeal(JSON AuditCheckpoint)
///         type 2 entry:      body = SmallSeal(JSON AuditEntry, padded to 256-byte buckets)
///         type 3 head:       body = SmallSeal(JSON AuditHead)
///
/// Each seal's associated data is "nu11vlt log v1" || log ID || type || seq || H, where H is
/// the chain hash before the record: H_k from the checkpoint, then after each entry
/// H = SHA-256(H || type || seq || body). An entry edited, removed, moved or cut off
/// therefore fails to open or breaks the chain at a named entry. A fresh log's checkpoint
/// has seq 0 and H_0 = SHA-256("nu11vlt log genesis" || log ID).
public struct AuditLogFile: Sendable {
    public static let magic: [UInt8] = Array("N11L".utf8)
    enum RecordType: UInt8 { case checkpoint = 1, entry = 2, head = 3 }

    struct Record: Sendable {
        var type: UInt8
        var seq: UInt64
        var body: [UInt8]
        /// Length, type, sequence number (13 bytes), then the body.
        var encodedCount: Int { 13 + body.count }

        func append(to out: inout [UInt8]) {
            BigEndian.append(UInt32(9 + body.count), to: &out)
            out.append(type)
            for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: seq >> (56 - 8 * i))) }
            out += body
        }
    }

    public let logID: [UInt8]
    var records: [Record]

    public static func genesis(_ logID: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: Array("nu11vlt log genesis".utf8) + logID)) }

    static func aad(_ logID: [UInt8], type: UInt8, seq: UInt64, chain: [UInt8]) -> [UInt8] {
        Array("nu11vlt log v1".utf8) + logID + [type] + (0..<8).map { UInt8(truncatingIfNeeded: seq >> (56 - 8 * $0)) } + chain
    }

    static func next(_ chain: [UInt8], _ record: Record) -> [UInt8] {
        // SHA-256(H || type || seq || body), fed in parts (no concatenated copy per entry).
        var hash = SHA256()
        hash.update(data: chain)
        var header = [record.type]
        BigEndian.append(record.seq, to: &header)
        hash.update(data: header)
        hash.update(data: record.body)
        return Array(hash.finalize())
    }

    static func json<T: Encodable>(_ value: T, pad: Int) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let plain = Array(try encoder.encode(value))
        var bucket = pad
        while bucket < plain.count { bucket *= 2 }
        // One buffer, filled with memset: a vault log's head is padded to most of a megabyte.
        return [UInt8](unsafeUninitializedCapacity: bucket) { out, initialized in
            let raw = UnsafeMutableRawBufferPointer(out)
            plain.withUnsafeBytes { raw.copyMemory(from: $0) }
            if let base = raw.baseAddress { memset(base + plain.count, 0x20, bucket - plain.count) }
            initialized = bucket
        }
    }

    /// The length of `plain` without its trailing padding (spaces, see `json(_:pad:)`), found
    /// eight bytes at a time: a padded head is most of a 1 MiB log.
    static func unpaddedCount(_ plain: [UInt8]) -> Int {
        plain.withUnsafeBytes { raw in
            var end = raw.count
            let spaces = UInt64(0x2020_2020_2020_2020)
            while end >= 8 && raw.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self) == spaces { end -= 8 }
            while end > 0 && raw[end - 1] == 0x20 { end -= 1 }
            return end
        }
    }

    /// A new, empty log: a genesis checkpoint and a head.
    public static func create(logID: [UInt8], key: SecretBytes) throws -> AuditLogFile {
        var file = AuditLogFile(logID: logID, records: [])
        try file.rebuild(checkpoint: AuditCheckpoint(through: 0, since: nil, events: [:]), chain: genesis(logID),
                         entries: [], head: AuditHead(last: 0, folded: 0), key: key)
        return file
    }

    /// The file's length: magic, version, log ID (24 bytes), then the records.
    var encodedCount: Int { 24 + records.reduce(0) { $0 + $1.encodedCount } }

    /// The file's bytes, made in one buffer (a vault's log is padded to its full size, 1 MiB by default).
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(encodedCount)
        out += Self.magic + [1, 0, 0, 0] + logID
        for record in records { record.append(to: &out) }
        return out
    }

    /// Splits a file into records (no key needed); refuses what is not a log.
    public static func parse(_ bytes: [UInt8]) throws -> AuditLogFile {
        guard bytes.count >= 24, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "the audit log is damaged (not a log file)", remedy: .check(reason: nil))
        }
        guard bytes[4] == 1 else {
            throw Nu11Error(.unsupportedVersion, "audit log version \(bytes[4]) is not supported", remedy: .upgrade)
        }
        var records: [Record] = []
        var at = 24
        while at < bytes.count {
            guard at + 4 <= bytes.count else { throw cutShort(after: records) }
            let length = Int(BigEndian.uint32(bytes[at..<(at + 4)]))
            guard length >= 9 + 28, at + 4 + length <= bytes.count else { throw cutShort(after: records) }
            let seq = (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[at + 5 + $1]) }
            records.append(Record(type: bytes[at + 4], seq: seq, body: Array(bytes[(at + 13)..<(at + 4 + length)])))
            at += 4 + length
        }
        return AuditLogFile(logID: Array(bytes[8..<24]), records: records)
    }

    static func cutShort(after records: [Record]) -> Nu11Error {
        let last = records.last { $0.type == RecordType.entry.rawValue }?.seq ?? 0
        return Nu11Error(.corrupted, "the audit log ends inside the record after entry \(last): it was cut off or damaged there",
                         remedy: .advice(.keepLogAsEvidenceNewLogStarts))
    }
}
