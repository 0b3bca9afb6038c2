// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
private func openFile(_ path: String, _ flags: Int32) -> Int32 { Glibc.open(path, flags) }
#elseif canImport(Darwin)
import Darwin
private func openFile(_ path: String, _ flags: Int32) -> Int32 { Darwin.open(path, flags) }
#endif
import Foundation
import Nu11Format
import Nu11Storage

extension Items {
    /// Imports one regular file. All or nothing: the ciphertext goes to a temp file, the key
    /// record is written, the file is renamed into place, then the index row is committed.
    @discardableResult
    public func importFile(at path: String, album: String? = nil, fade: Double? = nil) throws -> ItemSummary {
        let fd = try ImportSource.openRegularFile(path)
        defer { close(fd) }
        let name = PathName.last(path)
        let item = try store(FileDescriptorStream(fd: fd, label: path), name: name, kind: .file, album: album, fade: fade,
                             modified: ImportSource.modificationTime(fd))
        audit("import", ids: [item.id])
        return item
    }

    /// Imports whatever `source` yields (stdin, for `-`) under `name`.
    /// `refuseEmpty`: an empty stream (e.g. nothing piped to `import -`) imports nothing and
    /// fails, rather than storing an empty item.
    @discardableResult
    public func importStream(_ source: some ByteSource, name: String, album: String? = nil,
                             fade: Double? = nil, refuseEmpty: Bool = false) throws -> ItemSummary {
        let item = try store(source, name: name, kind: .file, album: album, fade: fade, refuseEmpty: refuseEmpty)
        audit("import", ids: [item.id])
        return item
    }

    /// Encrypts one item into place (files and notes alike), through the one commit path;
    /// `replacing` rows (a note's old version) are removed at the same commit point.
    func store(_ source: some ByteSource, name: String, kind: ItemKind, album: String?, fade: Double?,
               id: ItemID = ItemID(), created: Date = Date(), modified: Date? = nil, replacing: [ItemRow] = [],
               refuseEmpty: Bool = false) throws -> ItemSummary {
        let (domain, targetAlbum) = try importTarget(album: album, fade: fade)
        var staged = [try stage(source, name: name, kind: kind, domain: domain, album: targetAlbum,
                                fadeDeadline: fade.map { now + $0 }, id: id, created: created, modified: modified)]
        if refuseEmpty && staged[0].meta.size == 0 {
            staged[0].abortFiles()
            throw Nu11Error(.invalidArgument, "standard input was empty: nothing was imported",
                            remedy: .pipeContentIn)
        }
        try commit(&staged, replacing: replacing)
        return try summary(id: id, meta: staged[0].meta, domain: domain, kind: kind, album: targetAlbum)
    }

    /// One page of items, in import order, or by capture date (`.taken`: photos by EXIF
    /// date, other items by import time; the sealed metadata of every matching item is
    /// opened to sort them). `taken` keeps the items taken in that range (either end open),
    /// in capture-date order.
    public func list(album: String? = nil, photosOnly: Bool = false, limit: Int = 100, after: ItemID? = nil,
                     kind: ItemKind = .file, order: ItemOrder = .imported,
                     taken: (from: Date?, to: Date?)? = nil) throws -> ItemPage {
        let limit = min(max(limit, 0), Int.max - 1)  // a caller's Int.max means "all"
        guard limit > 0 else {
            throw Nu11Error(.invalidArgument, "the page size must be at least 1", remedy: .advice(.positiveNumber))
        }
        var afterRow: ItemRow?
        if let after {
            guard let row = try index.item(after), isListed(row) else {
                throw Nu11Error(.notFound, "no item \(after) to continue after", remedy: .advice(.idFromPreviousPage))
            }
            afterRow = row
        }
        let filter: ItemID?? = try album.map { .some(try vault.albums.albumID(named: $0)) } ?? (photosOnly ? .some(nil) : .none)
        evictExpiredPreviews()
        let names = try vault.albums.albumNames()
        func summarize(_ row: ItemRow) throws -> ItemSummary {
            let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
            return summary(row: row, meta: meta, albumName: row.album.flatMap { names[$0] })
        }
        if let taken, let from = taken.from, let to = taken.to, from > to {
            throw Nu11Error(.invalidArgument, "the date range ends before it starts", remedy: .advice(.validDateRange))
        }
        if order == .taken || taken != nil {
            let rows = try visibleRows(kind: kind, album: filter, afterSeq: 0, limit: Int.max)
            var keys: [Domain: SecretBytes] = [:]
            for domain in Set(rows.map(\.domain)) { keys[domain] = try metadataKey(domain) }
            let metas = try ItemMetadata.openAll(rows, keys: keys)
            var all = zip(rows, metas).map { row, meta in
                (row: row, item: summary(row: row, meta: meta, albumName: row.album.flatMap { names[$0] }))
            }
            all.sort { a, b in
                let (x, y) = (a.item.sortDate, b.item.sortDate)
                return x != y ? x < y : a.row.seq < b.row.seq
            }
            if let taken {
                all.removeAll { entry in
                    let when = entry.item.sortDate
                    return (taken.from.map { when < $0 } ?? false) || (taken.to.map { when > $0 } ?? false)
                }
            }
            var start = 0
            if let afterRow {
                guard let i = all.firstIndex(where: { $0.row.id == afterRow.id }) else {
                    throw Nu11Error(.notFound, "no item \(afterRow.id) to continue after", remedy: .advice(.idFromPreviousPage))
                }
                start = i + 1
            }
            let page = all[start...].prefix(limit).map(\.item)
            return ItemPage(items: page, next: all.count - start > limit ? page.last?.id : nil)
        }
        let rows = try visibleRows(kind: kind, album: filter, afterSeq: afterRow?.seq ?? 0, limit: limit + 1)
        let page = try rows.prefix(limit).map(summarize)
        return ItemPage(items: page, next: rows.count > limit ? page.last?.id : nil)
    }

    /// One item's summary. The read-time fade check comes first (issue 57: the app's viewer
    /// showed the name of a Fade item its schedule does not name).
    public func item(_ ref: ItemRef) throws -> ItemSummary {
        let row = try row(ref)
        try checkFade(row)
        let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
        return summary(row: row, meta: meta, albumName: try row.album.flatMap { try vault.albums.albumNames()[$0] })
    }

    // MARK: helpers

    /// The visible item `ref` names: by its whole ID, or by a prefix that only one visible
    /// item has. An ambiguous prefix fails with the candidates listed.
    func row(_ ref: ItemRef) throws -> ItemRow {
        let rows: [ItemRow]
        if let id = ref.exactID {
            rows = try index.item(id).map { [$0] } ?? []
        } else {
            rows = try index.items(idPrefix: ref.digits, limit: 64)
        }
        let visible = rows.filter(isVisible)
        guard let first = visible.first else {
            throw Nu11Error(.notFound, "no item \(ref) in this vault", remedy: .listIDs, item: ref.digits)
        }
        guard visible.count == 1 else {
            let shown = visible.prefix(5).map(\.id.hex).joined(separator: ", ") + (visible.count > 5 ? ", …" : "")
            throw Nu11Error(.invalidArgument, "the ID prefix \(ref) is ambiguous: it matches \(visible.count) items (\(shown))",
                            remedy: .advice(.longerIDPrefix), item: ref.digits)
        }
        return first
    }

    /// Where new items go: the fade domain (never into an album: fade items live in their
    /// own domain), or this PIN's main domain and the named album (its folder made). The one
    /// place this rule is checked for every import path.
    func importTarget(album: String?, fade: Double?) throws -> (domain: Domain, album: ItemID?) {
        if fade != nil && album != nil {
            throw Nu11Error(.invalidArgument, "fade items cannot go into an album", remedy: .fadeOrAlbum)
        }
        let target = try album.map { try vault.albums.albumID(named: $0) }
        if let target { try ProtectedFiles.makeDirectory(location.albumFolder(target)) }
        return (fade == nil ? mainDomain : .fade, target)
    }

    /// The item's file: where its row says, or (after an interrupted move) wherever it is.
    func locate(_ row: ItemRow) throws -> String {
        try ItemFiles(location: location).locate(row, mainDomain: mainDomain)
    }

    /// The one way this vault destroys an item (see `Shredder`); the deletion mode is the
    /// setting unless the caller says otherwise (`delete --secure`).
    func shredder(secure: Bool? = nil) -> Shredder {
        Shredder(location, keyStore: keyStore, secure: secure ?? (settings.deletionMode == .secure))
    }

    func openItem(_ row: ItemRow) throws -> (Int32, SecretBytes) {
        try checkFade(row)
        let key = try keyStore.itemKeyRecord(row.id, domain: row.domain).open(domainKey: domainKey(row.domain))
        let path = try locate(row)
        // Without blocking, and a regular file only: a FIFO (or device) put in an item's place by
        // a writer of the vault folder would otherwise hold export, share and check for ever.
        let fd = openFile(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw SystemIO.error("open", item: path) }
        return (try ProtectedFiles.requireRegular(fd, path), key)
    }

    func summary(id: ItemID, meta: ItemMetadata, domain: Domain, kind: ItemKind, album: ItemID?) throws -> ItemSummary {
        summary(row: ItemRow(id: id, kind: kind, domain: domain, album: album, meta: []), meta: meta,
                albumName: try album.flatMap { try vault.albums.albumNames()[$0] })
    }

    func summary(row: ItemRow, meta: ItemMetadata, albumName: String?) -> ItemSummary {
        ItemSummary(id: row.id, name: meta.name, size: meta.size, type: meta.type, album: albumName,
                    albumID: row.album, domain: row.domain, kind: row.kind,
                    created: meta.created,
                    fadesAt: row.domain == .fade
                        ? state.fade.first { $0.id == row.id }.map { Date(timeIntervalSince1970: $0.deadline) } : nil,
                    modified: meta.modified, width: meta.width, height: meta.height, taken: meta.taken,
                    camera: meta.camera, gps: meta.gps, thumbnail: meta.thumbnail == true, duration: meta.duration,
                    rotation: meta.turns, motion: meta.motion)
    }
}

/// Checks on what a user asks to import.
public enum ImportSource {
    /// The modification time of an open file (kept in the sealed metadata, restored on export).
    static func modificationTime(_ fd: Int32) -> Date? { modificationTimeAndSize(fd).modified }

    /// The same, and the file's size now (0 when fstat fails).
    static func modificationTimeAndSize(_ fd: Int32) -> (modified: Date?, size: UInt64) {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return (nil, 0) }
        return (Date(timeIntervalSince1970: Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9), UInt64(max(st.st_size, 0)))
    }

    /// Refuses clearly anything but a regular file, without opening it (an import's plan checks
    /// every named file before the first is imported; the import then opens each once).
    /// `readable`: also that this process may read it.
    public static func checkRegularFile(_ path: String, readable: Bool = true) throws {
        var st = stat()
        guard stat(path, &st) == 0 else { throw SystemIO.error("stat", item: path) }
        switch st.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR:
            throw Nu11Error(.invalidArgument, "\(path) is a folder", remedy: .importFolderRecursively, item: path)
        default:
            throw Nu11Error(.invalidArgument, "\(path) is not a regular file (FIFO, device or socket)",
                            remedy: .importThroughStandardInput, item: path)
        }
        if readable && access(path, R_OK) != 0 { throw SystemIO.error("open", item: path) }
    }

    /// Opens `path` for reading if it is a regular file; anything else is refused clearly.
    public static func openRegularFile(_ path: String) throws -> Int32 {
        try checkRegularFile(path, readable: false)
        let fd = openFile(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw SystemIO.error("open", item: path) }
        _ = fcntl(fd, F_SETFL, 0)
        return fd
    }

    /// The regular files under `folder` (symlinks are not followed). A name that is not
    /// UTF-8 stops everything before anything is imported: nothing is skipped silently.
    /// What a recursive import leaves out: system litter, never photos (said on stderr).
    public static let skippedFiles: Set<String> = [".DS_Store", "Thumbs.db"]
    public static let skippedFolders: Set<String> = [".thumbnails"]

    static func walk(_ folder: String, into found: inout [String], skipped: inout [String]) throws {
        guard let dir = opendir(folder) else {
            throw SystemIO.error("list", item: folder)
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard let name = String(validating: raw, as: UTF8.self) else {
                let shown = raw.map { (0x20..<0x7f).contains($0) && $0 != 0x5c ? String(UnicodeScalar($0)) : String(format: "\\x%02x", $0) }.joined()
                throw Nu11Error(.invalidArgument, "\(folder)/\(shown): the file name is not UTF-8; nothing was imported",
                                remedy: .renameToUTF8,
                                item: folder)
            }
            if name == "." || name == ".." { continue }
            let full = folder + "/" + name
            // The entry's type as the folder gives it (never a symlink's target); asked of
            // the file only when the file system does not say (DT_UNKNOWN).
            let type: mode_t
            switch Int32(entry.pointee.d_type) {
            case Int32(DT_REG): type = S_IFREG
            case Int32(DT_DIR): type = S_IFDIR
            case Int32(DT_UNKNOWN):
                var st = stat()
                guard lstat(full, &st) == 0 else { continue }
                type = st.st_mode & S_IFMT
            default: continue  // a symlink, device, FIFO or socket: not imported
            }
            switch type {
            case S_IFREG where skippedFiles.contains(name): skipped.append(full)
            case S_IFREG: found.append(full)
            case S_IFDIR where skippedFolders.contains(name): skipped.append(full + "/")
            case S_IFDIR: try walk(full, into: &found, skipped: &skipped)
            default: break
            }
        }
    }

    /// Expands folders (when `recursive`) into the regular files under them, sorted; checks
    /// every path before anything is imported.
    public static func expand(_ paths: [String], recursive: Bool) throws -> [String] {
        var skipped: [String] = []
        return try expand(paths, recursive: recursive, skipped: &skipped)
    }

    /// As `expand`, reporting what a folder walk left out (`skippedFiles`, `skippedFolders`).
    public static func expand(_ paths: [String], recursive: Bool, skipped: inout [String]) throws -> [String] {
        var out: [String] = []
        for path in paths {
            if path == "-" { out.append(path); continue }
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
                throw Nu11Error(.notFound, "\(path): no such file", remedy: .advice(.checkPath), item: path)
            }
            if isDir.boolValue {
                guard recursive else {
                    throw Nu11Error(.invalidArgument, "\(path) is a folder", remedy: .importFolderRecursively, item: path)
                }
                var found: [String] = []
                try walk(path, into: &found, skipped: &skipped)
                out += found.sorted()
            } else {
                try checkRegularFile(path)
                out.append(path)
            }
        }
        return out
    }
}

/// Passes bytes on and reports how many went through (export progress).
struct CountingSink<Inner: ByteSink>: ByteSink {
    var inner: Inner
    let total: UInt64
    let report: ((UInt64, UInt64) throws -> Void)?
    var written: UInt64 = 0

    init(inner: Inner, total: UInt64, report: ((UInt64, UInt64) throws -> Void)?) {
        self.inner = inner
        self.total = total
        self.report = report
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        try inner.write(bytes)
        written += UInt64(bytes.count)
        try report?(written, total)
    }
}
