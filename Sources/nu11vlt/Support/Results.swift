// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Vault

/// What the action commands print with --json (docs/JSON.md): one object each, every key
/// present (`null` when there is no value), IDs in full.
enum Results {
    struct Deleted: Encodable {
        var deleted: [String]
        var mode: String
    }

    /// `share --json`: what was written, for how many recipients.
    struct Shared: Encodable {
        var items: Int
        var bytes: UInt64
        var output: String
        var recipients: Int
        var postQuantum: Bool
        var strippedLocation: Bool
    }

    struct Exported: Encodable {
        var id: String
        var name: String
        var bytes: UInt64
        var output: String
        var strippedLocation: Bool
        /// A Live Photo's motion, written beside it (null otherwise).
        var motion: String?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(name, forKey: .name)
            try c.encode(bytes, forKey: .bytes)
            try c.encode(output, forKey: .output)
            try c.encode(strippedLocation, forKey: .strippedLocation)
            try c.encode(motion, forKey: .motion)  // null, never missing
        }

        enum CodingKeys: String, CodingKey { case id, name, bytes, output, strippedLocation, motion }
    }

    /// `export -o FOLDER --json`: what was written where, and what could not be read.
    struct ExportedFolder: Encodable {
        struct Written: Encodable {
            var id: String
            var name: String
            var file: String
            var bytes: UInt64
        }
        struct Failed: Encodable {
            var id: String
            var name: String
            var error: String
        }
        var folder: String
        var exported: [Written]
        var failed: [Failed]
        var bytes: UInt64
        var strippedLocation: Bool

        init(report: ExportReport, folder: String, strippedLocation: Bool) {
            self.folder = folder
            exported = report.written.map { Written(id: $0.item.id.hex, name: $0.item.name, file: $0.fileName, bytes: $0.item.size) }
            failed = report.failed.map { Failed(id: $0.entry.item.id.hex, name: $0.entry.item.name, error: Remedies.line($0.error)) }
            bytes = report.bytes
            self.strippedLocation = strippedLocation
        }
    }

    struct NoteBody: Encodable {
        var id: String
        var name: String
        var size: UInt64
        var created: Date
        var fadesAt: Date?
        var body: String

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(name, forKey: .name)
            try c.encode(size, forKey: .size)
            try c.encode(created, forKey: .created)
            try c.encode(fadesAt, forKey: .fadesAt)
            try c.encode(body, forKey: .body)
        }
        enum CodingKeys: String, CodingKey { case id, name, size, created, fadesAt, body }
    }

    struct Swept: Encodable {
        var shredded: [String]
        var warnings: [String]
    }

    struct Setting: Encodable {
        var key: String
        var value: String
    }

    struct Faded: Encodable {
        var id: String
        var previousID: String
        var fadesAt: Date?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(previousID, forKey: .previousID)
            try c.encode(fadesAt, forKey: .fadesAt)
        }
        enum CodingKeys: String, CodingKey { case id, previousID, fadesAt }
    }

    struct AlbumChange: Encodable {
        var album: String?
        var renamedTo: String?
        var items: [String]
        var itemsAction: String?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(album, forKey: .album)
            try c.encode(renamedTo, forKey: .renamedTo)
            try c.encode(items, forKey: .items)
            try c.encode(itemsAction, forKey: .itemsAction)
        }
        enum CodingKeys: String, CodingKey { case album, renamedTo, items, itemsAction }
    }

    struct DevicePaired: Encodable {
        var device: String
        var expires: Int64
        var keyFilesWritten: Int
    }

    struct RecoverySetUp: Encodable {
        var sealed: Int
    }

    struct PINChange: Encodable {
        var changed: String
        var keysRotated: Bool
    }

    struct Wiped: Encodable {
        var wiped: String
        var secure: Bool
    }

    /// An item's full ID, as the vault resolves the user's reference.
    static func fullID(_ vault: Vault, _ ref: ItemRef) throws -> String { try vault.items.item(ref).id.hex }
}

/// A typed confirmation for what destroys data: asked at a terminal, refused elsewhere.
enum Confirm {
    /// `offTerminal`: the error (with the flag that skips the question) when there is no
    /// terminal; `question` is asked and `word` must be typed back.
    static func typed(_ word: String, question: String, offTerminal: Nu11Error, notConfirmed remedy: String) throws {
        guard isatty(0) == 1 else { throw offTerminal }
        Output.stderr("\(question) Type \(word) to go on: ")
        guard readLine()?.trimmingCharacters(in: .whitespaces) == word else {
            throw Nu11Error(.invalidArgument, "not confirmed; nothing was changed", remedy: .frontEnd(remedy))
        }
    }
}
