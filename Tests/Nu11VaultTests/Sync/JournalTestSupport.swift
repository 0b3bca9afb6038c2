// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
@testable import Nu11Vault

/// SplitMix64: a seeded generator, so a failing case is reproduced by its seed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
    mutating func id() -> ItemID {
        var bytes: [UInt8] = []
        for _ in 0..<2 { withUnsafeBytes(of: next()) { bytes += $0 } }
        return (try? ItemID(bytes: bytes)) ?? ItemID()
    }
}

/// A temp folder, removed when the test ends.
final class SyncTempFolder {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("n11j-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Several devices making changes, each from its own view of the vault (what it has merged), and
/// exchanging journals now and then: concurrent renames, moves, deletes and note edits.
struct JournalSimulation {
    struct Device {
        var id: DeviceID
        var state = JournalWriterState.start
        var wall: UInt64
        var known: [JournalRecord] = []
        var view: MergedState { JournalMerge.merge(known) }
    }

    let key = SecretBytes(randomCount: 32)
    var random: SeededRandom
    var devices: [Device]
    var all: [JournalRecord] = []
    var albums: [ItemID]

    init(seed: UInt64, devices count: Int) {
        random = SeededRandom(seed: seed)
        var made: [Device] = []
        for _ in 0..<count { made.append(Device(id: DeviceID(random.id()), wall: 1_800_000_000_000 + random.next() % 5_000)) }
        devices = made
        var albums: [ItemID] = []
        for _ in 0..<3 { albums.append(random.id()) }
        self.albums = albums
    }

    /// Seals one entry as device `d`'s next (in memory: the merge is what is tested here).
    mutating func write(_ d: Int, _ operation: JournalOperation) throws {
        devices[d].wall += 1 + random.next() % 40
        let clock = devices[d].state.clock.tick(now: devices[d].wall)
        let entry = JournalEntry(device: devices[d].id, seq: devices[d].state.nextSeq, previous: devices[d].state.previous,
                                 clock: clock, operation: operation)
        let record = try JournalSegment.seal(entry, generation: 1, key: key).record
        devices[d].state = JournalWriterState(nextSeq: entry.seq + 1, previous: record.hash, clock: clock)
        devices[d].known.append(record)
        all.append(record)
    }

    /// Device `to` receives everything `from` knows.
    mutating func sync(_ from: Int, _ to: Int) {
        let have = Set(devices[to].known.map { JournalPosition(device: $0.entry.device, seq: $0.entry.seq) })
        for record in devices[from].known where !have.contains(JournalPosition(device: record.entry.device, seq: record.entry.seq)) {
            devices[to].known.append(record)
            devices[to].state.clock = devices[to].state.clock.observing(record.entry.clock)
        }
    }

    mutating func pick<T>(_ values: [T]) -> T? { values.isEmpty ? nil : values[Int(random.next() % UInt64(values.count))] }

    /// One random step: mostly changes on one device, sometimes an exchange.
    mutating func step() throws {
        let d = Int(random.next() % UInt64(devices.count))
        let view = devices[d].view
        let items = view.items.keys.sorted()
        let album = pick(albums.map { Optional($0) } + [nil]) ?? nil
        switch random.next() % 12 {
        case 0, 1:
            let note = random.next() % 3 == 0
            try write(d, .importItem(JournalImport(item: random.id(), kind: note ? .note : .file, domain: .vault, album: album,
                                                   name: "item \(random.next() % 1000)", size: random.next() % 100_000,
                                                   created: 1_800_000_000, taken: random.next() % 2 == 0 ? 1_700_000_000 : nil)))
        case 2, 3: if let item = pick(items) { try write(d, .renameItem(item: item, name: "renamed \(random.next() % 1000)")) }
        case 4: if let item = pick(items) { try write(d, .moveToAlbum(item: item, album: album)) }
        case 5: if let item = pick(items), random.next() % 2 == 0 { try write(d, .delete(item: item)) }
        case 6, 7:
            let notes = items.filter { view.items[$0]?.kind == .note }
            if let note = pick(notes) {
                let current = view.items[note]?.noteVersion
                try write(d, .editNote(note: note, version: random.id(), base: current == note ? nil : current))
            }
        case 8:
            if let item = pick(items) {
                try write(d, random.next() % 2 == 0 ? .setFade(item: item, deadline: 1_900_000_000 + Int64(random.next() % 1000)) : .clearFade(item: item))
            }
        case 9:
            if let a = pick(albums) { try write(d, .renameAlbum(album: a, name: "album \(random.next() % 100)")) }
            if random.next() % 4 == 0 { try write(d, .setting(key: "fade.default", value: "\(random.next() % 30)d")) }
        default:
            let other = Int(random.next() % UInt64(devices.count))
            if other != d { sync(other, d) }
        }
    }

    /// Also a few entries about items whose import only one device has (pending elsewhere), and
    /// a delete racing a rename: what makes the rules matter.
    static func run(seed: UInt64, devices: Int, steps: Int) throws -> JournalSimulation {
        var sim = JournalSimulation(seed: seed, devices: devices)
        for _ in 0..<steps { try sim.step() }
        return sim
    }
}
