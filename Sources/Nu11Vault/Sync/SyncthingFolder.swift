// SPDX-License-Identifier: GPL-3.0-or-later
// Where the vault folder sits in a Syncthing folder, read from the files Syncthing keeps: its
// config (the folder's path, label and file versioning) and the folder's own markers (`.stfolder`,
// `.stignore`, `.stversions`). Issue 60: `status` says when Syncthing keeps old copies of the
// vault's files (a deleted item's files among them), and when the index would sync. Read only;
// nothing here talks to Syncthing (no network, no API key).
import Foundation

public struct SyncthingFolder: Sendable, Equatable {
    /// The Syncthing folder's root: the vault folder or a folder above it.
    public var root: String
    /// The folder's label in Syncthing's config (nil: not found in a config; found by its marker).
    public var label: String?
    /// The config's file versioning type ("simple", "staggered", "trashcan", "external"); nil:
    /// none, or no config found.
    public var versioning: String?
    /// Where Syncthing keeps the old copies: the versioning's own path, else `<root>/.stversions`.
    public var versionsPath: String
    /// Files kept there now under the vault folder's place (at most `countLimit`).
    public var keptVersions: Int
    /// The lines the root's `.stignore` lacks for this vault's device-local files (docs/FORMAT.md
    /// § 5.4), anchored at the vault folder's place in the Syncthing folder.
    public var missingIgnores: [String]

    /// Counting kept versions stops here: enough to say "some" or "many".
    public static let countLimit = 100_000

    /// Whether old copies of the vault's files are, or will be, kept.
    public var keepsOldCopies: Bool { versioning != nil || keptVersions > 0 }

    /// The Syncthing folder holding `vault` (an absolute path), from the first of Syncthing's
    /// config files that has a folder at or above it, else from a `.stfolder` marker at or above it.
    public static func find(vault: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> SyncthingFolder? {
        let vaultPath = URL(fileURLWithPath: vault).standardizedFileURL.resolvingSymlinksInPath().path
        let home = environment["HOME"] ?? NSHomeDirectory()
        var best: SyncthingConfig.Folder?
        for file in SyncthingConfig.candidates(environment: environment, home: home) {
            guard let text = readCapped(file, limit: SyncthingConfig.maxBytes) else { continue }
            for folder in SyncthingConfig.folders(in: text, home: home) where contains(folder.path, vaultPath) {
                if folder.path.count > (best?.path.count ?? -1) { best = folder }
            }
            if best != nil { break }
        }
        let root: String
        if let best { root = best.path } else if let marked = markedRoot(above: vaultPath) { root = marked } else { return nil }
        let relative = vaultPath == root ? "" : String(vaultPath.dropFirst(root.count + (root == "/" ? 0 : 1)))
        var versionsPath = root + "/.stversions"
        if let path = best?.versionsPath, !path.isEmpty { versionsPath = path.hasPrefix("/") ? path : root + "/" + path }
        return SyncthingFolder(root: root, label: best?.label, versioning: best?.versioning, versionsPath: versionsPath,
                               keptVersions: count(relative.isEmpty ? versionsPath : versionsPath + "/" + relative),
                               missingIgnores: missing(root: root, relative: relative))
    }

    static func contains(_ folder: String, _ path: String) -> Bool {
        folder == path || folder == "/" || path.hasPrefix(folder + "/")
    }

    static func markedRoot(above path: String) -> String? {
        var dir = URL(fileURLWithPath: path)
        while true {
            if FileManager.default.fileExists(atPath: dir.path + "/.stfolder") { return dir.path }
            guard dir.path != "/" else { return nil }
            dir.deleteLastPathComponent()
        }
    }

    static func count(_ path: String) -> Int {
        guard let walk = FileManager.default.enumerator(atPath: path) else { return 0 }
        var n = 0
        var visited = 0
        // Bounded by entries visited too, not only files counted: a folder of folders (or of
        // links that lead back) ends the walk as surely as many files do.
        while let next = walk.nextObject() as? String, n < countLimit, visited < 2 * countLimit {
            visited += 1
            var st = stat()
            if lstat(path + "/" + next, &st) == 0, st.st_mode & S_IFMT == S_IFREG { n += 1 }
        }
        return n
    }

    /// An ignore file or config larger than this is not read (a real one is a few KiB): a file
    /// planted to be huge costs `status` nothing.
    static let maxIgnoreBytes = 256 << 10

    /// The § 5.4 patterns, anchored where the vault folder sits in the Syncthing folder (its
    /// name's glob characters escaped, as Syncthing would otherwise read `[2024]` as a class);
    /// those the root's `.stignore` (Syncthing reads no other, and an `#include`d file's patterns
    /// are relative to the root too) does not hold, line for line — or holds only after a
    /// negation (`!…`), which Syncthing would meet first: such a line is counted as missing.
    static func missing(root: String, relative: String) -> [String] {
        let prefix = relative.isEmpty ? "" : "/" + escapedGlob(relative)
        let wanted = ["\(prefix)/index.sqlite*", "\(prefix)/.lock", "\(prefix)/CACHEDIR.TAG", "(?d).n11tmp-*"]
        var have = Set<String>()
        var negated = false
        var lines: [String] = []
        var read = Set<String>()
        // Includes expanded in place, as Syncthing reads them, at most 16 files, each within the root.
        func expand(_ file: String) {
            guard read.count < 16, read.insert(file).inserted, let text = readCapped(file, limit: maxIgnoreBytes) else { return }
            for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
                guard line.hasPrefix("#include ") else { lines.append(line); continue }
                let name = line.dropFirst(9).trimmingCharacters(in: .whitespaces)
                let path = URL(fileURLWithPath: name.hasPrefix("/") ? root + name : URL(fileURLWithPath: file).deletingLastPathComponent().path + "/" + name)
                    .standardizedFileURL.resolvingSymlinksInPath().path
                if contains(root, path) && path != root { expand(path) }
            }
        }
        expand(root + "/.stignore")
        for line in lines {
            var body = Substring(line)
            while body.hasPrefix("(?d)") || body.hasPrefix("(?i)") { body = body.dropFirst(4) }
            if body.hasPrefix("!") { negated = true; continue }
            if !negated { have.insert(line) }
        }
        return wanted.filter { !have.contains($0) }
    }

    /// `name` with Syncthing's glob characters escaped (`\` is its escape on Linux).
    static func escapedGlob(_ name: String) -> String {
        var out = ""
        for ch in name {
            if "*?[]{}\\!".contains(ch) { out.append("\\") }
            out.append(ch)
        }
        return out
    }

    /// The file's text when it is a regular file (followed through links) of at most `limit`
    /// bytes; nil otherwise. Opened without blocking (a FIFO or device named here is not waited on).
    static func readCapped(_ path: String, limit: Int) -> String? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size <= limit else { return nil }
        let size = Int(st.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var got = 0
        while got < size {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress.map { $0 + got }, size - got) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            got += n
        }
        return String(decoding: bytes.prefix(got), as: UTF8.self)
    }
}

/// Syncthing's `config.xml`: only what `SyncthingFolder` needs, read without an XML library (the
/// file is Syncthing's own, written by it; a config it cannot read is as if absent).
enum SyncthingConfig {
    struct Folder: Equatable {
        var path: String
        var label: String?
        var versioning: String?
        var versionsPath: String?
    }

    /// Where Syncthing keeps its config: `STHOMEDIR`/`STCONFDIR` when set, then the state folder
    /// (Syncthing 1.27 and later), then the config folder (earlier versions, Debian 12's 1.19).
    static func candidates(environment: [String: String], home: String) -> [String] {
        var dirs: [String] = []
        for key in ["STHOMEDIR", "STCONFDIR"] { if let dir = environment[key], !dir.isEmpty { dirs.append(dir) } }
        dirs.append((environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/state") + "/syncthing")
        dirs.append((environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config") + "/syncthing")
        return dirs.map { $0 + "/config.xml" }
    }

    /// A config larger than this is not read (Syncthing's own are a few KiB to a few hundred).
    static let maxBytes = 4 << 20

    /// The folders of a config, outside its `<defaults>` (the template for new folders) and its
    /// comments.
    static func folders(in xml: String, home: String) -> [Folder] {
        var text = xml
        while let start = text.range(of: "<!--") {
            let end = text.range(of: "-->", range: start.upperBound..<text.endIndex)?.upperBound ?? text.endIndex
            text.removeSubrange(start.lowerBound..<end)
        }
        if let start = text.range(of: "<defaults>"), let end = text.range(of: "</defaults>", range: start.upperBound..<text.endIndex) {
            text.removeSubrange(start.lowerBound..<end.upperBound)
        }
        var out: [Folder] = []
        var cursor = text.startIndex
        while let open = tag("folder", in: text, from: cursor),
              let tagEnd = text.range(of: ">", range: open.upperBound..<text.endIndex) {
            let attributes = String(text[open.upperBound..<tagEnd.lowerBound])
            let close = text.range(of: "</folder>", range: tagEnd.upperBound..<text.endIndex)
            let body = close.map { String(text[tagEnd.upperBound..<$0.lowerBound]) } ?? ""
            cursor = close?.upperBound ?? tagEnd.upperBound
            guard var path = attribute("path", in: attributes), !path.isEmpty else { continue }
            if path == "~" { path = home } else if path.hasPrefix("~/") { path = home + path.dropFirst(1) }
            path = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
            var folder = Folder(path: path, label: attribute("label", in: attributes))
            // The last <versioning> counts, as for Syncthing's own reader (a later element of one
            // name replaces an earlier one).
            var vCursor = body.startIndex
            while let v = tag("versioning", in: body, from: vCursor), let vEnd = body.range(of: ">", range: v.upperBound..<body.endIndex) {
                let type = attribute("type", in: String(body[v.upperBound..<vEnd.lowerBound]))
                let rest = String(body[vEnd.upperBound...])
                folder.versioning = (type?.isEmpty ?? true) ? nil : type
                folder.versionsPath = element("fsPath", in: rest) ?? param("versionsPath", in: rest)
                vCursor = vEnd.upperBound
            }
            out.append(folder)
        }
        return out
    }

    /// Where `<name` starts an element (followed by white space, `>` or `/`), from `from`.
    static func tag(_ name: String, in text: String, from: String.Index) -> Range<String.Index>? {
        var cursor = from
        while let r = text.range(of: "<" + name, range: cursor..<text.endIndex) {
            guard r.upperBound < text.endIndex else { return nil }
            let next = text[r.upperBound]
            if next.isWhitespace || next == ">" || next == "/" { return r }
            cursor = r.upperBound
        }
        return nil
    }

    /// An attribute's value: `name`, optional white space, `=`, optional white space, a value in
    /// double or single quotes; after white space (or at the start).
    static func attribute(_ name: String, in attributes: String) -> String? {
        let chars = Array(attributes)
        let key = Array(name)
        var i = 0
        while i + key.count <= chars.count {
            let boundary = i == 0 || chars[i - 1].isWhitespace
            if boundary && Array(chars[i..<(i + key.count)]) == key {
                var j = i + key.count
                while j < chars.count && chars[j].isWhitespace { j += 1 }
                if j < chars.count && chars[j] == "=" {
                    j += 1
                    while j < chars.count && chars[j].isWhitespace { j += 1 }
                    if j < chars.count, chars[j] == "\"" || chars[j] == "'" {
                        let quote = chars[j]
                        if let end = chars[(j + 1)...].firstIndex(of: quote) { return unescaped(String(chars[(j + 1)..<end])) }
                        return nil
                    }
                }
            }
            i += 1
        }
        return nil
    }

    static func element(_ name: String, in body: String) -> String? {
        guard let start = body.range(of: "<\(name)>"), let end = body.range(of: "</\(name)>", range: start.upperBound..<body.endIndex),
              end.lowerBound <= (body.range(of: "</versioning>")?.lowerBound ?? body.endIndex) else { return nil }
        let value = unescaped(String(body[start.upperBound..<end.lowerBound]))
        return value.isEmpty ? nil : value
    }

    /// `<param key="NAME" val="…">` (older configs keep the versions path there).
    static func param(_ key: String, in body: String) -> String? {
        guard let start = body.range(of: "<param key=\"\(key)\" val=\""),
              let end = body.range(of: "\"", range: start.upperBound..<body.endIndex) else { return nil }
        let value = unescaped(String(body[start.upperBound..<end.lowerBound]))
        return value.isEmpty ? nil : value
    }

    static func unescaped(_ s: String) -> String {
        guard s.contains("&") else { return s }
        var out = s
        for (entity, char) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&#39;", "'"), ("&#34;", "\"")] {
            out = out.replacingOccurrences(of: entity, with: char)
        }
        return out.replacingOccurrences(of: "&amp;", with: "&")
    }
}
