// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Media
import Nu11Storage

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

extension Items {
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
    /// motion), key record and thumbnails sealed. A failure aborts the item's temp files.
    func seal(_ item: EncryptedItem, analysis: (facts: PhotoFacts?, warning: String?), motion: ItemID?) throws -> StagedItem {
        if let warning = analysis.warning { notice(warning) }
        var meta = ItemMetadata(name: item.name, size: item.size,
                                type: item.type ?? (item.kind == .note ? "text/plain" : ItemMetadata.guessType(item.name)),
                                created: item.created, modified: item.modified)
        if let photo = analysis.facts {
            meta.apply(photo)
            if meta.type.hasPrefix("image/") { meta.motion = motion }
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

/// A file of a folder import being encrypted on another thread (`Items.encrypt`), then
/// analysed there (a photo decoded by a helper of the pool): the files in the import's window
/// are encrypted at once, on every core, and as many photos decoded at once as there are
/// helpers (`ImageHelper`); they are sealed and committed in the order given
/// (`Items.importFiles`). The worker owns the open file and closes it.
final class PendingItem: @unchecked Sendable {
    // @unchecked Sendable, and why it is sound: the job and the file are handed over whole —
    // the importing thread touches neither, nor `result`, until `wait` returns, and the
    // semaphore orders the worker's write of `result` before that read. `encrypt` touches
    // only its own files and the vault's immutable location; the temp file's cleanup slot is
    // claimed atomically (`nu11_cleanup_register`).
    typealias Done = (item: EncryptedItem, analysis: (facts: PhotoFacts?, warning: String?))
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<Done, any Error> = .failure(CancellationError())
    private var waited = false

    init(fd: Int32, encrypt: @escaping () throws -> EncryptedItem) {
        // The job (and the vault it holds) is let go before `wait` returns (`Worker`).
        Worker.start(signalling: done) { [self] in
            result = Result {
                defer { close(fd) }
                let item = try encrypt()
                return (item, item.capture?.analyze() ?? (nil, nil))
            }
        }
    }

    /// The encrypted item and its analysis, or what failed (its temp file already removed);
    /// on the importing thread only.
    func wait() -> Result<Done, any Error> {
        if !waited {
            done.wait()
            waited = true
        }
        return result
    }

    /// Waits, then removes what was written (the import stopped before this file).
    func abort() {
        if case .success(let done) = wait() { done.item.writer.abort() }
    }
}
