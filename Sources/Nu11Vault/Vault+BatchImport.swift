import Foundation
import Nu11Format
import Nu11Storage

extension Vault {
    /// Imports many files with group commit. Each item is still all or nothing, and every
    /// item is durable when this returns. The fsync policy: within a batch (up to 256 files
    /// or 256 MiB) data files and key records are written without individual fsyncs, a
    /// batch intent marker is written durably first, then one `syncfs` makes the batch's
    /// data and keys durable, the files are renamed into place, a second `syncfs` makes the
    /// renames durable, and one index transaction (WAL, synchronous=FULL) commits every row.
    /// A crash before the index commit leaves the batch absent (the next command undoes it
    /// from the marker); after it, the batch is complete.
    public func importFiles(_ paths: [String], album: String? = nil, fade: Double? = nil,
                            progress: (Int, Int) -> Void = { _, _ in }) throws -> [ItemSummary] {
        if fade != nil && album != nil {
            throw Nu11Error(.invalidArgument, "fade items cannot go into an album", remedy: .fadeOrAlbum)
        }
        let targetAlbum = try album.map { try self.albumID(named: $0) }
        if let targetAlbum { try ProtectedFiles.makeDirectory(location.albumFolder(targetAlbum)) }
        let domain: Domain = fade == nil ? mainDomain : .fade
        var results: [ItemSummary] = []
        var batch: [Staged] = []
        var batchBytes: UInt64 = 0
        defer { for s in batch where !s.committed { s.writer.abort(); s.keyWriter?.abort() } }
        for (n, path) in paths.enumerated() {
            progress(n, paths.count)
            let fd = try ImportSource.openRegularFile(path)
            defer { close(fd) }
            let id = ItemID()
            let itemKey = SecretBytes(randomCount: 32)
            let header = N11Header(kind: .file, domain: domain, itemID: id)
            let writer = try AtomicFileWriter(destination: location.path(id: id, kind: .file, domain: domain, album: targetAlbum))
            var source = FileDescriptorStream(fd: fd, label: path)
            var sink = writer.sink
            let size: UInt64
            do {
                size = try N11Envelope.seal(from: &source, to: &sink, header: header, itemKey: itemKey)
                try writer.prepare(durable: false)
            } catch {
                writer.abort()
                throw error
            }
            let name = (path as NSString).lastPathComponent
            let meta = ItemMetadata(name: name, size: size, type: ItemMetadata.guessType(name), created: Date())
            let record = try ItemKeyRecord.seal(itemKey: itemKey, domain: domain, kind: .file, itemID: id, domainKey: domainKey(domain))
            batch.append(Staged(writer: writer, row: ItemRow(id: id, kind: .file, domain: domain, album: targetAlbum,
                                                             meta: try meta.seal(id: id, album: targetAlbum, key: metadataKey(domain))),
                                record: record, meta: meta, fadeDeadline: fade.map { now + $0 }))
            batchBytes += size
            if batch.count >= 256 || batchBytes >= 256 << 20 {
                results += try commitBatch(&batch)
                batch = []
                batchBytes = 0
            }
        }
        results += try commitBatch(&batch)
        progress(paths.count, paths.count)
        return results
    }

    private func commitBatch(_ batch: inout [Staged]) throws -> [ItemSummary] {
        guard !batch.isEmpty else { return [] }
        let marker = try keyStore.markPendingBatch(batch.map {
            PendingOperation(.importing, id: $0.row.id, kind: $0.row.kind, domain: $0.row.domain, album: $0.row.album)
        })
        do {
            let fades = batch.compactMap { s in s.fadeDeadline.map { DeviceState.FadeEntry(id: s.row.id, domain: .fade, kind: s.row.kind, deadline: $0) } }
            if !fades.isEmpty {
                state.fade += fades
                try saveState()
            }
            for i in batch.indices { batch[i].keyWriter = try keyStore.stageItemKey(batch[i].record) }
            try ProtectedFiles.syncFileSystem(location.vaultRoot)
            try keyStore.syncFileSystem()
            for i in batch.indices {
                try batch[i].keyWriter?.publish(durable: false)
                try batch[i].writer.publish(durable: false)
                batch[i].committed = true
            }
            try ProtectedFiles.syncFileSystem(location.vaultRoot)
            try keyStore.syncFileSystem()
            try index.insertItems(batch.map(\.row))  // the commit point
        } catch {
            // Not committed: undo. The marker stays if the undo fails, for the next command.
            do {
                for s in batch {
                    try keyStore.destroyItemKey(s.row.id)
                    if s.committed { try ProtectedFiles.remove(s.writer.destination) } else { s.writer.abort(); s.keyWriter?.abort() }
                }
                try keyStore.clearPendingBatch(marker)
            } catch {}
            throw error
        }
        afterCommit("removing the journal marker") { try keyStore.clearPendingBatch(marker) }
        let names = try albumNames()
        return batch.map { summary(row: $0.row, meta: $0.meta, albumName: $0.row.album.flatMap { names[$0] }) }
    }
}
