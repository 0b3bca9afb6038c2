// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Testing
@testable import Nu11Vault

@Suite("journal merge: the result depends only on the set of entries (issue 60, stage 1)")
struct JournalMergeTests {
    @Test("the same entries in many random orders, duplicated, and arriving in parts then whole: always the same state",
          arguments: [UInt64(1), 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    func orderAndArrivalDoNotMatter(seed: UInt64) throws {
        let sim = try JournalSimulation.run(seed: seed, devices: 2 + Int(seed % 2), steps: 400)
        let expected = JournalMerge.merge(sim.all)
        var random = SeededRandom(seed: seed &* 7919)
        // Enough happened for the rules to matter.
        #expect(sim.all.count > 150 && !expected.items.isEmpty && !expected.deleted.isEmpty)
        #expect(expected.pending.isEmpty, "with every entry arrived, nothing waits for its import")
        #expect(expected.forks.isEmpty)
        for _ in 0..<25 {
            #expect(JournalMerge.merge(sim.all.shuffled(using: &random)) == expected)
        }
        #expect(JournalMerge.merge((sim.all + sim.all.shuffled(using: &random)).shuffled(using: &random)) == expected,
                "idempotent: entries merged twice change nothing")
        // Partial arrivals: a random part first (whatever it lacks), then the rest, in two ledgers
        // fed in different orders.
        for _ in 0..<10 {
            let order = sim.all.shuffled(using: &random)
            let cut = Int(random.next() % UInt64(order.count))
            let part = JournalMerge.merge(order[..<cut])
            for item in part.pending { #expect(part.items[item] == nil && !part.deleted.contains(item)) }
            #expect(part.items.keys.allSatisfy { expected.items[$0] != nil || expected.deleted.contains($0) })
            var ledger = JournalLedger()
            var scan = JournalScan(); scan.records = Array(order[..<cut])
            ledger.ingest(scan)
            scan.records = Array(order[cut...]).shuffled(using: &random)
            ledger.ingest(scan)
            #expect(ledger.merged == expected)
        }
        // Each device's own view, once everything is exchanged, is the same state.
        for device in sim.devices.indices {
            var copy = sim
            for other in sim.devices.indices where other != device { copy.sync(other, device) }
            #expect(copy.devices[device].view == expected)
        }
    }

    @Test("the simulation makes what the rules are about: concurrent renames, note conflict copies, deletes racing changes")
    func simulationCoversTheRules() throws {
        var conflicts = 0, contested = 0, raced = 0
        for seed in UInt64(1)...6 {
            let sim = try JournalSimulation.run(seed: seed, devices: 2 + Int(seed % 2), steps: 400)
            let state = JournalMerge.merge(sim.all)
            conflicts += state.items.values.filter { !$0.noteConflicts.isEmpty }.count
            var renamers: [ItemID: Set<DeviceID>] = [:]
            for record in sim.all {
                if case .renameItem(let item, _) = record.entry.operation { renamers[item, default: []].insert(record.entry.device) }
            }
            contested += renamers.values.filter { $0.count > 1 }.count
            raced += sim.all.filter { record in
                guard let item = record.entry.operation.item, state.deleted.contains(item) else { return false }
                if case .delete = record.entry.operation { return false }
                return true
            }.count
        }
        #expect(conflicts > 0 && contested > 0 && raced > 0, "conflicts \(conflicts), contested \(contested), raced \(raced)")
    }

    struct Script {
        let key = SecretBytes(randomCount: 32)
        let a = DeviceID((try? ItemID(bytes: [UInt8](repeating: 0xaa, count: 16))) ?? ItemID())
        let b = DeviceID((try? ItemID(bytes: [UInt8](repeating: 0xbb, count: 16))) ?? ItemID())
        var chains: [DeviceID: (UInt64, [UInt8])] = [:]
        var records: [JournalRecord] = []
        mutating func add(_ device: DeviceID, at wall: UInt64, _ operation: JournalOperation) throws {
            let (seq, previous) = chains[device] ?? (1, [UInt8](repeating: 0, count: 32))
            let entry = JournalEntry(device: device, seq: seq, previous: previous, clock: JournalClock(wall: wall, counter: 0),
                                     operation: operation)
            let record = try JournalSegment.seal(entry, generation: 1, key: key).record
            chains[device] = (seq + 1, record.hash)
            records.append(record)
        }
    }

    static func imported(_ id: ItemID, _ name: String, kind: ItemKind = .file) -> JournalOperation {
        .importItem(JournalImport(item: id, kind: kind, domain: .vault, album: nil, name: name, size: 1, created: 1, taken: nil))
    }

    @Test("rename against rename and move against move: the later clock wins, a tie goes to the larger device ID")
    func lastWriterWins() throws {
        var s = Script()
        let x = ItemID(), album1 = ItemID(), album2 = ItemID()
        try s.add(s.a, at: 10, Self.imported(x, "x"))
        try s.add(s.a, at: 20, .renameItem(item: x, name: "from a"))
        try s.add(s.b, at: 21, .renameItem(item: x, name: "from b"))
        try s.add(s.a, at: 30, .moveToAlbum(item: x, album: album1))
        try s.add(s.b, at: 30, .moveToAlbum(item: x, album: album2))
        try s.add(s.a, at: 40, .renameAlbum(album: album1, name: "old"))
        try s.add(s.b, at: 41, .renameAlbum(album: album1, name: "new"))
        let state = JournalMerge.merge(s.records)
        #expect(state.items[x]?.name == "from b" && state.items[x]?.album == album2 && state.albums[album1] == "new")
    }

    @Test("a delete wins over a concurrent or later rename or move, and over an import that arrives after it")
    func deleteWins() throws {
        var s = Script()
        let x = ItemID(), y = ItemID()
        try s.add(s.a, at: 10, Self.imported(x, "x"))
        try s.add(s.a, at: 20, .delete(item: x))
        try s.add(s.b, at: 30, .renameItem(item: x, name: "later"))
        try s.add(s.b, at: 31, .moveToAlbum(item: x, album: ItemID()))
        try s.add(s.b, at: 40, .delete(item: y))
        try s.add(s.a, at: 50, Self.imported(y, "y"))
        let state = JournalMerge.merge(s.records)
        #expect(state.items.isEmpty && state.deleted == [x, y] && state.pending.isEmpty)
    }

    @Test("a note edited on both sides keeps both versions: the later current, the other a conflict copy")
    func concurrentNoteEdits() throws {
        var s = Script()
        let note = ItemID(), v1 = ItemID(), va = ItemID(), vb = ItemID(), v3 = ItemID()
        try s.add(s.a, at: 10, Self.imported(note, "n", kind: .note))
        try s.add(s.a, at: 20, .editNote(note: note, version: v1, base: nil))
        try s.add(s.a, at: 30, .editNote(note: note, version: va, base: v1))
        try s.add(s.b, at: 31, .editNote(note: note, version: vb, base: v1))
        var state = JournalMerge.merge(s.records)
        #expect(state.items[note]?.noteVersion == vb && state.items[note]?.noteConflicts == [va])
        #expect(state.items[note]?.noteVersions == [note, v1, va, vb])
        // An edit that saw the conflict resolves it.
        try s.add(s.a, at: 40, .editNote(note: note, version: v3, base: vb))
        state = JournalMerge.merge(s.records)
        #expect(state.items[note]?.noteVersion == v3 && state.items[note]?.noteConflicts == [va])
    }

    @Test("entries about an item not yet imported wait, and apply when the import arrives")
    func pendingUntilImported() throws {
        var s = Script()
        let x = ItemID()
        try s.add(s.a, at: 10, Self.imported(x, "x"))
        try s.add(s.b, at: 20, .renameItem(item: x, name: "renamed"))
        try s.add(s.b, at: 21, .setFade(item: x, deadline: 99))
        let early = JournalMerge.merge(s.records.dropFirst())
        #expect(early.items.isEmpty && early.pending == [x])
        let all = JournalMerge.merge(s.records)
        #expect(all.items[x]?.name == "renamed" && all.items[x]?.fadeDeadline == 99 && all.pending.isEmpty)
        try s.add(s.a, at: 30, .clearFade(item: x))
        #expect(JournalMerge.merge(s.records).items[x]?.fadeDeadline == nil)
    }

    @Test("two different entries at one device position (a fork): one rule picks the same one on every device")
    func forkIsDeterministic() throws {
        var s = Script()
        let x = ItemID()
        try s.add(s.a, at: 10, Self.imported(x, "x"))
        var t = s
        try s.add(s.a, at: 20, .renameItem(item: x, name: "one"))
        try t.add(t.a, at: 20, .renameItem(item: x, name: "two"))
        let both = s.records + [t.records[1]]
        let first = JournalMerge.merge(both), second = JournalMerge.merge(both.reversed())
        #expect(first == second && first.forks == [JournalPosition(device: s.a, seq: 2)])
    }
}
