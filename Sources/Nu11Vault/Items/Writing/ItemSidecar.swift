// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// An item's sidecar (`Meta/<ID>.n11m`, FORMAT.md §2.2): what its index row holds, sealed
/// under the item's own key, so that the index is a cache the vault can rebuild
/// (`Maintenance.rebuildIndex`). Destroying the item key destroys it with the item.
///
/// plain = album flag (1: 0 none, 1 one) || album ID (16, zeros for none) || the metadata
/// JSON of the index (§5.1), padded with spaces to 512, 1024, 2048, … bytes in all.
enum ItemSidecar {
    struct Facts {
        var meta: ItemMetadata
        var album: ItemID?
    }

    static func plain(meta: ItemMetadata, album: ItemID?) throws -> [UInt8] {
        var raw = try meta.json()
        defer { secureZero(&raw) }
        let head: [UInt8] = [album == nil ? 0 : 1] + (album?.bytes ?? [UInt8](repeating: 0, count: ItemID.byteCount))
        return ItemMetadata.padded(head + raw)
    }

    static func decode(_ plain: [UInt8]) throws -> Facts {
        let damaged = Nu11Error(.corrupted, "the item's metadata file is damaged", remedy: .check(reason: nil))
        guard plain.count > 17, plain[0] <= 1 else { throw damaged }
        let album = plain[0] == 1 ? try ItemID(bytes: plain[1..<17]) : nil
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let meta = try? decoder.decode(ItemMetadata.self, from: Data(plain[17...])) else { throw damaged }
        return Facts(meta: meta, album: album)
    }

    static func seal(row: ItemRow, meta: ItemMetadata, recoverySeal: [UInt8]?, itemKey: SecretBytes) throws -> [UInt8] {
        var plain = try plain(meta: meta, album: row.album)
        defer { secureZero(&plain) }
        return try SidecarEnvelope.seal(plain, kind: row.kind, domain: row.domain, id: row.id,
                                        recoverySeal: recoverySeal, itemKey: itemKey)
    }

    /// Opens a sidecar's bytes for `id` with its item key.
    static func open(_ bytes: [UInt8], id: ItemID, itemKey: SecretBytes) throws -> (SidecarEnvelope.Head, Facts) {
        var (head, plain) = try SidecarEnvelope.open(bytes, expected: id, itemKey: itemKey)
        defer { secureZero(&plain) }
        return (head, try decode(plain))
    }
}

extension AtomicFileWriter {
    /// `bytes` in a temp file beside `destination`, written and ready to publish with its group
    /// (one sync for the group); aborted (the temp file removed) when anything fails.
    static func staged(_ bytes: [UInt8], at destination: String) throws -> AtomicFileWriter {
        let writer = try AtomicFileWriter(destination: destination)
        do {
            var sink = writer.sink
            try sink.write(bytes)
            try writer.prepare(.batched)
        } catch {
            writer.abort()
            throw error
        }
        return writer
    }
}

extension VaultFeature {
    /// A new item's sidecar in a temp file beside the others (published with the item).
    func stageSidecar(row: ItemRow, meta: ItemMetadata, itemKey: SecretBytes) throws -> AtomicFileWriter {
        try ProtectedFiles.makeDirectory(location.metaFolder)
        let sealed = try ItemSidecar.seal(row: row, meta: meta, recoverySeal: row.recovery, itemKey: itemKey)
        return try AtomicFileWriter.staged(sealed, at: location.sidecarPath(row.id))
    }

    /// Writes an existing item's sidecar again after its row changed (an album move, new
    /// thumbnails, a repair), keeping its recovery seal. `itemKey` nil: from its key record.
    func rewriteSidecar(row: ItemRow, meta: ItemMetadata, itemKey given: SecretBytes? = nil) throws {
        let itemKey = try given ?? keyStore.itemKeyRecord(row.id, domain: row.domain).open(domainKey: domainKey(row.domain))
        let path = location.sidecarPath(row.id)
        let seal = (try? ProtectedFiles.read(path, limit: SidecarEnvelope.maxBytes)).flatMap { try? SidecarEnvelope.head($0).recoverySeal }
        try ProtectedFiles.makeDirectory(location.metaFolder)
        try ProtectedFiles.writeAtomically(ItemSidecar.seal(row: row, meta: meta, recoverySeal: seal, itemKey: itemKey), to: path)
    }
}

extension StagedItem {
    /// Removes the staged temp files (content, thumbnails, sidecar) that were not published.
    func abortFiles() {
        writer.abort()
        thumbnailWriter?.abort()
        sidecarWriter?.abort()
        sharedKeyWriter?.abort()
    }
}

/// The recovery seal in a sidecar (bytes 7 and 24..<116, FORMAT.md §2.2), changed in place —
/// a new phrase's seal, or zeros when the recovery data is destroyed — so the old seal's bytes
/// are overwritten where they were (as `secure_delete` does for the index's copy). A sidecar
/// that is missing or not a sidecar is left alone.
enum SidecarSeals {
    static func set(_ seal: [UInt8]?, for id: ItemID, location: VaultLocation) throws {
        let path = location.sidecarPath(id)
        guard ProtectedFiles.kind(path) == .file,
              let head = try? SidecarEnvelope.head(ProtectedFiles.read(path, limit: SidecarEnvelope.maxBytes)),
              head.itemID == id, head.recoverySeal != seal else { return }
        try ProtectedFiles.patch(path, at: 7, bytes: [seal == nil ? 0 : 1])
        try ProtectedFiles.patch(path, at: 24, bytes: seal ?? [UInt8](repeating: 0, count: SidecarEnvelope.recoverySealBytes))
    }
}
