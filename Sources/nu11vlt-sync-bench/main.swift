// SPDX-License-Identifier: GPL-3.0-or-later
// Measures the sync journal's merge (bench/run's row 15, issue 60): N entries from three devices
// (imports, renames, album moves, deletes, note edits, Fade deadlines), sealed into segments in
// FOLDER/Journal, then read (opened, parsed, chain-checked) and merged into an empty ledger —
// the index state a device that joins builds from every journal. Usage:
//   nu11vlt-sync-bench FOLDER [N]
// Prints `read<TAB>seconds`, `merge<TAB>seconds`, `total<TAB>seconds`, `entries<TAB>n`, `items<TAB>n`.
import Foundation
import Nu11Format
import Nu11Storage
import Nu11Vault

struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("nu11vlt-sync-bench: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments.dropFirst()
guard let root = arguments.first else { fail("usage: nu11vlt-sync-bench FOLDER [N]") }
let total = arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000
let main = SecretBytes(randomCount: 32)
let key = JournalSegment.key(main: main)
var random = SplitMix(state: 60)
let devices = [DeviceID(), DeviceID(), DeviceID()]
var states = Array(repeating: JournalWriterState.start, count: devices.count)
var segments: [[UInt8]] = Array(repeating: [], count: devices.count)
var firsts: [UInt64] = Array(repeating: 1, count: devices.count)
var items: [ItemID] = []
var notes: [ItemID] = []
let albums = (0..<20).map { _ in ItemID() }
let folder = root + "/Journal"

do {
    try ProtectedFiles.makeDirectory(folder)
    func flush(_ d: Int) throws {
        guard !segments[d].isEmpty else { return }
        try ProtectedFiles.writeAtomically(segments[d], to: folder + "/" + JournalSegment.fileName(device: devices[d], firstSeq: firsts[d]))
        segments[d] = []
    }
    var wall: UInt64 = 1_800_000_000_000
    for _ in 0..<total {
        let d = Int(random.next() % 3)
        wall += random.next() % 3
        let roll = random.next() % 20
        let operation: JournalOperation
        if items.isEmpty || roll < 8 {
            let id = ItemID()
            let note = roll == 0
            if note { notes.append(id) } else { items.append(id) }
            operation = .importItem(JournalImport(item: id, kind: note ? .note : .file, domain: .vault,
                                                  album: roll % 2 == 0 ? albums[Int(random.next() % 20)] : nil,
                                                  name: "IMG_\(random.next() % 100_000).jpg", size: random.next() % 10_000_000,
                                                  created: 1_800_000_000, taken: 1_700_000_000))
        } else {
            let item = items[Int(random.next() % UInt64(items.count))]
            switch roll {
            case 8...11: operation = .renameItem(item: item, name: "renamed \(random.next() % 100_000).jpg")
            case 12...14: operation = .moveToAlbum(item: item, album: albums[Int(random.next() % 20)])
            case 15: operation = .delete(item: item)
            case 16: operation = .setFade(item: item, deadline: 1_900_000_000)
            case 17: operation = .renameAlbum(album: albums[Int(random.next() % 20)], name: "Album \(random.next() % 1000)")
            default:
                if let note = notes.last { operation = .editNote(note: note, version: ItemID(), base: nil) }
                else { operation = .clearFade(item: item) }
            }
        }
        let clock = states[d].clock.tick(now: wall)
        let entry = JournalEntry(device: devices[d], seq: states[d].nextSeq, previous: states[d].previous, clock: clock, operation: operation)
        let (bytes, record) = try JournalSegment.seal(entry, generation: 1, key: key)
        if segments[d].isEmpty {
            firsts[d] = entry.seq
            segments[d] = JournalSegment.header(device: devices[d], firstSeq: entry.seq, generation: 1)
        }
        segments[d] += bytes
        states[d] = JournalWriterState(nextSeq: entry.seq + 1, previous: record.hash, clock: clock)
        if UInt64(segments[d].count) >= JournalWriter.segmentLimit { try flush(d) }
    }
    for d in devices.indices { try flush(d) }
} catch {
    fail("writing the journal: \(error)")
}

let clock = ContinuousClock()
let start = clock.now
let scan = JournalFolder.scan(vault: root, key: { $0 == 1 ? key : nil })
let read = clock.now
var ledger = JournalLedger()
let findings = ledger.ingest(scan)
let state = ledger.merged
let end = clock.now
guard scan.findings.isEmpty, findings.isEmpty, scan.records.count == total else {
    fail("the journal did not read back whole: \(scan.records.count) of \(total) entries, \(scan.findings.count + findings.count) findings")
}
func seconds(_ d: Duration) -> String { String(format: "%.3f", Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18) }
print("read\t\(seconds(read - start))")
print("merge\t\(seconds(end - read))")
print("total\t\(seconds(end - start))")
print("entries\t\(total)")
print("items\t\(state.items.count)")
