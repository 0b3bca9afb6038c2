// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// A note as a user sees it.
public struct NoteSummary: Sendable, Equatable {
    public var id: ItemID
    public var title: String
    public var size: UInt64
    public var created: Date
    public var fadesAt: Date?
}

extension Notes {
    public static let maxNoteBytes = 16 << 20

    /// Stores a note (`Notes/vault_<ID>.n11note`, or `fade_` with a fade deadline).
    @discardableResult
    public func addNote(title: String, body: [UInt8], fade: Double? = nil) throws -> NoteSummary {
        try Self.validateTitle(title)
        guard body.count <= Self.maxNoteBytes else {
            throw Nu11Error(.invalidArgument, "the note is larger than 16 MiB", remedy: .advice(.importAsFile))
        }
        let item = try vault.items.store(MemorySource(body), name: title, kind: .note, album: nil, fade: fade)
        audit("note add", ids: [item.id])
        return note(item)
    }

    public func list() throws -> [NoteSummary] {
        var out: [NoteSummary] = []
        var after: ItemID?
        repeat {
            let page = try vault.items.list(limit: 1000, after: after, kind: .note)
            out += page.items.map(note)
            after = page.next
        } while after != nil
        return out
    }

    public func noteBody(_ ref: ItemRef) throws -> [UInt8] {
        let row = try noteRow(ref)
        var sink = MemorySink()
        _ = try vault.items.export(row, to: &sink)
        audit("note show", count: 1, items: [row.id])
        return sink.bytes
    }

    /// Replaces a note's body (and optionally its title). The edited note gets a new ID and
    /// a new key, and the old version is crypto-shredded, so an old copy of its file opens
    /// with nothing. The new note is committed first (its index row); a failure before that
    /// leaves the old note untouched. Returns the new ID.
    @discardableResult
    public func updateNote(_ ref: ItemRef, body: [UInt8], title: String? = nil) throws -> NoteSummary {
        let row = try noteRow(ref)
        try vault.items.checkFade(row)
        guard body.count <= Self.maxNoteBytes else {
            throw Nu11Error(.invalidArgument, "the note is larger than 16 MiB", remedy: .advice(.importAsFile))
        }
        let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
        if let title { try Self.validateTitle(title) }
        let fade = row.domain == .fade ? state.fade.first { $0.id == row.id }.map { max(1, $0.deadline - now) } : nil
        let item = try vault.items.store(MemorySource(body), name: title ?? meta.name, kind: .note, album: nil, fade: fade,
                             created: meta.created, replacing: [row])
        audit("note edit", count: 1, items: [row.id], detail: "now \(item.id)")
        return note(item)
    }

    func noteRow(_ ref: ItemRef) throws -> ItemRow {
        let row = try vault.items.row(ref)
        guard row.kind == .note else {
            throw Nu11Error(.invalidArgument, "item \(ref) is a file, not a note", remedy: .exportFileNotNote, item: ref.digits)
        }
        return row
    }

    func note(_ item: ItemSummary) -> NoteSummary {
        let deadline = item.domain == .fade
            ? state.fade.first { $0.id == item.id }.map { Date(timeIntervalSince1970: $0.deadline) } : nil
        return NoteSummary(id: item.id, title: item.name, size: item.size, created: item.created, fadesAt: deadline)
    }

    static func validateTitle(_ title: String) throws {
        guard title.utf8.count <= 1024, !title.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw Nu11Error(.invalidArgument, "the title is not valid",
                            remedy: .advice(.validTitle))
        }
    }
}
