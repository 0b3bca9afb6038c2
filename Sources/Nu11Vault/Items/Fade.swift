// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

extension Items {
    /// Read-time enforcement: an expired fade item never decrypts, even if no sweep ran or
    /// its file was restored from a copy. It is shredded on the spot.
    func checkFade(_ row: ItemRow) throws {
        guard row.domain == .fade else { return }
        let entry = state.fade.first { $0.id == row.id }
        if let entry, entry.deadline > now { return }
        if !index.isReadOnly { try delete(rows: [row], secure: settings.deletionMode == .secure) }
        throw Nu11Error(.notFound, "item \(row.id) has faded (its time ran out) and was destroyed", item: row.id.hex)
    }

    /// The time left before an item fades, or nil for a permanent item.
    public func fadeDeadline(_ ref: ItemRef) throws -> Date? {
        let row = try row(ref)
        guard row.domain == .fade else { return nil }
        try checkFade(row)  // never nil ("permanent") for a Fade item its schedule does not name
        return state.fade.first { $0.id == row.id }.map { Date(timeIntervalSince1970: $0.deadline) }
    }

    /// The fade deadlines the schedule holds, by item ID. An item keeps its ID when it moves
    /// into or out of Fade (issue 58), so a listing held from before (the app's summaries)
    /// compares its deadlines with these instead of relying on a changed ID.
    public func fadeDeadlines() -> [ItemID: Date] {
        Dictionary(state.fade.map { ($0.id, Date(timeIntervalSince1970: $0.deadline)) }, uniquingKeysWith: { a, b in min(a, b) })
    }

    /// Gives an item a fade deadline `seconds` from now; returns its ID, which does not change
    /// (issue 58). A permanent item is re-encrypted into the Fade domain under a new key (the
    /// domain is part of the envelope's identity) and swapped for the permanent copy at one
    /// commit point, which is then shredded (`moveDomain`): a crash leaves one or the other,
    /// never neither and never both. A fade item just gets the new deadline.
    @discardableResult
    public func setFade(_ ref: ItemRef, seconds: Double) throws -> ItemID {
        let row = try row(ref)
        if row.domain == .fade {
            try checkFade(row)
            if let i = state.fade.firstIndex(where: { $0.id == row.id }) { state.fade[i].deadline = now + seconds }
            try saveState()
            audit("fade set", count: 1, items: [row.id])
            return row.id
        }
        guard row.domain == mainDomain else {
            throw Nu11Error(.invalidArgument, "item \(ref) cannot fade", item: ref.digits)
        }
        try moveDomain(row, into: .fade, fadeDeadline: now + seconds)
        audit("fade set", count: 1, items: [row.id])
        return row.id
    }

    /// Cancels a fade: the item becomes permanent again (in Photos), re-encrypted under a new
    /// key with the same ID, like `setFade` the other way. Returns its ID.
    @discardableResult
    public func cancelFade(_ ref: ItemRef) throws -> ItemID {
        let row = try row(ref)
        guard row.domain == .fade else {
            throw Nu11Error(.invalidArgument, "item \(ref) does not fade", remedy: .advice(.nothingToCancel), item: ref.digits)
        }
        try checkFade(row)
        try moveDomain(row, into: mainDomain, fadeDeadline: nil)
        audit("fade cancel", count: 1, items: [row.id])
        return row.id
    }

    /// An item's plaintext as a stream, its file checked against its row (kind, domain, ID) and
    /// opened with its key; the caller closes `fd` once it has read it.
    func plaintextSource(_ row: ItemRow) throws -> (source: DecryptingSource<N11Envelope.AEAD, FileDescriptorStream>, fd: Int32) {
        let (fd, key) = try openItem(row)
        do {
            let expected = N11Header(kind: row.kind, domain: row.domain, itemID: row.id)
            let decryptor = try ChunkedDecryptor<N11Envelope.AEAD, FileDescriptorStream>(
                source: try N11Envelope.body(of: fd, label: row.id.hex, expected: expected), key: key, context: expected.context)
            return (DecryptingSource(decryptor: decryptor), fd)
        } catch {
            close(fd)
            throw error
        }
    }

    /// Re-encrypts an item into its own domain as a new item (`rekey --content`: new ID and
    /// key); the old one is removed at the same commit point. Thumbnails are made again under
    /// the new key. (A move to another domain keeps the ID: `moveDomain`.)
    func reencrypt(_ row: ItemRow, into domain: Domain, fadeDeadline: Double?, album: ItemID? = nil) throws -> ItemID {
        let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
        let (source, fd) = try plaintextSource(row)
        defer { close(fd) }
        var staged = [try stage(source, name: meta.name, kind: row.kind, domain: domain, album: album,
                                fadeDeadline: fadeDeadline, created: meta.created, type: meta.type, modified: meta.modified,
                                turns: meta.turns)]
        try commit(&staged, replacing: [row])
        return staged[0].row.id
    }
}

/// Adapts a decryptor into a byte source (authenticated plaintext only).
struct DecryptingSource<AEAD: ChunkAEAD, S: ByteSource>: ByteSource {
    let decryptor: ChunkedDecryptor<AEAD, S>
    var pending: [UInt8] = []
    var offset = 0

    init(decryptor: ChunkedDecryptor<AEAD, S>) { self.decryptor = decryptor }

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while offset == pending.count {
            secureZero(&pending)
            pending.removeAll(keepingCapacity: true)
            offset = 0
            guard try decryptor.nextChunk(appendingTo: &pending) else { return 0 }
        }
        let n = min(buffer.count, pending.count - offset)
        pending.withUnsafeBytes { src in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[offset..<(offset + n)]))
        }
        offset += n
        return n
    }
}
