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
    /// A shared vault's key file for the other devices (FORMAT.md § 9.6), published with it.
    var sharedKeyWriter: AtomicFileWriter?
    /// Whether the commit wrote the key record into its pack.
    var keyWritten = false
    /// Whether the commit renamed the file (and key record) into place.
    var published = false
}

/// An item encrypted into its temp file, its key and what it is still to be sealed with; an
/// image's or a video's in-memory copy waits for its analysis (`PendingItem`).
struct EncryptedItem {
    let writer: AtomicFileWriter
    let id: ItemID
    let kind: ItemKind
    let domain: Domain
    let album: ItemID?
    let fadeDeadline: Double?
    let itemKey: SecretBytes
    let size: UInt64
    let name: String
    let created: Date
    let type: String?
    let modified: Date?
    let capture: PhotoCapture?
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
            do {
                staged.sharedKeyWriter = try vault.devices.stageKeyFile(row: row, itemKey: itemKey)
            } catch {
                staged.sidecarWriter?.abort()
                throw error
            }
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
               modified: Date? = nil, motion: ItemID? = nil, turns: Int = 0) throws -> StagedItem {
        let item = try encrypt(source, name: name, kind: kind, domain: domain, album: album, fadeDeadline: fadeDeadline,
                               id: id, created: created, type: type, modified: modified)
        return try seal(item, analysis: item.capture?.analyze(turns: turns) ?? (nil, nil), motion: motion, turns: turns)
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

    /// The first step of `stage`: the content encrypted into its temp file (not yet durable),
    /// an image's or a video's copy kept for its analysis.
    func encrypt(_ source: some ByteSource, name: String, kind: ItemKind, domain: Domain, album: ItemID?,
                 fadeDeadline: Double?, id: ItemID = ItemID(), created: Date = Date(), type: String? = nil,
                 modified: Date? = nil) throws -> EncryptedItem {
        let itemKey = SecretBytes(randomCount: 32)
        let capture = kind == .file ? PhotoCapture(name: name) : nil
        let writer = try AtomicFileWriter(destination: location.path(id: id, kind: kind, domain: domain, album: album))
        do {
            // The header, salt and commitment go out with the first chunks: a small file is
            // one write.
            var sink = CoalescingSink(writer.sink)
            let header = N11Header(kind: kind, domain: domain, itemID: id)
            let size: UInt64
            if let capture {
                var input = CapturingSource(base: source, capture: capture)
                size = try N11Envelope.seal(from: &input, to: &sink, header: header, itemKey: itemKey)
            } else {
                var input = source
                size = try N11Envelope.seal(from: &input, to: &sink, header: header, itemKey: itemKey)
            }
            try sink.flush()
            try writer.prepare(.batched, size: N11Envelope.sealedSize(plaintext: size))
            return EncryptedItem(writer: writer, id: id, kind: kind, domain: domain, album: album, fadeDeadline: fadeDeadline,
                                 itemKey: itemKey, size: size, name: name, created: created, type: type, modified: modified,
                                 capture: capture)
        } catch {
            writer.abort()
            throw error
        }
    }

    /// The second step: the metadata (with what the analysis found, and a Live Photo's
    /// motion, and the user's rotation that its thumbnails were made with), key record and
    /// thumbnails sealed. A failure aborts the item's temp files.
    func seal(_ item: EncryptedItem, analysis: (facts: PhotoFacts?, warning: String?), motion: ItemID?,
              turns: Int = 0) throws -> StagedItem {
        if let warning = analysis.warning { notice(warning) }
        var meta = ItemMetadata(name: item.name, size: item.size,
                                type: item.type ?? (item.kind == .note ? "text/plain" : ItemMetadata.guessType(item.name)),
                                created: item.created, modified: item.modified)
        if let photo = analysis.facts {
            meta.apply(photo)
            if meta.type.hasPrefix("image/") {
                meta.motion = motion
                if turns % 4 != 0 { meta.rotate = turns % 4 }
            }
        } else if let capture = item.capture, item.type == nil, capture.claimsWrongType(meta.type) {
            meta.type = "application/octet-stream"
        }
        var staged = try sealRecords(writer: item.writer, id: item.id, kind: item.kind, domain: item.domain, album: item.album,
                                     fadeDeadline: item.fadeDeadline, itemKey: item.itemKey, meta: meta)
        try attachThumbnails(&staged, photo: analysis.facts, header: N11Header(kind: item.kind, domain: item.domain, itemID: item.id),
                             itemKey: item.itemKey)
        return staged
    }
}
