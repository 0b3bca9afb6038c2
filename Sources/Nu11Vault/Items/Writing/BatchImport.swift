// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Media
import Nu11Storage

/// A folder import stopped part-way, with what it committed before: by a full disk (`cause`
/// is `diskFull`: every file that fit was committed, each whole, the one named did not fit,
/// and the rest were not tried) or by any other error after earlier commit groups landed
/// (those groups' items are in the vault; the group that failed and the rest are not).
public struct ImportStopped: Error {
    public let imported: [ItemSummary]
    /// The file that did not fit (as the user named it); for another error, the file or
    /// path it names, when it names one.
    public let at: String
    public let cause: Nu11Error
}

extension Items {
    /// Imports many files with group commit. Each item is still all or nothing, and every
    /// item is durable when this returns. The fsync policy: within a batch (up to
    /// `commitEvery` files or 256 MiB) data files and key records are written without
    /// individual fsyncs, a batch intent marker is written durably first, then one `syncfs` makes the batch's
    /// data and keys durable, the files are renamed into place, a second `syncfs` makes the
    /// renames durable, and one index transaction (WAL, synchronous=FULL) commits every row.
    /// A crash before the index commit leaves the batch absent (the next command undoes it
    /// from the marker); after it, the batch is complete. The two syncs, the renames and the
    /// index transaction of a full batch run on another thread while the next batch is
    /// encrypted (`GroupInFlight`); the next batch's marker waits until that one has landed.
    ///
    /// `vanished`: when given, a file that no longer exists when its turn comes (deleted or
    /// moved after the command started) is reported through it and skipped, and the rest
    /// of the batch goes on; without it the import fails there, as before.
    ///
    /// `progress` is told before each file starts; an error it throws stops the import there
    /// as any other error does (what was committed stays and is reported, the rest is undone).
    public func importFiles(_ paths: [String], album: String? = nil, fade: Double? = nil,
                            commitEvery: Int = ImportPlan.defaultCommitEvery, vanished: ((String) -> Void)? = nil,
                            progress: (Int, Int) throws -> Void = { _, _ in }) throws -> [ItemSummary] {
        let (domain, targetAlbum) = try importTarget(album: album, fade: fade)
        var results: [ItemSummary] = []
        results.reserveCapacity(paths.count)  // one allocation: 10,000 summaries grown by doubling faulted in ~4 MiB
        var batch: [StagedItem] = []
        var batchBytes: UInt64 = 0
        var batchFirst = ""  // the batch's first file, named when its commit does not fit
        // The batch before, committing on another thread while this one is staged.
        var committing: (group: GroupInFlight, first: String)?
        // Every core: the files in the window are encrypted at once on other threads
        // (`PendingItem`), and the photos among them decoded by the helpers
        // (`ImageHelper.maxHelpers`); each is sealed on this thread and joins its batch in the
        // order given, once its encryption and analysis are back.
        var flight: [(index: Int, path: String, pending: PendingItem, bytes: Int, weight: Int)] = []
        var flightBytes = 0
        var flightWeight = 0
        let pairs = LivePhotos.pairs(paths)
        let ordered = LivePhotos.ordered(paths, pairs: pairs)
        var next = 0  // the next file of `ordered` to start
        // The items of each run of `commitEvery` files share their ID's first byte, chosen at
        // random: a commit group writes its key records into one or two packs rather than
        // into one pack per item (FORMAT.md §4.3; committed together is visible anyway:
        // THREAT-MODEL).
        var packByte = SecureRandom.bytes(1)[0], packUses = 0
        // After a full disk, one file at a time: files encrypted at once may have taken the
        // space of one before them that would have fit alone.
        var oneAtATime = false
        defer {
            // A failure while a batch is in flight: it lands (or is undone) before anything else.
            if let c = committing { _ = try? landGroup(c.group) }
            for f in flight { f.pending.abort() }
            for s in batch where !s.published { s.abortFiles() }
        }
        // Live Photos: each pair's motion is staged just before its still, which names it.
        let stillOf = Dictionary(pairs.map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        var motions: [String: ItemID] = [:]  // a still's path → its staged motion

        /// Seals the oldest file in flight into the batch; commits the batch when it is full.
        func land() throws {
            let f = flight.removeFirst()
            flightBytes -= f.bytes
            flightWeight -= f.weight
            let staged: StagedItem
            do {
                // A full disk while it was encrypted: what is before it is committed, it is not.
                let (item, analysis) = try f.pending.wait().get()
                staged = try seal(item, analysis: analysis, motion: motions[f.path])
            } catch let error as Nu11Error where error.diskFull {
                guard oneAtATime || flight.isEmpty else {
                    // The files after it are undone and it is tried again alone, then they are.
                    for g in flight { g.pending.abort() }
                    flight = []
                    flightBytes = 0
                    flightWeight = 0
                    oneAtATime = true
                    next = f.index
                    return
                }
                throw stopHere(f.path, error)
            }
            if let still = stillOf[f.path], LivePhotos.isMotion(staged.meta) { motions[still] = staged.row.id }
            if batch.isEmpty { batchFirst = f.path }
            batch.append(staged)
            batchBytes += staged.meta.size
            if batch.count >= max(1, commitEvery) || batchBytes >= 256 << 20 {
                try landCommitting()
                let handed = batch
                batch = []  // the commit thread's now (or undone, if its first step failed)
                batchBytes = 0
                do {
                    committing = (try commitInBackground(handed), batchFirst)
                } catch let error as Nu11Error where error.diskFull {
                    throw stopped(results, at: batchFirst, error)
                }
            }
        }

        /// Waits for the batch in flight and adds its items; a full disk stops the import there.
        func landCommitting() throws {
            guard let c = committing else { return }
            committing = nil
            do {
                results += try summaries(landGroup(c.group))
            } catch let error as Nu11Error where error.diskFull {
                throw stopped(results, at: c.first, error)
            }
        }

        /// A full disk at `path`: what is staged before it is committed (each file whole), the
        /// rest is left.
        func stopHere(_ path: String, _ error: Nu11Error) -> ImportStopped {
            for f in flight { f.pending.abort() }
            flight = []
            if let c = committing {
                // Files land in order: when the batch in flight did not, this one is not tried.
                committing = nil
                guard let landed = try? landGroup(c.group), let more = try? summaries(landed) else {
                    return stopped(results, at: c.first, error)
                }
                results += more
            }
            if let more = try? commitBatch(&batch) { results += more }
            batch = []
            return stopped(results, at: path, error)
        }

        // Up to 16 small files in flight; a file over 1 MiB (a photo for the helpers, or a file
        // with a pipeline of its own) weighs a (helpers + 1)-th of that, so as many of those are
        // in flight as there are helpers, plus one, as when each file was encrypted in turn.
        let window = 16, heavy = (window + ImageHelper.maxHelpers) / (ImageHelper.maxHelpers + 1)
        do {
            while next < ordered.count || !flight.isEmpty {
                guard next < ordered.count else {  // every file started: the rest land
                    try land()
                    continue
                }
                let n = next, path = ordered[n]
                next += 1
                try progress(n, paths.count)
                let fd: Int32
                do {
                    fd = try ImportSource.openRegularFile(path)
                } catch let error as Nu11Error where error.code == .notFound && vanished != nil {
                    vanished?(path)
                    continue
                }
                // The most its photo copy can take (`PhotoCapture`), counted before it is read.
                let (modified, size) = ImportSource.modificationTimeAndSize(fd)
                let copied = Int(min(size, UInt64(PhotoCapture.maxBytes)))
                let name = PathName.last(path), deadline = fade.map { now + $0 }
                if packUses >= max(1, commitEvery) { (packByte, packUses) = (SecureRandom.bytes(1)[0], 0) }
                packUses += 1
                let id = ItemID(firstByte: packByte)
                // The import time is taken here, in the order given, not on the worker (whose
                // files start in any order): a rebuilt index orders its rows by it (FORMAT.md §5.3).
                let created = Date()
                let pending = PendingItem(fd: fd) {
                    try self.encrypt(FileDescriptorStream(fd: fd, label: path), name: name, kind: .file, domain: domain,
                                     album: targetAlbum, fadeDeadline: deadline, id: id, created: created, modified: modified)
                }
                let weight = size > 1 << 20 ? heavy : 1
                flight.append((n, path, pending, copied, weight))
                flightBytes += copied
                flightWeight += weight
                // At most `window` of weight in flight, and at most 256 MiB of their copies.
                while !flight.isEmpty && (oneAtATime || flightWeight >= window || flightBytes > 256 << 20) { try land() }
            }
            try landCommitting()
            results += try commitOrStop(&batch, results: results, first: batchFirst)
        } catch let error as Nu11Error where !error.diskFull {
            // Another error after earlier groups landed: those items are in the vault, and the
            // report must say so (a plain retry would import them twice). The group in flight
            // lands (or is undone) first, so what it committed is counted too.
            for f in flight { f.pending.abort() }
            flight = []
            if let c = committing {
                committing = nil
                if let landed = try? landGroup(c.group), let more = try? summaries(landed) { results += more }
            }
            guard !results.isEmpty else { throw error }
            throw stopped(results, at: error.item ?? "", error)
        }
        try progress(paths.count, paths.count)
        audit("import", ids: results.map(\.id))
        extendListingFile(added: domain == .vault ? results.count : 0)
        return results
    }

    /// Commits a batch; a full disk stops the import with what earlier batches committed.
    private func commitOrStop(_ batch: inout [StagedItem], results: [ItemSummary], first: String) throws -> [ItemSummary] {
        do { return try commitBatch(&batch) } catch let error as Nu11Error where error.diskFull {
            throw stopped(results, at: first, error)
        }
    }

    private func stopped(_ results: [ItemSummary], at path: String, _ cause: Nu11Error) -> ImportStopped {
        if !results.isEmpty { audit("import", ids: results.map(\.id), detail: cause.diskFull ? "stopped: the disk is full" : "stopped: an error") }
        return ImportStopped(imported: results, at: path, cause: cause)
    }

    private func commitBatch(_ batch: inout [StagedItem]) throws -> [ItemSummary] {
        try commit(&batch)
        return try summaries(batch)
    }

    /// The summaries of committed items; the session's listing cache learns their facts from
    /// the metadata just sealed (`extendListingFile`).
    private func summaries(_ staged: [StagedItem]) throws -> [ItemSummary] {
        for item in staged where item.row.domain == .vault && item.row.kind == .file {
            vault.listingCache.learn(.init(date: item.meta.sortDate.timeIntervalSince1970, motion: item.meta.motion,
                                                media: MediaKind(type: item.meta.type)), for: item.row)
        }
        let names = try vault.albums.albumNames()
        return staged.map { summary(row: $0.row, meta: $0.meta, albumName: $0.row.album.flatMap { names[$0] }) }
    }
}
