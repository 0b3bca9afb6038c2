// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Which items a multi-item export takes.
public enum ExportSelection: Sendable, Equatable {
    /// These items, in this order.
    case items([ItemRef])
    /// Every item of the album.
    case album(String)
    /// Every item taken (the capture date, else the source file's mtime, else its import time) in `from...to`;
    /// an open end is nil.
    case taken(from: Date?, to: Date?)
    /// Every item.
    case all
}

/// A multi-item export into one folder, decided before anything is written: the items and
/// the file name each one gets. A name is made safe for a file name (an archive's item may
/// be called `../../.bashrc`: no folder separator, no control character, never `.` or `..`,
/// never a hidden dotfile such as a shell's start-up file)
/// and unique in the folder ("beach.jpg", "beach (2).jpg"): nothing already there is ever
/// replaced. The command line and the desktop app both export through one.
public struct ExportPlan: Sendable {
    public struct Entry: Sendable {
        public let item: ItemSummary
        /// The file name in the folder (a single path component).
        public let fileName: String
        /// Whether `fileName` differs from the item's own name.
        public var renamed: Bool { fileName != item.name }
        /// Whether its name was taken (by a file in the folder, or an earlier item of the
        /// plan) and it got a number: what a user is asked about (keep both, or skip).
        public let clashed: Bool
    }

    public let folder: String
    public let entries: [Entry]
    public var totalBytes: UInt64 { entries.reduce(0) { $0 + $1.item.size } }

    /// Plans `items` into `folder`, which must exist; names taken by files there (or by an
    /// earlier item of the plan) get " (2)", " (3)", … before their extension.
    public init(items: [ItemSummary], folder: String) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw Nu11Error(.notFound, "\(folder) is not a folder", remedy: .advice(.checkPath), item: folder)
        }
        self.folder = folder
        var taken = Set<String>()
        entries = items.map { item in
            let safe = Self.safeName(item.name, id: item.id)
            let name = Self.unique(safe, folder: folder, taken: &taken)
            return Entry(item: item, fileName: name, clashed: name != safe)
        }
    }

    private init(folder: String, entries: [Entry]) {
        self.folder = folder
        self.entries = entries
    }

    /// The same plan without the items whose names clashed ("skip" rather than "keep both").
    public func skippingClashes() -> ExportPlan { ExportPlan(folder: folder, entries: entries.filter { !$0.clashed }) }

    /// `name` as one safe path component: separators and control characters become "_",
    /// "." and ".." and the empty name become "item-<ID prefix>", a leading "." becomes "_"
    /// (no hidden file appears), and it is cut to 255 bytes (keeping the extension).
    public static func safeName(_ name: String, id: ItemID) -> String {
        var out = String(String.UnicodeScalarView(name.unicodeScalars.map { scalar in
            scalar == "/" || scalar == "\\" || scalar.properties.generalCategory == .control ? "_" : scalar
        }))
        if out.isEmpty || out == "." || out == ".." { out = "item-" + String(id.hex.prefix(8)) }
        if out.hasPrefix(".") { out = "_" + out.dropFirst() }
        guard out.utf8.count > 255 else { return out }
        let ns = out as NSString
        let ext = ns.pathExtension
        return ext.isEmpty || ext.utf8.count > 16 ? fit(out, suffix: "") : fit(ns.deletingPathExtension, suffix: "." + ext)
    }

    /// The name with " (n)" before its extension, for the n-th item of that name.
    static func numbered(_ name: String, _ n: Int) -> String {
        let ns = name as NSString
        let ext = ns.pathExtension
        let stem = ext.isEmpty || ns.deletingPathExtension.isEmpty ? name : ns.deletingPathExtension
        let suffix = " (\(n))" + (stem == name ? "" : "." + ext)
        return fit(stem, suffix: suffix)
    }

    /// `stem` + `suffix` in at most 255 bytes, cutting the stem at a character boundary.
    private static func fit(_ stem: String, suffix: String) -> String {
        var stem = stem
        while stem.utf8.count + suffix.utf8.count > 255, !stem.isEmpty { stem.removeLast() }
        return stem + suffix
    }

    private static func unique(_ name: String, folder: String, taken: inout Set<String>) -> String {
        var candidate = name
        var n = 1
        while taken.contains(candidate) || ProtectedFiles.kind(folder + "/" + candidate) != nil {
            n += 1
            candidate = numbered(name, n)
        }
        taken.insert(candidate)
        return candidate
    }
}

/// What a multi-item export did.
public struct ExportReport: Sendable {
    /// The items written, with their file names.
    public var written: [ExportPlan.Entry] = []
    /// The items that could not be read (damaged or cut short), with why.
    public var failed: [(entry: ExportPlan.Entry, error: Nu11Error)] = []
    public var bytes: UInt64 = 0
}

extension Items {
    /// The items a selection names: in capture-date order for an album, a date range or all,
    /// in the order given for IDs. Files only (a note is exported as a note).
    /// A Live Photo travels whole: a still's motion comes right after it, even when the
    /// selection did not name it (its capture date can fall outside a range, or only the
    /// still's ID was given).
    public func select(_ selection: ExportSelection) throws -> [ItemSummary] {
        let chosen: [ItemSummary]
        switch selection {
        case .items(let refs):
            var seen = Set<ItemID>()
            chosen = try refs.map { try item($0) }.filter { seen.insert($0.id).inserted }
        case .album(let name):
            chosen = try list(album: name, limit: Int.max, kind: .file, order: .taken).items
        case .taken(let from, let to):
            chosen = try list(limit: Int.max, kind: .file, taken: (from, to)).items
        case .all:
            chosen = try list(limit: Int.max, kind: .file, order: .taken).items
        }
        return try withMotions(chosen)
    }

    /// `items` with each Live Photo still's motion right after it (once, and only while the
    /// motion is there to be read).
    public func withMotions(_ items: [ItemSummary]) throws -> [ItemSummary] {
        var placed = Set(items.map(\.id))
        var out: [ItemSummary] = []
        out.reserveCapacity(items.count)
        let named = Set(items.map(\.id))
        for item in items {
            // A motion the selection named itself is placed after its still when that is there.
            if named.contains(item.id), out.contains(where: { $0.id == item.id }) { continue }
            out.append(item)
            guard let motion = item.motion else { continue }
            if named.contains(motion) {
                if let own = items.first(where: { $0.id == motion }), !out.contains(where: { $0.id == motion }) { out.append(own) }
                continue
            }
            guard placed.insert(motion).inserted, let video = try? self.item(ItemRef(motion)) else { continue }
            out.append(video)
        }
        return out
    }

    /// Runs a plan: each item to its own file, all or nothing per file (never replacing one
    /// that appeared meanwhile). An item that cannot be read is reported and the rest goes on;
    /// a failure to write (a full disk, a folder gone) stops the export there. One audit entry.
    public func export(_ plan: ExportPlan, stripLocation: Bool,
                       progress: @escaping (_ done: Int, _ bytes: UInt64) throws -> Void = { _, _ in }) throws -> ExportReport {
        var report = ExportReport()
        // Plaintext an earlier export into this folder left when it was killed goes first.
        ProtectedFiles.removeAbandonedTemps(in: plan.folder)
        defer {
            if !report.written.isEmpty { audit("export", ids: report.written.map(\.item.id)) }
        }
        for entry in plan.entries {
            let path = plan.folder + "/" + entry.fileName
            let before = report.bytes
            do {
                report.bytes += try exportUnaudited(ItemRef(entry.item.id), toFile: path, stripLocation: stripLocation) { done, _ in
                    try progress(report.written.count, before + done)
                }.bytes
                report.written.append(entry)
            } catch let error as Nu11Error where error.code == .corrupted || error.code == .truncated {
                report.failed.append((entry, error))
            }
            try progress(report.written.count + report.failed.count, report.bytes)
        }
        return report
    }
}
