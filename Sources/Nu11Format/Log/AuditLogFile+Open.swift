// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// What a log holds, once every record authenticated and the chain is whole.
public struct AuditLogContents: Sendable {
    public var checkpoint: AuditCheckpoint
    public var entries: [AuditEntry]
    public var head: AuditHead
}

extension AuditLogFile {
    static func damaged(_ what: String) -> Nu11Error {
        Nu11Error(.corrupted, "audit log: \(what)", remedy: .advice(.keepLogAsEvidence))
    }

    static func sealed<T: Encodable>(_ value: T, pad: Int, aad: [UInt8], key: SecretBytes) throws -> [UInt8] {
        var plain = try json(value, pad: pad)
        defer { secureZero(&plain) }
        return try SmallSeal.seal(plain, key: key, associatedData: aad)
    }

    func opened<T: Decodable>(_ record: Record, body: [UInt8], chain: [UInt8], key: SecretBytes) -> T? {
        guard var plain = try? SmallSeal.open(body, key: key, associatedData: Self.aad(logID, type: record.type, seq: record.seq, chain: chain)) else {
            return nil
        }
        defer { secureZero(&plain) }
        // The padding is trailing spaces (see `json(_:pad:)`): JSON ignores them, so they are not
        // copied or scanned (a padded head is most of a 1 MiB log).
        var json = Data(plain[..<Self.unpaddedCount(plain)])
        defer { json.withUnsafeMutableBytes { Sodium.zero($0) } }
        return try? JSONDecoder().decode(T.self, from: json)
    }

    /// Authenticates every record and the chain; the error names the first entry that is
    /// edited, missing, out of order or cut off.
    public func open(key: SecretBytes) throws -> AuditLogContents {
        guard let first = records.first, first.type == RecordType.checkpoint.rawValue, first.body.count > 32 else {
            throw Self.damaged("the checkpoint at its start is missing or damaged")
        }
        var chain = Array(first.body[0..<32])
        guard let checkpoint: AuditCheckpoint = opened(first, body: Array(first.body[32...]), chain: chain, key: key),
              checkpoint.through == first.seq else {
            throw Self.damaged("the checkpoint does not authenticate: it was edited or is not this vault's")
        }
        let rest = Array(records.dropFirst())
        let entryRecords = rest.prefix { $0.type == RecordType.entry.rawValue }
        let lastSeen = entryRecords.last?.seq ?? first.seq
        guard let headRecord = rest.last, headRecord.type == RecordType.head.rawValue, entryRecords.count == rest.count - 1 else {
            throw Self.damaged("it ends after entry \(lastSeen) without its head: entries after \(lastSeen), or the head, were cut off")
        }
        var expected = first.seq + 1
        var entries: [AuditEntry] = []
        for record in entryRecords {
            if record.seq != expected {
                if entryRecords.contains(where: { $0.seq == expected }) {
                    throw Self.damaged("entries \(expected) and \(record.seq) are out of order: they were swapped or moved")
                }
                if record.seq > expected {
                    throw Self.damaged("entry \(expected) was removed (entry \(record.seq) follows entry \(expected - 1))")
                }
                throw Self.damaged("entry \(record.seq) appears out of its place or twice")
            }
            guard var entry: AuditEntry = opened(record, body: record.body, chain: chain, key: key) else {
                throw Self.damaged("entry \(record.seq) does not authenticate: it was edited or damaged")
            }
            entry.seq = record.seq
            entries.append(entry)
            chain = Self.next(chain, record)
            expected += 1
        }
        guard let head: AuditHead = opened(headRecord, body: headRecord.body, chain: chain, key: key),
              head.last == expected - 1, headRecord.seq == head.last else {
            throw Self.damaged("the head does not follow entry \(expected - 1): entries after it were cut off, or the head was edited")
        }
        if let unreadable = checkpoint.events["unreadable"], unreadable > 0 {
            throw Self.damaged("\(unreadable) entr\(unreadable == 1 ? "y" : "ies") up to \(checkpoint.through) did not authenticate when compacted")
        }
        return AuditLogContents(checkpoint: checkpoint, entries: entries, head: head)
    }

    /// The log with `new` entries appended (and the device-journal mark moved to `folded`
    /// when given), compacted into a new checkpoint when it would exceed `maxBytes`.
    /// Appending does not need the old entries to open; a tampered log stays as evidence.
    /// `padded`: the head is padded so the file is exactly `maxBytes` long, whatever it holds
    /// (a vault's log: its size tells nothing about how much the vault was used).
    /// `head`: this file's head as `head(key:)` opened it, when the caller has it already (an
    /// unlock reads the mark first): a padded head is most of the file, so it is not opened twice.
    public func appending(_ new: [AuditEntry], folded: UInt64? = nil, key: SecretBytes, maxBytes: Int,
                          padded: Bool = false, head knownHead: AuditHead? = nil) throws -> AuditLogFile {
        guard let first = records.first, first.type == RecordType.checkpoint.rawValue, first.body.count > 32 else {
            throw Self.damaged("the checkpoint at its start is missing or damaged")
        }
        let checkpointChain = Array(first.body[0..<32])
        var checkpoint: AuditCheckpoint = opened(first, body: Array(first.body[32...]), chain: checkpointChain, key: key)
            ?? AuditCheckpoint(through: first.seq, since: nil, events: [:])
        var entries = records.filter { $0.type == RecordType.entry.rawValue }
        var chain = entries.reduce(checkpointChain) { Self.next($0, $1) }
        var last = entries.last?.seq ?? first.seq
        // A log that does not end in its head was cut off (or its end edited): it is never
        // appended to, so the damage cannot be papered over by the next entry.
        guard let headRecord = records.last, headRecord.type == RecordType.head.rawValue else {
            throw Self.damaged("it ends after entry \(last) without its head: entries after \(last), or the head, were cut off")
        }
        guard let oldHead: AuditHead = knownHead ?? opened(headRecord, body: headRecord.body, chain: chain, key: key),
              oldHead.last == last else {
            throw Self.damaged("the head does not follow entry \(last): entries after it were cut off, or the head was edited")
        }
        for var entry in new {
            last += 1
            entry.seq = last
            let record = Record(type: RecordType.entry.rawValue, seq: last,
                                body: try Self.sealed(entry, pad: 256, aad: Self.aad(logID, type: 2, seq: last, chain: chain), key: key))
            entries.append(record)
            chain = Self.next(chain, record)
        }
        // Compaction: the oldest entries become counts in the checkpoint, until a quarter is free.
        var startChain = checkpointChain
        // The head's padding does not count (it is made again below).
        var size = encodedCount - (headRecord.body.count + 13) + 13 + Self.minimumHead
            + entries.suffix(new.count).reduce(0) { $0 + $1.body.count + 13 }
        if size > maxBytes {
            var dropped = 0
            while dropped < entries.count - 1 && size > maxBytes * 3 / 4 {
                let record = entries[dropped]
                let entry: AuditEntry? = opened(record, body: record.body, chain: startChain, key: key)
                checkpoint.events[entry?.event ?? "unreadable", default: 0] += 1
                checkpoint.since = checkpoint.since ?? entry?.time
                checkpoint.through = record.seq
                startChain = Self.next(startChain, record)
                size -= record.body.count + 13
                dropped += 1
            }
            entries.removeFirst(dropped)
        }
        var file = AuditLogFile(logID: logID, records: [])
        try file.rebuild(checkpoint: checkpoint, chain: startChain, entries: entries,
                         head: AuditHead(last: last, folded: folded ?? oldHead.folded), key: key, size: padded ? maxBytes : nil)
        return file
    }

    /// A head sealed with 64 bytes of JSON: 12 nonce + 64 + 16 tag.
    static let minimumHead = 12 + 64 + 16

    /// `size`: pad the head so that the whole file is this long (when it fits).
    mutating func rebuild(checkpoint: AuditCheckpoint, chain start: [UInt8], entries: [Record], head: AuditHead, key: SecretBytes,
                          size: Int? = nil) throws {
        let checkpointBody = start + (try Self.sealed(checkpoint, pad: 64, aad: Self.aad(logID, type: 1, seq: checkpoint.through, chain: start), key: key))
        let chain = entries.reduce(start) { Self.next($0, $1) }
        var pad = 64
        if let size {
            let before = 24 + (checkpointBody.count + 13) + entries.reduce(0) { $0 + $1.body.count + 13 }
            pad = max(64, size - before - 13 - 12 - 16)
        }
        let headBody = try Self.sealed(head, pad: pad, aad: Self.aad(logID, type: 3, seq: head.last, chain: chain), key: key)
        records = [Record(type: RecordType.checkpoint.rawValue, seq: checkpoint.through, body: checkpointBody)] + entries
            + [Record(type: RecordType.head.rawValue, seq: head.last, body: headBody)]
    }
}

extension AuditLogFile {
    /// The sequence number of the last entry, from the head alone (see `head(key:)`).
    public func headSequence(key: SecretBytes) -> UInt64? { head(key: key)?.last }

    /// The head, opened and authenticated under the chain of the entries before it (which are
    /// hashed, not opened); nil when it does not open.
    public func head(key: SecretBytes) -> AuditHead? {
        guard let first = records.first, first.body.count > 32, let last = records.last,
              last.type == RecordType.head.rawValue else { return nil }
        let chain = records.dropFirst().filter { $0.type == RecordType.entry.rawValue }.reduce(Array(first.body[0..<32])) { Self.next($0, $1) }
        return opened(last, body: last.body, chain: chain, key: key)
    }
}
