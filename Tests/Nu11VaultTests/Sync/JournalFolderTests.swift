// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format
@testable import Nu11Vault

/// The journal folder as a sync peer (or an attacker who writes the vault folder) leaves it:
/// altered, cut, mixed up, put back from an older copy.
@Suite("journal segments in the folder: what authenticates is read, every defect is named (issue 60, stage 1)")
struct JournalFolderTests {
    let folder: SyncTempFolder
    let main = SecretBytes(randomCount: 32)
    var key: SecretBytes { JournalSegment.key(main: main) }
    let a = DeviceID(), b = DeviceID()
    var journal: String { folder.path + "/Journal" }

    init() throws { folder = try SyncTempFolder() }

    func keys(_ generation: UInt32) -> SecretBytes? { generation == 1 ? key : nil }
    func scan() -> JournalScan { JournalFolder.scan(vault: folder.path, key: keys) }
    func segment(_ device: DeviceID, _ first: UInt64) -> String { journal + "/" + JournalSegment.fileName(device: device, firstSeq: first) }
    func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
    func put(_ bytes: [UInt8], _ path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

    /// Where each record of a segment ends (its length prefixes walked).
    func ends(_ file: [UInt8]) -> [Int] {
        var at = JournalSegment.headerSize, out: [Int] = []
        while at + 4 <= file.count {
            at += 4 + Int(file[at..<at + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            out.append(at)
        }
        return out
    }

    /// Device `device` writes `names.count` renames of one item it imported first.
    func write(_ device: DeviceID, item: ItemID, names: [String], state: JournalWriterState = .start) throws -> JournalWriter {
        var writer = JournalWriter(vault: folder.path, device: device, generation: 1, journalKey: key, state: state)
        if state.nextSeq == 1 {
            try writer.append(.importItem(JournalImport(item: item, kind: .file, domain: .vault, album: nil, name: "first",
                                                        size: 5, created: 1, taken: nil)), now: 1_000)
        }
        for (i, name) in names.enumerated() { try writer.append(.renameItem(item: item, name: name), now: 2_000 + UInt64(i)) }
        return writer
    }

    @Test("two devices' segments read back whole, chained, in one merge")
    func roundTrip() throws {
        let x = ItemID(), y = ItemID()
        _ = try write(a, item: x, names: ["a1", "a2"])
        _ = try write(b, item: y, names: ["b1"])
        let s = scan()
        #expect(s.findings.isEmpty && s.records.count == 5 && s.heads == [a: 3, b: 2])
        let state = JournalMerge.merge(s.records)
        #expect(state.items[x]?.name == "a2" && state.items[y]?.name == "b1" && state.items[x]?.importedBy == a)
        let mode = try FileManager.default.attributesOfItem(atPath: segment(a, 1))[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test("every entry on disk has its own nonce: the same rename twice, two devices, one entry sealed twice")
    func noncesOnDisk() throws {
        let x = ItemID()
        _ = try write(a, item: x, names: ["same", "same", "same"])
        _ = try write(b, item: x, names: ["same"])
        var nonces: [[UInt8]] = []
        for device in [a, b] {
            let file = try bytes(segment(device, 1))
            var start = JournalSegment.headerSize
            for end in ends(file) {
                try #require(end <= file.count && start + 4 + 12 <= end, "a record of \(device) is cut")
                nonces.append(Array(file[(start + 4)..<(start + 16)]))
                start = end
            }
        }
        #expect(nonces.count == 6, "6 entries written, \(nonces.count) read")
        let entry = JournalEntry(device: a, seq: 9, previous: [UInt8](repeating: 0, count: 32), clock: JournalClock(wall: 5, counter: 0),
                                 operation: .renameItem(item: x, name: "same"))
        for _ in 0..<2 { nonces.append(Array(try JournalSegment.seal(entry, generation: 1, key: key).bytes[4..<16])) }
        #expect(Set(nonces.map { Data($0) }).count == nonces.count, "a nonce repeats among \(nonces.count) sealed entries")
        #expect(!nonces.contains([UInt8](repeating: 0, count: 12)), "an all-zero nonce")
    }

    @Test("a flipped byte in a sealed entry: the entries before it are kept, that one and the rest are not",
          arguments: [0, 1, 2])
    func flippedByte(entry: Int) throws {
        let x = ItemID()
        _ = try write(a, item: x, names: ["a1", "a2"])
        var file = try bytes(segment(a, 1))
        let start = [JournalSegment.headerSize] + ends(file)
        file[start[entry] + 4 + 20] ^= 0x01
        try put(file, segment(a, 1))
        let s = scan()
        #expect(s.records.map(\.entry.seq) == Array(1..<UInt64(entry + 1)))
        #expect(s.findings == [.defect(file: JournalSegment.fileName(device: a, firstSeq: 1), .failedAuthentication(seq: UInt64(entry + 1)))])
    }

    @Test("a broken hash chain: an entry that authenticates but does not follow the one before is refused")
    func brokenChain() throws {
        let x = ItemID()
        let w = try write(a, item: x, names: ["a1"])
        // Sealed with the right key, at the right place, but chained to nothing.
        let stray = JournalEntry(device: a, seq: 3, previous: [UInt8](repeating: 7, count: 32), clock: w.state.clock.tick(now: 9_000),
                                 operation: .renameItem(item: x, name: "injected"))
        let sealed = try JournalSegment.seal(stray, generation: 1, key: key).bytes
        try put(try bytes(segment(a, 1)) + sealed, segment(a, 1))
        let s = scan()
        #expect(s.records.count == 2 && JournalMerge.merge(s.records).items[x]?.name == "a1")
        #expect(s.findings == [.defect(file: JournalSegment.fileName(device: a, firstSeq: 1), .brokenChain(seq: 3))])
    }

    @Test("another device's entry in a device's segment: sealed for its own place it does not open; sealed for this place it names the wrong device")
    func otherDevicesEntry() throws {
        let x = ItemID()
        let wa = try write(a, item: x, names: [])
        let wb = try write(b, item: ItemID(), names: ["b1"])
        // b's second record, copied into a's segment after a's first.
        let bFile = try bytes(segment(b, 1))
        let bSecond = Array(bFile[ends(bFile)[0]...])
        let aFile = try bytes(segment(a, 1))
        try put(aFile + bSecond, segment(a, 1))
        #expect(scan().findings.contains(.defect(file: JournalSegment.fileName(device: a, firstSeq: 1), .failedAuthentication(seq: 2))))
        // One who holds the key seals an entry naming b, with a's place in the associated data.
        let forged = JournalEntry(device: b, seq: 2, previous: wa.state.previous, clock: wb.state.clock.tick(now: 9_000),
                                  operation: .delete(item: x))
        let plain = try forged.encoded()
        let sealed = try SmallSeal.seal(plain, key: key, associatedData: JournalSegment.associatedData(device: a, seq: 2, generation: 1))
        var length = JournalBytes(); length.u32(UInt32(sealed.count))
        try put(aFile + length.bytes + sealed, segment(a, 1))
        let s = scan()
        #expect(s.findings == [.defect(file: JournalSegment.fileName(device: a, firstSeq: 1), .misplaced(seq: 2))])
        #expect(JournalMerge.merge(s.records).items[x] != nil, "the forged delete is not merged")
        // A segment renamed to another device's name.
        try FileManager.default.moveItem(atPath: segment(a, 1), toPath: segment(DeviceID(), 1))
        #expect(scan().findings.contains { if case .defect(_, .badHeader) = $0 { true } else { false } })
    }

    @Test("an older copy of a segment put back: reported as a rollback, and nothing merged before is undone; the writer does not append after it")
    func rolledBackSegment() throws {
        let x = ItemID()
        var w = try write(a, item: x, names: ["n1"])
        let older = try bytes(segment(a, 1))
        try w.append(.renameItem(item: x, name: "n2"), now: 5_000)
        try w.append(.moveToAlbum(item: x, album: ItemID()), now: 5_001)
        var ledger = JournalLedger()
        #expect(ledger.ingest(scan()).isEmpty)
        let before = ledger.merged
        #expect(before.items[x]?.name == "n2")
        try put(older, segment(a, 1))  // the sync peer's older copy
        let again = scan()
        #expect(again.findings.isEmpty && JournalMerge.merge(again.records).items[x]?.name == "n1",
                "read alone, the older copy looks sound and older: only the ledger can tell")
        #expect(ledger.ingest(again) == [.rolledBack(device: a, known: 4, found: 2)])
        #expect(ledger.merged == before)
        // The writer's next entry starts a new segment at seq 5 instead of following the old copy's seq 2.
        try w.append(.renameItem(item: x, name: "n3"), now: 6_000)
        let left = try bytes(segment(a, 1))
        #expect(FileManager.default.fileExists(atPath: segment(a, 5)) && left == older)
        let third = scan()
        #expect(third.findings == [.gap(device: a, missing: 3...4)])
        #expect(ledger.ingest(third).isEmpty)
        #expect(ledger.merged.items[x]?.name == "n3" && ledger.merged.items[x]?.album == before.items[x]?.album)
        // A writer resumed from the ledger continues the chain after seq 5.
        let resumed = JournalWriterState(resuming: a, from: ledger)
        #expect(resumed.nextSeq == 6 && resumed.clock >= w.state.clock)
    }

    @Test("a segment cut short (still arriving): the entries that arrived whole are read, the cut one is named")
    func truncatedSegment() throws {
        let x = ItemID()
        var w = try write(a, item: x, names: ["a1", "a2"])
        let full = try bytes(segment(a, 1))
        let recordEnds = ends(full)
        #expect(recordEnds.count == 3 && recordEnds.last == full.count)
        for cut in [full.count - 1, full.count - 150, recordEnds[0] + 2] {
            try put(Array(full[..<cut]), segment(a, 1))
            let s = scan()
            let kept = UInt64(recordEnds.filter { $0 <= cut }.count)
            #expect(s.records.count == Int(kept))
            #expect(s.findings == [.defect(file: JournalSegment.fileName(device: a, firstSeq: 1), .truncated(seq: kept + 1))])
        }
        try put(Array(full[..<10]), segment(a, 1))
        #expect(scan().findings == [.defect(file: JournalSegment.fileName(device: a, firstSeq: 1), .badHeader)])
        // The writer never appends to a file it did not leave.
        try w.append(.renameItem(item: x, name: "a3"), now: 9_000)
        let left = try bytes(segment(a, 1))
        #expect(left.count == 10 && FileManager.default.fileExists(atPath: segment(a, 4)))
    }

    @Test("a missing segment is a gap, later segments still merge; stray files and unknown generations are named")
    func gapsAndStrays() throws {
        let x = ItemID()
        var w = try write(a, item: x, names: ["a1"])
        // A new segment per writer session (the state's segment forgotten).
        var state = w.state; state.segment = nil
        w = try write(a, item: x, names: ["a2"], state: state)
        state = w.state; state.segment = nil
        w = try write(a, item: x, names: ["a3"], state: state)
        try FileManager.default.removeItem(atPath: segment(a, 3))
        FileManager.default.createFile(atPath: journal + "/\(a.hex)-0000000000000001.sync-conflict-20261128-1.n11j", contents: Data([1]))
        var other = JournalWriter(vault: folder.path, device: b, generation: 2, journalKey: SecretBytes(randomCount: 32), state: .start)
        try other.append(.setting(key: "k", value: "v"), now: 1)
        let s = scan()
        #expect(s.records.map(\.entry.seq) == [1, 2, 4])
        #expect(Set(s.findings) == [.gap(device: a, missing: 3...3),
                                   .strayFile("\(a.hex)-0000000000000001.sync-conflict-20261128-1.n11j"),
                                   .defect(file: JournalSegment.fileName(device: b, firstSeq: 1), .unknownGeneration(2))])
        #expect(JournalMerge.merge(s.records).items[x]?.name == "a3")
    }
}
