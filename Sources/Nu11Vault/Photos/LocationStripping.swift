// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Media
import Nu11Storage

extension Photos {
    /// Photos larger than this are not stripped (the whole photo is held in memory).
    static let maxStripBytes: UInt64 = 512 << 20

    /// Whether exports and archives remove locations unless told otherwise
    /// (`export.strip_location`).
    public var stripsLocationByDefault: Bool { settings.stripLocation }

    /// Writes an item's plaintext with its location removed (docs/FORMAT.md has nothing to
    /// say here: the photo's own bytes change, losslessly, see `LocationStripper`; a video's
    /// container loses its location boxes or tags, its media untouched, see
    /// `VideoLocationStripper`). Files that are neither images nor videos pass unchanged. When
    /// the location cannot be removed the export fails and nothing is written to `sink`.
    @discardableResult
    func exportStripped(_ row: ItemRow, meta: ItemMetadata, to sink: inout some ByteSink) throws -> UInt64 {
        guard meta.size <= Self.maxStripBytes else {
            throw Nu11Error(.invalidArgument, "item \(row.id.hex) (\(meta.name)) is too large to remove its location in memory",
                            remedy: .exportWithoutStripping, item: row.id.hex)
        }
        var memory = MemorySink(capacity: Int(meta.size))
        let (fd, key) = try vault.items.openItem(row)
        defer { close(fd) }
        do {
            try N11Envelope.open(from: FileDescriptorStream(fd: fd, label: row.id.hex), to: &memory,
                                 expected: N11Header(kind: row.kind, domain: row.domain, itemID: row.id), itemKey: key)
        } catch let error as Nu11Error {
            throw error.code == .io ? error : error.about("item \(row.id.hex)")
        }
        var bytes = memory.bytes
        memory.zero()
        defer { secureZero(&bytes) }
        do {
            _ = try LocationStripper.strip(&bytes)
        } catch {
            throw Nu11Error(.invalidArgument, "item \(row.id.hex) (\(meta.name)): \(error.reason)",
                            remedy: .exportWithoutStripping, item: row.id.hex)
        }
        try sink.write(bytes)
        return UInt64(bytes.count)
    }
}
