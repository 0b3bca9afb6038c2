// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What a share wrote.
public struct ShareReport: Sendable {
    public let items: Int
    /// Plaintext bytes of the items (what the tar carries, before age).
    public let bytes: UInt64
    public let postQuantum: Bool
    /// Items whose location was removed (photos and videos; other files pass unchanged).
    public let stripped: Int
}

/// A share: one age file holding a tar of the chosen items (names and dates kept), to one or
/// more age recipients, written atomically (0600), location removed unless kept.
extension Sharing {
    @discardableResult
    public func share(_ items: [ItemSummary], to recipients: [AgeRecipient], output path: String, armor: Bool = false,
                      stripLocation: Bool = true, progress: (Int, UInt64) throws -> Void = { _, _ in }) throws -> ShareReport {
        guard !items.isEmpty else { throw Nu11Error(.invalidArgument, "nothing to share", remedy: .listIDs) }
        guard !FileManager.default.fileExists(atPath: path) else {
            throw Nu11Error(.alreadyExists, "\(path) already exists", remedy: .otherOutputOrForce, item: path)
        }
        // A file outside the vault, written as an export is: unnamed until it is whole (O_TMPFILE),
        // so a share cut anywhere — the agent ended by `lock` in the middle of it included —
        // leaves no partial file an `age -d` would open.
        ProtectedFiles.removeAbandonedTemps(besideFile: path)
        let writer = try AtomicFileWriter(destination: path, plaintext: true)
        writer.replaceExisting = false
        var stripped = 0
        var bytes: UInt64 = 0
        do {
            // Refused before anything is decrypted: mixed kinds, no recipient.
            var encryptor = try AgeEncryptor(to: CoalescingSink(writer.sink), recipients: recipients, armor: armor)
            var names = Set<String>()
            for (n, item) in items.enumerated() {
                try progress(n, bytes)
                let (size, wasStripped) = try writeEntry(item, name: Self.uniqueName(item, taken: &names), strip: stripLocation,
                                                         to: &encryptor)
                bytes += size
                if wasStripped { stripped += 1 }
            }
            try encryptor.write(ShareTar.end)
            var sink = try encryptor.finish()
            try sink.flush()
            try progress(items.count, bytes)
            try vault.commitStep("the share to \(path)") { try writer.commit() }
        } catch {
            writer.abort()
            throw error
        }
        let kind = recipients.first?.isPostQuantum == true ? "post-quantum" : "X25519"
        audit("share", count: items.count,
              detail: "to \(recipients.count) \(kind) recipient(s) \(recipients.map(\.fingerprint).joined(separator: ","))"
                + (stripLocation ? ", location removed" : ", location kept"))
        return ShareReport(items: items.count, bytes: bytes, postQuantum: recipients.first?.isPostQuantum == true, stripped: stripped)
    }
}

extension Sharing {
    /// Each item's name made safe (as an export makes it) and unique in the tar (" (2)"
    /// before the extension).
    static func uniqueName(_ item: ItemSummary, taken names: inout Set<String>) -> String {
        let safe = ExportPlan.safeName(item.name, id: item.id)
        var name = safe
        var n = 2
        while names.contains(name) {
            let ns = safe as NSString
            let ext = ns.pathExtension
            name = ext.isEmpty ? "\(safe) (\(n))" : "\(ns.deletingPathExtension) (\(n)).\(ext)"
            n += 1
        }
        names.insert(name)
        return name
    }

    /// Items at least this large are handed to the age file as ranges (read on its workers);
    /// smaller ones stream through the chunk pipeline.
    static let rangedItemBytes: UInt64 = 1 << 20

    /// One tar entry: its header, its content, its padding. A photo or video whose location
    /// is removed, or a JPEG the user turned (its EXIF orientation set, as an export does), is
    /// held in memory while that is done; any other item streams, and must give exactly the
    /// size its metadata records.
    private func writeEntry<K: ByteSink>(_ item: ItemSummary, name: String, strip: Bool,
                                         to out: inout AgeEncryptor<K>) throws -> (UInt64, Bool) {
        let row = try vault.items.row(ItemRef(item.id))
        let date = item.modified ?? item.taken ?? item.created
        let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
        let stripping = strip && (item.type.hasPrefix("image/") || item.type.hasPrefix("video/"))
        if stripping || Photos.exportTurns(meta) != 0 {
            var content = MemorySink()
            defer { content.zero() }
            _ = try vault.items.exportOriented(row, meta: meta, stripLocation: stripping, to: &content)
            let size = UInt64(content.count)
            try out.write(ShareTar.header(name: name, size: size, modified: date))
            try content.withUnsafeBytes { try out.write($0) }
            try out.write(ShareTar.padding(size))
            return (size, stripping)
        }
        try out.write(ShareTar.header(name: name, size: item.size, modified: date))
        if item.size >= Self.rangedItemBytes {
            // Decrypted by the age workers straight into their slots (AgeSealPipeline); a
            // damaged chunk is thrown by a later write or the finish, naming the item.
            let range = try vault.items.plaintextRange(row)
            guard range.count == item.size else {
                throw Nu11Error(.corrupted, "item \(item.id.hex) holds \(range.count) bytes, not the \(item.size) its metadata records",
                                remedy: .check(reason: nil), item: item.id.hex)
            }
            try out.write(range: range)
            try out.write(ShareTar.padding(item.size))
            return (item.size, false)
        }
        let size = try vault.items.export(row, to: &out)
        guard size == item.size else {
            throw Nu11Error(.corrupted, "item \(item.id.hex) holds \(size) bytes, not the \(item.size) its metadata records",
                            remedy: .check(reason: nil), item: item.id.hex)
        }
        try out.write(ShareTar.padding(size))
        return (size, false)
    }
}
