// SPDX-License-Identifier: GPL-3.0-or-later
// The deterministic merge of every device's journal into an index state (issue 60, stage 1; the
// rules are docs/FORMAT.md § 9.4). A pure function of the *set* of entries: any order, any
// duplicates, the same result — so every device that holds the same entries lists the same vault.
import Nu11Format

/// An item as the merge leaves it.
public struct MergedItem: Sendable, Hashable {
    public var id: ItemID
    public var kind: ItemKind
    public var domain: Domain
    public var name: String
    public var album: ItemID?
    public var size: UInt64
    public var created: Int64
    public var taken: Int64?
    /// Unix seconds; nil: not fading.
    public var fadeDeadline: Int64?
    /// The device whose journal imported it.
    public var importedBy: DeviceID
    /// A note's current version (the content item to read; the note's own ID for its first
    /// version), and the versions written concurrently with it, kept as conflict copies
    /// (oldest first). Empty for other items.
    public var noteVersion: ItemID?
    public var noteConflicts: [ItemID]
    /// Every version of a note, in merge order (the first version first).
    public var noteVersions: [ItemID]
}

/// The index state the merge builds.
public struct MergedState: Sendable, Hashable {
    public var items: [ItemID: MergedItem] = [:]
    public var albums: [ItemID: String] = [:]
    /// Items deleted by any device (tombstones): never listed again, whatever else arrives.
    public var deleted: Set<ItemID> = []
    /// Items that entries refer to but whose import has not arrived (applied when it does).
    public var pending: Set<ItemID> = []
    public var settings: [String: String] = [:]
    /// Positions where two different entries claim the same device and sequence number (only the
    /// one with the smaller hash is merged).
    public var forks: Set<JournalPosition> = []
    public init() {}
}

public struct JournalPosition: Sendable, Hashable, Comparable {
    public var device: DeviceID
    public var seq: UInt64
    public init(device: DeviceID, seq: UInt64) { self.device = device; self.seq = seq }
    public static func < (a: JournalPosition, b: JournalPosition) -> Bool { (a.device, a.seq) < (b.device, b.seq) }
}

public enum JournalMerge {
    /// A last-writer-wins register: the value of the entry latest in the merge order.
    struct Register<Value> {
        var at: JournalEntry
        var value: Value
        mutating func offer(_ entry: JournalEntry, _ value: Value) {
            if JournalEntry.orderedBefore(at, entry) { at = entry; self.value = value }
        }
    }

    struct Version { var at: JournalEntry; var version: ItemID; var base: ItemID? }

    struct Draft {
        var imports: [ItemID: Register<JournalImport>] = [:]
        var names: [ItemID: Register<String>] = [:]
        var albums: [ItemID: Register<ItemID?>] = [:]
        var fades: [ItemID: Register<Int64?>] = [:]
        var versions: [ItemID: [Version]] = [:]
        var albumNames: [ItemID: Register<String>] = [:]
        var settings: [String: Register<String>] = [:]
        var deleted: Set<ItemID> = []
        var referenced: Set<ItemID> = []
    }

    /// Merges `records` (from every device, in any order, duplicates allowed).
    public static func merge(_ records: some Sequence<JournalRecord>) -> MergedState {
        var chosen: [JournalPosition: JournalRecord] = [:]
        var forks: Set<JournalPosition> = []
        for record in records {
            let position = JournalPosition(device: record.entry.device, seq: record.entry.seq)
            if let held = chosen[position] {
                guard held.hash != record.hash else { continue }
                forks.insert(position)
                if record.hash.lexicographicallyPrecedes(held.hash) { chosen[position] = record }
            } else {
                chosen[position] = record
            }
        }
        var draft = Draft()
        for record in chosen.values { apply(record.entry, to: &draft) }
        var state = build(draft)
        state.forks = forks
        return state
    }

    static func apply(_ entry: JournalEntry, to d: inout Draft) {
        func offer<V>(_ map: inout [ItemID: Register<V>], _ key: ItemID, _ value: V) {
            if map[key] == nil { map[key] = Register(at: entry, value: value) } else { map[key]?.offer(entry, value) }
        }
        switch entry.operation {
        case .importItem(let i):
            // Two imports of one ID (IDs are random: a replay, or a bug) — the earliest wins.
            if let held = d.imports[i.item], JournalEntry.orderedBefore(held.at, entry) {
                // keep held
            } else {
                d.imports[i.item] = Register(at: entry, value: i)
            }
            offer(&d.names, i.item, i.name)
            offer(&d.albums, i.item, i.album)
        case .delete(let item):
            d.deleted.insert(item)
        case .moveToAlbum(let item, let album):
            offer(&d.albums, item, album); d.referenced.insert(item)
        case .renameItem(let item, let name):
            offer(&d.names, item, name); d.referenced.insert(item)
        case .renameAlbum(let album, let name):
            if d.albumNames[album] == nil { d.albumNames[album] = Register(at: entry, value: name) } else { d.albumNames[album]?.offer(entry, name) }
        case .editNote(let note, let version, let base):
            d.versions[note, default: []].append(Version(at: entry, version: version, base: base)); d.referenced.insert(note)
        case .setFade(let item, let deadline):
            offer(&d.fades, item, deadline); d.referenced.insert(item)
        case .clearFade(let item):
            offer(&d.fades, item, nil); d.referenced.insert(item)
        case .setting(let key, let value):
            if d.settings[key] == nil { d.settings[key] = Register(at: entry, value: value) } else { d.settings[key]?.offer(entry, value) }
        }
    }

    static func build(_ d: Draft) -> MergedState {
        var state = MergedState()
        state.deleted = d.deleted
        state.albums = d.albumNames.mapValues(\.value)
        state.settings = d.settings.mapValues(\.value)
        for item in d.referenced where d.imports[item] == nil && !d.deleted.contains(item) { state.pending.insert(item) }
        state.items.reserveCapacity(d.imports.count)
        for (id, imported) in d.imports where !d.deleted.contains(id) {
            let i = imported.value
            var item = MergedItem(id: id, kind: i.kind, domain: i.domain, name: d.names[id]?.value ?? i.name,
                                  album: d.albums[id]?.value ?? nil, size: i.size, created: i.created, taken: i.taken,
                                  fadeDeadline: d.fades[id]?.value ?? nil, importedBy: imported.at.device,
                                  noteVersion: nil, noteConflicts: [], noteVersions: [])
            if i.kind == .note { notes(of: id, d.versions[id] ?? [], into: &item) }
            state.items[id] = item
        }
        return state
    }

    /// The current version is the latest edit; an edit that is not among its ancestors (through
    /// the `base` links) was made concurrently, without seeing it, and is kept as a conflict copy.
    static func notes(of note: ItemID, _ edits: [Version], into item: inout MergedItem) {
        var byVersion: [ItemID: Version] = [:]
        for edit in edits {
            // One version ID written twice: the earliest entry holds it.
            if let held = byVersion[edit.version], JournalEntry.orderedBefore(held.at, edit.at) { continue }
            byVersion[edit.version] = edit
        }
        byVersion[note] = nil
        let ordered = byVersion.values.sorted { JournalEntry.orderedBefore($0.at, $1.at) }
        item.noteVersions = [note] + ordered.map(\.version)
        guard let current = ordered.last else { item.noteVersion = note; return }
        item.noteVersion = current.version
        var ancestors: Set<ItemID> = [current.version, note]  // every version descends from the first
        var cursor = current.base ?? note
        while !ancestors.contains(cursor) {
            ancestors.insert(cursor)
            guard cursor != note, let parent = byVersion[cursor] else { break }
            cursor = parent.base ?? note
        }
        item.noteConflicts = item.noteVersions.filter { !ancestors.contains($0) }
    }
}
