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

    static func name(_ kind: ItemKind) -> String { kind == .note ? "note" : "file" }

    func encode(to encoder: any Encoder) throws {
        try JSONObject([
            ("id", item.id.hex), ("name", item.name), ("size", item.size), ("type", item.type), ("album", item.album),
            ("albumID", item.albumID?.hex), ("domain", "\(item.domain)"), ("kind", Self.name(item.kind)),
            ("created", item.created), ("fadesAt", item.fadesAt), ("modified", item.modified), ("width", item.width),
            ("height", item.height), ("taken", item.taken), ("camera", item.camera), ("gps", item.gps),
            ("thumbnail", item.thumbnail), ("duration", item.duration), ("motion", item.motion?.hex),
            ("rotation", item.rotation * 90),
        ]).encode(to: encoder)
    }

    static func all(_ items: [ItemSummary]) -> [ItemJSON] { items.map(ItemJSON.init) }
}

/// A note in JSON: the item object's style (docs/JSON.md) — the title is `name`, and
/// `fadesAt` is `null` rather than missing.
struct NoteJSON: Encodable {
    let note: NoteSummary

    init(_ note: NoteSummary) { self.note = note }

    func encode(to encoder: any Encoder) throws {
        try JSONObject([("id", note.id.hex), ("name", note.title), ("size", note.size), ("created", note.created),
                        ("fadesAt", note.fadesAt)]).encode(to: encoder)
    }

    static func all(_ notes: [NoteSummary]) -> [NoteJSON] { notes.map(NoteJSON.init) }
}
