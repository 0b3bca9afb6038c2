// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

@Suite("audit log file and forward records: chain, head, compaction, and every way they are refused")
struct AuditLogTests {
    let logID = [UInt8](repeating: 7, count: 16)
    let key = SecretBytes(randomCount: 32)

    func log(_ n: Int, maxBytes: Int = 1 << 20) throws -> AuditLogFile {
        try AuditLogFile.create(logID: logID, key: key)
            .appending((0..<n).map { AuditEntry(time: Double($0), event: $0 % 2 == 0 ? "import" : "export", count: 1) },
                       key: key, maxBytes: maxBytes)
    }

    @Test("entries come back in order, through an encode/parse round trip")
    func roundTrip() throws {
        let file = try AuditLogFile.parse(log(5).encoded())
        let contents = try file.open(key: key)
        #expect(contents.entries.map(\.seq) == [1, 2, 3, 4, 5])
        #expect(contents.head.last == 5 && contents.checkpoint.through == 0)
        let more = try file.appending([AuditEntry(time: 9, event: "delete")], folded: 3, key: key, maxBytes: 1 << 20)
        #expect(try more.open(key: key).entries.last?.event == "delete")
        #expect(more.head(key: key)?.folded == 3)
    }

    @Test("a padded log is exactly its size; the padding is cut before the JSON is read, and nothing but trailing spaces is")
    func padding() throws {
        let padded = try AuditLogFile.create(logID: logID, key: key)
            .appending([AuditEntry(time: 1, event: "unlock", detail: "two  spaces   inside ")], key: key, maxBytes: 1 << 20, padded: true)
        #expect(padded.encoded().count == 1 << 20)
        #expect(padded.encodedCount == padded.encoded().count)
        let reopened = try AuditLogFile.parse(padded.encoded())
        #expect(try reopened.open(key: key).entries.map(\.detail) == ["two  spaces   inside "])
        for (text, count) in [("", 0), ("        ", 0), ("{}", 2), ("{} ", 2), ("{}" + String(repeating: " ", count: 7), 2),
                              ("{}" + String(repeating: " ", count: 9), 2), ("{\"a\": \" \"}      ", 10), (" x ", 2)] {
            #expect(AuditLogFile.unpaddedCount(Array(text.utf8)) == count, "\(text.debugDescription)")
        }
    }

    @Test("another key, another log ID, a flipped bit anywhere: refused")
    func refused() throws {
        let bytes = try log(4).encoded()
        #expect(throws: Nu11Error.self) { try AuditLogFile.parse(bytes).open(key: SecretBytes(randomCount: 32)) }
        var otherID = bytes
        otherID[10] ^= 1
        #expect(throws: Nu11Error.self) { try AuditLogFile.parse(otherID).open(key: key) }
        for offset in stride(from: 24, to: bytes.count, by: 7) {
            var flipped = bytes
            flipped[offset] ^= 0x10
            #expect(throws: (any Error).self, "bit flipped at \(offset) went unnoticed") {
                try AuditLogFile.parse(flipped).open(key: key)
            }
        }
        #expect(throws: Nu11Error.self) { try AuditLogFile.parse(Array(bytes.dropLast(5))) }
        #expect(throws: Nu11Error.self) { try AuditLogFile.parse(Array("N11L".utf8) + [2] + [UInt8](repeating: 0, count: 30)) }
    }

    @Test("appending to a log cut off or with an edited head is refused (the damage cannot be papered over)")
    func appendRefusesDamage() throws {
        var file = try log(4)
        file.records.removeLast()
        #expect(throws: Nu11Error.self) { try file.appending([AuditEntry(time: 1, event: "x")], key: key, maxBytes: 1 << 20) }
        var dropped = try log(4)
        dropped.records.remove(at: dropped.records.count - 2)
        #expect(throws: Nu11Error.self) { try dropped.appending([AuditEntry(time: 1, event: "x")], key: key, maxBytes: 1 << 20) }
    }

    @Test("compaction keeps the log under its bound, counts what it dropped, and still verifies")
    func compaction() throws {
        let file = try log(200, maxBytes: 16 << 10)
        #expect(file.encoded().count <= 16 << 10)
        let contents = try file.open(key: key)
        #expect(contents.checkpoint.through > 0 && contents.entries.first?.seq == contents.checkpoint.through + 1)
        #expect(contents.checkpoint.events.values.reduce(0, +) == Int(contents.checkpoint.through))
        #expect(contents.entries.last?.seq == 200)
        let next = try file.appending([AuditEntry(time: 1, event: "wipe")], key: key, maxBytes: 16 << 10)
        #expect(try next.open(key: key).entries.last?.seq == 201)
    }

    @Test("an entry that does not authenticate when compaction drops it is counted as unreadable: the log then says so, it never vanishes")
    func compactionKeepsTheDamage() throws {
        // Entry 3 sealed under another key, in a chain and under a head that are otherwise
        // sound: appending goes on, and only opening entry 3 fails.
        let start = [UInt8](repeating: 5, count: 32)
        var chain = start
        var entries: [AuditLogFile.Record] = []
        for seq in UInt64(1)...40 {
            var entry = AuditEntry(time: Double(seq), event: "import", count: 1)
            entry.seq = seq
            let record = AuditLogFile.Record(type: AuditLogFile.RecordType.entry.rawValue, seq: seq,
                                             body: try AuditLogFile.sealed(entry, pad: 256, aad: AuditLogFile.aad(logID, type: 2, seq: seq, chain: chain),
                                                                           key: seq == 3 ? SecretBytes(randomCount: 32) : key))
            entries.append(record)
            chain = AuditLogFile.next(chain, record)
        }
        var file = try AuditLogFile.create(logID: logID, key: key)
        try file.rebuild(checkpoint: AuditCheckpoint(through: 0, since: nil, events: [:]), chain: start, entries: entries,
                         head: AuditHead(last: 40, folded: 0), key: key)
        let before = #expect(throws: Nu11Error.self) { try file.open(key: key) }
        #expect(before.map { "\($0)" }?.contains("entry 3 does not authenticate") == true, "\(String(describing: before))")
        // Appending until compaction drops entries 1…3 into the checkpoint.
        var compacted = file
        for n in 0..<400 {
            compacted = try compacted.appending([AuditEntry(time: Double(100 + n), event: "import")], key: key, maxBytes: 16 << 10)
            if (compacted.records.first { $0.type == AuditLogFile.RecordType.entry.rawValue }?.seq ?? 0) > 3 { break }
        }
        let error = #expect(throws: Nu11Error.self) { try compacted.open(key: key) }
        #expect(error.map { "\($0)" }?.contains("did not authenticate when compacted") == true, "\(String(describing: error))")
        #expect(compacted.encoded().count <= 16 << 10, "the log never compacted")
    }

    @Test("a forward record opens only under the keys it replaces, and tells only where it leads")
    func forward() throws {
        let old = DomainKeys.generate(role: .backup, created: 5)
        let new = old.rotated(created: 9)
        let record = try ForwardRecord.seal(new: new, old: old)
        let opened = try ForwardRecord.open(record, old: old)
        #expect(opened.sameKeys(as: new) && opened.role == .backup && opened.created == 9)
        // Every key rotates, the archive key too (issue 29); the record carries the new ones.
        #expect(opened.archive.constantTimeEquals(new.archive) && !opened.archive.constantTimeEquals(old.archive)
                && !opened.fade.constantTimeEquals(old.fade))
        #expect(ForwardRecord.destination(record) == ForwardRecord.tag(of: new))
        #expect(throws: Nu11Error.self) { try ForwardRecord.open(record, old: new) }
        #expect(throws: Nu11Error.self) { try ForwardRecord.open(record, old: DomainKeys.generate(role: .backup)) }
        for offset in [0, 4, 9, 30, record.count - 1] {
            var bad = record
            bad[offset] ^= 1
            #expect(throws: Nu11Error.self) { try ForwardRecord.open(bad, old: old) }
        }
        // The creation time survives the master record's payload.
        #expect(try DomainKeys.fromPayload(new.payload()).created == 9)
    }
}
