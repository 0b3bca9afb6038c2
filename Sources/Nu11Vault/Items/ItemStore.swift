// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Media
import Nu11Storage

/// An item encrypted into a temp file next to its place, with its key record and sealed
/// metadata ready; invisible until `commit`.
struct StagedItem {
    let writer: AtomicFileWriter
    let row: ItemRow
    let record: ItemKeyRecord
    let meta: ItemMetadata
    let fadeDeadline: Double?
    /// The sealed thumbnails' temp file (photos only), published with the item.
    var thumbnailWriter: AtomicFileWriter?
    /// The item's sidecar (FORMAT.md §2.2), published with it.
    var sidecarWriter: AtomicFileWriter?
    /// Whether the commit wrote the key record into its pack.
    var keyWritten = false
    /// Whether the commit renamed the file (and key record) into place.
    var published = false
}

/// The vault's one write path, used by import (files, folders, stdin), notes, note edits,
/// fade set and archive import: `stage` encrypts, `commit` makes a group of staged items
/// visible at one commit point. Before it a failure undoes everything; after it nothing
/// rolls back (late failures are notices, and the journal lets the next command finish).
extension Items {
    /// Encrypts what `write` produces into a temp file for a new item and seals its key
    /// record and metadata. `write` returns the plaintext size.
    func stage(id: ItemID = ItemID(), kind: ItemKind, domain: Domain, album: ItemID?, fadeDeadline: Double?,
               itemKey: SecretBytes = SecretBytes(randomCount: 32), metadata: (UInt64) -> ItemMetadata,
               write: (inout FileDescriptorStream) throws -> UInt64) throws -> StagedItem {
        let writer = try AtomicFileWriter(destination: location.path(id: id, kind: kind, domain: domain, album: album))
        let size: UInt64
        do {
            var sink = writer.sink
            size = try write(&sink)
            try writer.prepare(.batched)
        } catch {
            writer.abort()
            throw error
        }
        return try sealRecords(writer: writer, id: id, kind: kind, domain: domain, album: album, fadeDeadline: fadeDeadline,
                               itemKey: itemKey, meta: metadata(size))
    }

    /// Seals an encrypted item's key record and metadata (its index row); a failure aborts
    /// its temp file.
    func sealRecords(writer: AtomicFileWriter, id: ItemID, kind: ItemKind, domain: Domain, album: ItemID?, fadeDeadline: Double?,
                     itemKey: SecretBytes, meta: ItemMetadata) throws -> StagedItem {
        do {
            let record = try ItemKeyRecord.seal(itemKey: itemKey, domain: domain, kind: kind, itemID: id, domainKey: domainKey(domain))
            var row = ItemRow(id: id, kind: kind, domain: domain, album: album,
                              meta: try meta.seal(id: id, album: album, key: metadataKey(domain)))
            row.recovery = try vault.profiles.recoverySeal(itemKey: itemKey, id: id, kind: kind, domain: domain)
            var staged = StagedItem(writer: writer, row: row, record: record, meta: meta, fadeDeadline: fadeDeadline)
            staged.sidecarWriter = try stageSidecar(row: row, meta: meta, itemKey: itemKey)
            return staged
        } catch {
            writer.abort()
            throw error
        }
    }

    /// Encrypts `source` as a new `.n11` envelope (see `stage`). An image or a video (told by
    /// its first bytes) is copied in memory while it is encrypted; after the last chunk its
    /// thumbnails are made from that copy and sealed beside it, and its facts join the
    /// metadata. A file that cannot be decoded imports as a plain file, with a notice. (The
    /// two steps, `encrypt` and `seal`, are apart in a folder import, which decodes on every
    /// core: `importFiles`.)
    func stage(_ source: some ByteSource, name: String, kind: ItemKind, domain: Domain, album: ItemID?,
               fadeDeadline: Double?, id: ItemID = ItemID(), created: Date = Date(), type: String? = nil,
               modified: Date? = nil, motion: ItemID? = nil) throws -> StagedItem {
        let item = try encrypt(source, name: name, kind: kind, domain: domain, album: album, fadeDeadline: fadeDeadline,
                               id: id, created: created, type: type, modified: modified)
        return try seal(item, analysis: item.capture?.analyze() ?? (nil, nil), motion: motion)
    }

    /// Seals a staged photo's thumbnails beside it (nothing for other files).
    func attachThumbnails(_ staged: inout StagedItem, photo: PhotoFacts?, header: N11Header, itemKey: SecretBytes) throws {
        guard let pair = photo?.thumbnails else { return }
        do {
            staged.thumbnailWriter = try vault.photos.stageThumbnails(pair, header: header, itemKey: itemKey)
        } catch {
            staged.abortFiles()
            throw error
        }
    }

    /// Makes `staged` visible, in the one order the crash and power-loss tests prove:
    /// journal marker → fade deadlines → key records written into free slots of their packs →
    /// one sync → files renamed into place → one sync → the index transaction (new albums, new rows,
    /// removal of the `replacing` rows): the commit point. Then the replaced items are
    /// shredded and the marker removed. A failure before the commit point undoes the lot;
    /// a crash is undone (before) or finished (after) from the marker by the next command.
    /// (A folder import runs the same three steps with the middle one on another thread,
    /// while it stages the next group: `GroupCommit`.)
    func commit(_ staged: inout [StagedItem], replacing old: [ItemRow] = [], albums: [AlbumRow] = []) throws {
        guard !staged.isEmpty || !albums.isEmpty else { return }
        var group = try beginCommit(staged, replacing: old, albums: albums)
        do {
            try group.publish()
        } catch {
            staged = group.staged
            undoUnlessUndecided(group, error)
            throw error
        }
        staged = group.staged
        finishCommit(group)
    }

    /// The first step, on the importing thread: the journal marker, the fade deadlines and the
    /// key records written (not yet durable). A failure undoes it. The group's rows carry their
    /// recovery seals already, so the next group gets an ephemeral key of its own
    /// (FORMAT.md §5.2) from here on.
    func beginCommit(_ staged: [StagedItem], replacing old: [ItemRow] = [], albums: [AlbumRow] = []) throws -> CommitGroup {
        let marker = try keyStore.markPendingBatch(
            staged.map { PendingOperation(.importing, id: $0.row.id, kind: $0.row.kind, domain: $0.row.domain, album: $0.row.album) }
            + old.map { PendingOperation(.replacing, id: $0.id, kind: $0.kind, domain: $0.domain, album: $0.album,
                                        secure: settings.deletionMode == .secure) })
        var group = CommitGroup(staged: staged, old: old, albums: albums, marker: marker,
                                fades: staged.compactMap { s in
                                    s.fadeDeadline.map { DeviceState.FadeEntry(id: s.row.id, domain: .fade, kind: s.row.kind, deadline: $0) }
                                },
                                roots: [location.vaultRoot, keyStore.root], index: index)
        do {
            if !group.fades.isEmpty {
                // A crash from here leaves a deadline for nothing (dropped by the next sweep),
                // never a fade item without a deadline.
                state.fade += group.fades
                try saveState()
            }
            for i in group.staged.indices { group.staged[i].keyWritten = true }
            try keyStore.writeItemKeys(group.staged.map(\.record), durable: false)
        } catch {
            undo(group)
            throw error
        }
        vault.recoverySealer = nil
        return group
    }

    /// The last step, after the commit point: the replaced items shredded, the marker removed
    /// (failures here are notices; the journal lets the next command finish).
    func finishCommit(_ group: CommitGroup) {
        for row in group.old { forgetCached(row.id) }
        afterCommit("shredding what the change replaced") {
            for row in group.old { try shredder().shred(row) }
            let replaced = Set(group.old.map(\.id))
            if state.fade.contains(where: { replaced.contains($0.id) }) {
                state.fade.removeAll { replaced.contains($0.id) }
                try saveState()
            }
            try keyStore.clearPendingBatch(group.marker)
        }
    }

    /// Undoes a group whose commit failed, unless the index could not say whether it committed
    /// (`Nu11Error.undecided`): then everything stays as it is, marker included, and the next
    /// command keeps the items whose rows it finds and shreds the others (`Gate.recoverPending`).
    func undoUnlessUndecided(_ group: CommitGroup, _ error: any Error) {
        guard (error as? Nu11Error)?.undecided != true else { return }
        undo(group)
    }

    /// Undoes an uncommitted group. If the undo fails too, the marker stays and the next
    /// command finishes it.
    func undo(_ group: CommitGroup) {
        do {
            for s in group.staged {
                if s.published { try shredder().shred(s.row) }
                s.abortFiles()
            }
            // Written (or perhaps written: a failure partway) and not shredded above.
            try keyStore.destroyItemKeys(group.staged.filter { $0.keyWritten && !$0.published }.map(\.row.id))
            if !group.fades.isEmpty {
                let ids = Set(group.fades.map(\.id))
                state.fade.removeAll { ids.contains($0.id) }
                try saveState()
            }
            try keyStore.clearPendingBatch(group.marker)
        } catch {}
    }
}
