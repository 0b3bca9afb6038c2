// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Vault

/// The JSON shape of an item (docs/JSON.md) — the CLI's, not the library's: every key is
/// written, `null` when absent (one schema for every item); `kind` is "file" or "note" and
/// `domain` the domain's name.
struct ItemJSON: Encodable {
    let item: ItemSummary

    init(_ item: ItemSummary) { self.item = item }

    enum CodingKeys: String, CodingKey {
        case id, name, size, type, album, albumID, domain, kind, created, fadesAt, modified
        case width, height, taken, camera, gps, thumbnail
    }

    static func name(_ kind: ItemKind) -> String { kind == .note ? "note" : "file" }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(item.id.hex, forKey: .id)
        try c.encode(item.name, forKey: .name)
        try c.encode(item.size, forKey: .size)
        try c.encode(item.type, forKey: .type)
        try c.encode(item.album, forKey: .album)
        try c.encode(item.albumID?.hex, forKey: .albumID)
        try c.encode("\(item.domain)", forKey: .domain)
        try c.encode(Self.name(item.kind), forKey: .kind)
        try c.encode(item.created, forKey: .created)
        try c.encode(item.fadesAt, forKey: .fadesAt)
        try c.encode(item.modified, forKey: .modified)
        try c.encode(item.width, forKey: .width)
        try c.encode(item.height, forKey: .height)
        try c.encode(item.taken, forKey: .taken)
        try c.encode(item.camera, forKey: .camera)
        try c.encode(item.gps, forKey: .gps)
        try c.encode(item.thumbnail, forKey: .thumbnail)
    }

    static func all(_ items: [ItemSummary]) -> [ItemJSON] { items.map(ItemJSON.init) }
}

/// A note in JSON: the item object's style (docs/JSON.md) — the title is `name`, and
/// `fadesAt` is `null` rather than missing.
struct NoteJSON: Encodable {
    let note: NoteSummary

    init(_ note: NoteSummary) { self.note = note }

    enum CodingKeys: String, CodingKey { case id, name, size, created, fadesAt }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(note.id.hex, forKey: .id)
        try c.encode(note.title, forKey: .name)
        try c.encode(note.size, forKey: .size)
        try c.encode(note.created, forKey: .created)
        try c.encode(note.fadesAt, forKey: .fadesAt)
    }

    static func all(_ notes: [NoteSummary]) -> [NoteJSON] { notes.map(NoteJSON.init) }
}
