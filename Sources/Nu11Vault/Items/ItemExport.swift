// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Nu11Format
import Nu11Storage

/// Reading an item out: to a stream, or to a new file (all or nothing). A multi-item export
/// into a folder is planned and run in ExportPlan.swift.
extension Items {
    /// Streams an item's plaintext into `sink`. Only authenticated bytes are written; if the
    /// item is damaged the error names it (and the sink may hold an authenticated prefix).
    @discardableResult
    /// A JPEG the user rotated (`Photos.rotate`) gets the turn in its EXIF orientation,
    /// losslessly; other items pass as stored.
    public func export(_ ref: ItemRef, to sink: inout some ByteSink) throws -> UInt64 {
        let row = try row(ref)
        let n = try exportOriented(row, meta: try ItemMetadata.open(row, key: metadataKey(row.domain)), stripLocation: false, to: &sink)
        audit("export", count: 1, items: [row.id])
        return n
    }

    /// Streams an item's plaintext, without its location when `stripLocation`.
    @discardableResult
    public func export(_ ref: ItemRef, to sink: inout some ByteSink, stripLocation: Bool) throws -> UInt64 {
        guard stripLocation else { return try export(ref, to: &sink) }
        let row = try row(ref)
        return try exportOriented(row, meta: try ItemMetadata.open(row, key: metadataKey(row.domain)), stripLocation: true, to: &sink)
    }

    /// What every export writes: the stored bytes (without the location when asked), a
    /// rotated JPEG's orientation set on the way out.
    func exportOriented<S: ByteSink>(_ row: ItemRow, meta: ItemMetadata, stripLocation: Bool, to sink: inout S) throws -> UInt64 {
        var oriented = Photos.orientingSink(sink, meta: meta)
        defer { sink = oriented.inner }
        let n = stripLocation ? try vault.photos.exportStripped(row, meta: meta, to: &oriented) : try export(row, to: &oriented)
        try oriented.finish()
        return n
    }

    func export(_ row: ItemRow, to sink: inout some ByteSink) throws -> UInt64 {
        let (fd, key) = try openItem(row)
        defer { close(fd) }
        do {
            return try N11Envelope.open(from: FileDescriptorStream(fd: fd, label: row.id.hex), to: &sink,
                                        expected: N11Header(kind: row.kind, domain: row.domain, itemID: row.id), itemKey: key)
        } catch let error as Nu11Error {
            throw error.code == .io ? error : error.about("item \(row.id.hex)")
        }
    }

    /// The stored bytes as a range any thread can read (a share's age workers decrypt them
    /// straight into their slots): header checked, length authenticated first.
    func plaintextRange(_ row: ItemRow) throws -> ChunkedRange<N11Envelope.AEAD> {
        let (fd, key) = try openItem(row)
        return try N11Envelope.range(owning: fd, expected: N11Header(kind: row.kind, domain: row.domain, itemID: row.id),
                                     itemKey: key, label: "item \(row.id.hex)")
    }

    /// Exports to a new file, all or nothing: a damaged item leaves no partial file. The
    /// file gets the source's modification time back, when the import recorded it.
    /// `stripLocation` removes the photo's location first (see `exportStripped`).
    public func export(_ ref: ItemRef, toFile path: String, overwrite: Bool = false, stripLocation: Bool = false,
                       progress: ((UInt64, UInt64) throws -> Void)? = nil) throws -> UInt64 {
        // Plaintext an earlier export left here when it was killed goes first.
        ProtectedFiles.removeAbandonedTemps(besideFile: path)
        let (n, id) = try exportUnaudited(ref, toFile: path, overwrite: overwrite, stripLocation: stripLocation, progress: progress)
        audit("export", count: 1, items: [id])
        return n
    }

    /// The same, for a caller that audits a whole batch once (`export(_ plan:)`).
    func exportUnaudited(_ ref: ItemRef, toFile path: String, overwrite: Bool = false, stripLocation: Bool = false,
                         progress: ((UInt64, UInt64) throws -> Void)? = nil) throws -> (bytes: UInt64, id: ItemID) {
        if !overwrite && FileManager.default.fileExists(atPath: path) {
            throw Nu11Error(.alreadyExists, "\(path) already exists", remedy: .otherOutputOrForce, item: path)
        }
        let row = try row(ref)
        let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
        // Plaintext: a temp file without a name while it is written (a kill leaves nothing).
        let writer = try AtomicFileWriter(destination: path, plaintext: true)
        writer.replaceExisting = overwrite  // a file that appeared meanwhile is not replaced either
        do {
            var sink = CountingSink(inner: writer.sink, total: meta.size, report: progress)
            let n = try exportOriented(row, meta: meta, stripLocation: stripLocation, to: &sink)
            writer.modificationTime = meta.modified?.timeIntervalSince1970
            // Renamed into place, the export is done: a failing folder fsync after it is "done, but …".
            try vault.commitStep("the export to \(path)") { try writer.commit() }
            return (n, row.id)
        } catch {
            writer.abort()
            throw error
        }
    }
}
