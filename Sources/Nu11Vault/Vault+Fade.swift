import Foundation
import Nu11Format
import Nu11Storage

extension Vault {
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
        return state.fade.first { $0.id == row.id }.map { Date(timeIntervalSince1970: $0.deadline) }
    }

    /// Gives an item a fade deadline `seconds` from now. A permanent item is re-encrypted
    /// into the Fade domain under a new key (the domain is part of the envelope's identity),
    /// and its old key is destroyed; a fade item just gets the new deadline.
    public func setFade(_ ref: ItemRef, seconds: Double) throws {
        let row = try row(ref)
        if row.domain == .fade {
            try checkFade(row)
            if let i = state.fade.firstIndex(where: { $0.id == row.id }) { state.fade[i].deadline = now + seconds }
            return try saveState()
        }
        guard row.domain == mainDomain else {
            throw Nu11Error(.invalidArgument, "item \(ref) cannot fade", item: ref.digits)
        }
        let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
        // Decrypt into memory-bounded streaming: old envelope → new envelope via a pipe of
        // chunks, written to a temp file next to the destination.
        let (fd, oldKey) = try openItem(row)
        defer { close(fd) }
        let oldPath = try locate(row)
        let newKey = SecretBytes(randomCount: 32)
        let destination = location.path(id: row.id, kind: row.kind, domain: .fade, album: nil)
        let writer = try AtomicFileWriter(destination: destination)
        do {
            let decryptor = try ChunkedDecryptor<N11Envelope.AEAD, FileDescriptorStream>(
                source: try positioned(fd: fd, label: row.id.hex, expected: N11Header(kind: row.kind, domain: row.domain, itemID: row.id)),
                key: oldKey, context: N11Header(kind: row.kind, domain: row.domain, itemID: row.id).context)
            var source = DecryptingSource(decryptor: decryptor)
            var sink = writer.sink
            _ = try N11Envelope.seal(from: &source, to: &sink, header: N11Header(kind: row.kind, domain: .fade, itemID: row.id),
                                     itemKey: newKey)
            state.fade.removeAll { $0.id == row.id }
            state.fade.append(DeviceState.FadeEntry(id: row.id, domain: .fade, kind: row.kind, deadline: now + seconds))
            try saveState()
            try keyStore.destroyItemKey(row.id)
            try keyStore.storeItemKey(ItemKeyRecord.seal(itemKey: newKey, domain: .fade, kind: row.kind, itemID: row.id,
                                                         domainKey: domainKey(.fade)))
            try writer.commit()
        } catch {
            writer.abort()
            throw error
        }
        if oldPath != destination { try ProtectedFiles.remove(oldPath) }
        try index.updateItem(ItemRow(id: row.id, kind: row.kind, domain: .fade, album: nil,
                                     meta: meta.seal(id: row.id, album: nil, key: metadataKey(.fade))))
    }

    /// A descriptor positioned after the `.n11` header, which is checked.
    func positioned(fd: Int32, label: String, expected: N11Header) throws -> FileDescriptorStream {
        var stream = FileDescriptorStream(fd: fd, label: label)
        try N11Envelope.readHeader(from: &stream, expected: expected)
        return stream
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
