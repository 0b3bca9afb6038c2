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
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
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

    /// The § 5.4 patterns, anchored where the vault folder sits in the Syncthing folder; those
    /// the root's `.stignore` (Syncthing reads no other, and an `#include`d file's patterns are
    /// relative to the root too) does not hold, line for line.
    static func missing(root: String, relative: String) -> [String] {
        let prefix = relative.isEmpty ? "" : "/" + relative
        let wanted = ["\(prefix)/index.sqlite*", "\(prefix)/.lock", "\(prefix)/CACHEDIR.TAG", "(?d).n11tmp-*"]
        var have = Set<String>()
        var pending = [root + "/.stignore"]
        var read = Set<String>()
        while let file = pending.popLast(), read.insert(file).inserted, read.count <= 16 {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
                if line.hasPrefix("#include ") {
                    let name = line.dropFirst(9).trimmingCharacters(in: .whitespaces)
                    pending.append(name.hasPrefix("/") ? root + name : URL(fileURLWithPath: file).deletingLastPathComponent().path + "/" + name)
                } else {
                    have.insert(line)
                }
            }
        }
        return wanted.filter { !have.contains($0) }
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

    /// The folders of a config, outside its `<defaults>` (the template for new folders).
    static func folders(in xml: String, home: String) -> [Folder] {
        var text = xml
        if let start = text.range(of: "<defaults>"), let end = text.range(of: "</defaults>", range: start.upperBound..<text.endIndex) {
            text.removeSubrange(start.lowerBound..<end.upperBound)
        }
        var out: [Folder] = []
        var cursor = text.startIndex
        while let open = text.range(of: "<folder ", range: cursor..<text.endIndex),
              let tagEnd = text.range(of: ">", range: open.upperBound..<text.endIndex) {
            let attributes = String(text[open.upperBound..<tagEnd.lowerBound])
            let close = text.range(of: "</folder>", range: tagEnd.upperBound..<text.endIndex)
            let body = close.map { String(text[tagEnd.upperBound..<$0.lowerBound]) } ?? ""
            cursor = close?.upperBound ?? tagEnd.upperBound
            guard var path = attribute("path", in: attributes), !path.isEmpty else { continue }
            if path == "~" { path = home } else if path.hasPrefix("~/") { path = home + path.dropFirst(1) }
            path = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
            var folder = Folder(path: path, label: attribute("label", in: attributes))
            if let v = body.range(of: "<versioning"), let vEnd = body.range(of: ">", range: v.upperBound..<body.endIndex) {
                let type = attribute("type", in: String(body[v.upperBound..<vEnd.lowerBound]))
                folder.versioning = (type?.isEmpty ?? true) ? nil : type
                folder.versionsPath = element("fsPath", in: String(body[vEnd.upperBound...]))
                    ?? param("versionsPath", in: String(body[vEnd.upperBound...]))
            }
            out.append(folder)
        }
        return out
    }

    static func attribute(_ name: String, in attributes: String) -> String? {
        guard let start = attributes.range(of: " \(name)=\"") ?? (attributes.hasPrefix("\(name)=\"") ? attributes.range(of: "\(name)=\"") : nil),
              let end = attributes.range(of: "\"", range: start.upperBound..<attributes.endIndex) else { return nil }
        return unescaped(String(attributes[start.upperBound..<end.lowerBound]))
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
