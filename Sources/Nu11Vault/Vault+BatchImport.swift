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
    ///
    /// `vanished`: when given, a file that no longer exists when its turn comes (deleted or
    /// moved after the command started) is reported through it and skipped, and the rest
    /// of the batch goes on; without it the import fails there, as before.
    public func importFiles(_ paths: [String], album: String? = nil, fade: Double? = nil,
                            vanished: ((String) -> Void)? = nil,
                            progress: (Int, Int) -> Void = { _, _ in }) throws -> [ItemSummary] {
        if fade != nil && album != nil {
            throw Nu11Error(.invalidArgument, "fade items cannot go into an album", remedy: .fadeOrAlbum)
        }
        let targetAlbum = try album.map { try self.albumID(named: $0) }
        if let targetAlbum { try ProtectedFiles.makeDirectory(location.albumFolder(targetAlbum)) }
        let domain: Domain = fade == nil ? mainDomain : .fade
        var results: [ItemSummary] = []
        var batch: [StagedItem] = []
        var batchBytes: UInt64 = 0
        defer { for s in batch where !s.published { s.writer.abort(); s.thumbnailWriter?.abort(); s.keyWriter?.abort() } }
        for (n, path) in paths.enumerated() {
            progress(n, paths.count)
            let fd: Int32
            do {
                fd = try ImportSource.openRegularFile(path)
            } catch let error as Nu11Error where error.code == .notFound && vanished != nil {
                vanished?(path)
                continue
            }
            defer { close(fd) }
            let staged = try stage(FileDescriptorStream(fd: fd, label: path), name: (path as NSString).lastPathComponent,
                                   kind: .file, domain: domain, album: targetAlbum, fadeDeadline: fade.map { now + $0 },
                                   modified: ImportSource.modificationTime(fd))
            batch.append(staged)
            batchBytes += staged.meta.size
            if batch.count >= 256 || batchBytes >= 256 << 20 {
                results += try commitBatch(&batch)
                batch = []
                batchBytes = 0
            }
        }
        results += try commitBatch(&batch)
        progress(paths.count, paths.count)
        audit("import", ids: results.map(\.id))
        return results
    }

    private func commitBatch(_ batch: inout [StagedItem]) throws -> [ItemSummary] {
        try commit(&batch)
        let names = try albumNames()
        return batch.map { summary(row: $0.row, meta: $0.meta, albumName: $0.row.album.flatMap { names[$0] }) }
    }
}
