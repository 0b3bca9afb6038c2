// SPDX-License-Identifier: GPL-3.0-or-later
// The per-device sync journal (issue 60, stage 1: not yet written by the commands), its entries.
// docs/FORMAT.md § 9 specifies the bytes; `JournalSegment` seals them.

/// A device of a vault folder shared between devices: 16 random bytes, 32 hex digits in file names.
public struct DeviceID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let id: ItemID
    public init(_ id: ItemID) { self.id = id }
    public init() { id = ItemID() }
    public var bytes: [UInt8] { id.bytes }
    public var hex: String { id.hex }
    public var description: String { id.hex }
    public static func < (a: DeviceID, b: DeviceID) -> Bool { a.id < b.id }
}

/// A hybrid logical clock reading: milliseconds of wall time, and a counter that orders entries
/// within one millisecond and carries causality past a clock that lags (Kulkarni et al., 2014).
public struct JournalClock: Sendable, Hashable, Comparable {
    public var wall: UInt64
    public var counter: UInt32
    public init(wall: UInt64, counter: UInt32) { self.wall = wall; self.counter = counter }
    public static let zero = JournalClock(wall: 0, counter: 0)
    public static func < (a: JournalClock, b: JournalClock) -> Bool { (a.wall, a.counter) < (b.wall, b.counter) }

    /// The reading for a new local entry: after `self` (the last reading, local or observed) and
    /// at least `now` (ms).
    public func tick(now: UInt64) -> JournalClock {
        if now > wall { return JournalClock(wall: now, counter: 0) }
        if counter == UInt32.max { return JournalClock(wall: wall + 1, counter: 0) }
        return JournalClock(wall: wall, counter: counter + 1)
    }

    /// The clock after observing another device's reading: never behind it, so an entry written
    /// after merging another's orders after it.
    public func observing(_ remote: JournalClock) -> JournalClock { max(self, remote) }
}

/// What one journal entry records. Names and settings are UTF-8; note content is never in the
/// journal (a note version is an immutable `.n11note` item under its own key, so deleting the
/// note still shreds its text).
public enum JournalOperation: Sendable, Hashable {
    case importItem(JournalImport)
    case delete(item: ItemID)
    case moveToAlbum(item: ItemID, album: ItemID?)
    case renameAlbum(album: ItemID, name: String)
    case renameItem(item: ItemID, name: String)
    /// A note's new version: the content item `version`, edited from `base` (nil: from the
    /// note's first version, whose content is the note item itself).
    case editNote(note: ItemID, version: ItemID, base: ItemID?)
    case setFade(item: ItemID, deadline: Int64)
    case clearFade(item: ItemID)
    case setting(key: String, value: String)

    var code: UInt8 {
        switch self {
        case .importItem: 1
        case .delete: 2
        case .moveToAlbum: 3
        case .renameAlbum: 4
        case .renameItem: 5
        case .editNote: 6
        case .setFade: 7
        case .clearFade: 8
        case .setting: 9
        }
    }

    /// The item the operation is about (nil: an album rename or a setting).
    public var item: ItemID? {
        switch self {
        case .importItem(let i): i.item
        case .delete(let item), .moveToAlbum(let item, _), .renameItem(let item, _), .setFade(let item, _),
             .clearFade(let item): item
        case .editNote(let note, _, _): note
        case .renameAlbum, .setting: nil
        }
    }
}

public struct JournalImport: Sendable, Hashable {
    public var item: ItemID
    public var kind: ItemKind
    public var domain: Domain
    public var album: ItemID?
    public var name: String
    public var size: UInt64
    /// Unix seconds: the import, and (photos, videos) when it was taken.
    public var created: Int64
    public var taken: Int64?

    public init(item: ItemID, kind: ItemKind, domain: Domain, album: ItemID?, name: String, size: UInt64,
                created: Int64, taken: Int64?) {
        self.item = item; self.kind = kind; self.domain = domain; self.album = album
        self.name = name; self.size = size; self.created = created; self.taken = taken
    }
}

/// One entry: who wrote it, where in that device's chain, when, and what.
public struct JournalEntry: Sendable, Hashable {
    public var device: DeviceID
    /// 1, 2, 3, … per device, without holes.
    public var seq: UInt64
    /// `JournalSegment.hash` of the device's entry `seq - 1`; 32 zero bytes for seq 1.
    public var previous: [UInt8]
    public var clock: JournalClock
    public var operation: JournalOperation

    public init(device: DeviceID, seq: UInt64, previous: [UInt8], clock: JournalClock, operation: JournalOperation) {
        self.device = device; self.seq = seq; self.previous = previous; self.clock = clock; self.operation = operation
    }

    /// The merge's total order: the clock, then the device, then the sequence number.
    public static func orderedBefore(_ a: JournalEntry, _ b: JournalEntry) -> Bool {
        if a.clock != b.clock { return a.clock < b.clock }
        if a.device != b.device { return a.device < b.device }
        return a.seq < b.seq
    }
}
