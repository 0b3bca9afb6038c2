// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The vault folder's `.stignore` (docs/FORMAT.md § 5.4, issue 60): what a Syncthing that shares
/// the folder keeps on this device — the index and its SQLite companions, indexes a repair set
/// aside, the lock, the backup marker, temp files — and nothing that must travel. The
/// two-Syncthing harness (SyncTests) proves the same with Syncthing itself; this test reads the
/// patterns as Syncthing does (glob, `/` anchors at the root, otherwise any level, `(?d)` a flag).
@Suite("the vault folder's .stignore")
struct SyncIgnoreTests {
    static let patterns = ["/index.sqlite*", "/.lock", "/CACHEDIR.TAG", "(?d).n11tmp-*"]

    /// The pattern lines of a .stignore (comments and blank lines left out).
    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { !$0.isEmpty && !$0.hasPrefix("//") }
    }

    /// Whether Syncthing's pattern ignores `relative` (a path inside the folder).
    static func ignores(_ pattern: String, _ relative: String) -> Bool {
        var glob = pattern
        if glob.hasPrefix("(?d)") { glob.removeFirst(4) }
        if glob.hasPrefix("/") { return fnmatch(String(glob.dropFirst()), relative, FNM_PATHNAME) == 0 }
        return relative.split(separator: "/").contains { fnmatch(glob, String($0), FNM_PATHNAME) == 0 }
    }

    static func files(under root: String) -> [String] {
        (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter {
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + $0, isDirectory: &isDir) && !isDir.boolValue
        }
    }

    @Test("init writes it 0600 with the device-local patterns; every file that must travel (items, sidecars, album names, notes; thumbnails, journal segments, recovery data, quarantine by name) is outside them, every device-local one inside")
    func initWritesIt() throws {
        let cli = try CLI()
        try cli.initVault()
        let path = cli.vault + "/.stignore"
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        #expect((attributes[.posixPermissions] as? Int) == 0o600, "mode \(String(describing: attributes[.posixPermissions]))")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(Self.lines(text) == Self.patterns, "the .stignore holds: \(text)")

        let album = try cli.run(["album", "create", "Trips"], pinStdin: true)
        #expect(album.code == 0, "album create: \(album.stderr)")
        _ = try cli.importIDs([cli.file("a.bin", Array(repeating: 7, count: 3000))], extra: ["--album", "Trips"])
        _ = try cli.importIDs([cli.file("b.bin", [1, 2, 3])])
        let note = try cli.runPinFD(["note", "add", "--title", "n"], stdin: Data("body\n".utf8))
        #expect(note.code == 0, "note add: \(note.stderr)")
        let files = Self.files(under: cli.vault)
        let ignored = files.filter { rel in Self.patterns.contains { Self.ignores($0, rel) } }
        #expect(Set(ignored) == Set([".lock", "index.sqlite"]).union(files.contains("CACHEDIR.TAG") ? ["CACHEDIR.TAG"] : []),
                "ignored: \(ignored.sorted()) of \(files.sorted())")
        let travelling = files.filter { !ignored.contains($0) && $0 != ".stignore" }
        #expect(travelling.contains { $0.hasPrefix("Vault/Albums/") && $0.hasSuffix(".n11") }, "\(travelling)")
        #expect(travelling.contains { $0.hasPrefix("Vault/Photos/") && $0.hasSuffix(".n11") }, "\(travelling)")
        #expect(travelling.contains { $0.hasPrefix("Meta/") && $0.hasSuffix(".n11m") }, "\(travelling)")
        #expect(travelling.contains { $0.hasPrefix("Meta/") && $0.hasSuffix(".n11a") }, "\(travelling)")
        #expect(travelling.contains { $0.hasPrefix("Notes/vault_") && $0.hasSuffix(".n11note") }, "\(travelling)")
        // The device-local names the patterns must cover, wherever they occur.
        for local in ["index.sqlite-wal", "index.sqlite-shm", "index.sqlite-journal", "index.sqlite.damaged-1700000000",
                      "index.sqlite.lost-1700000000-wal", ".lock", "CACHEDIR.TAG", ".n11tmp-0a1b", "Vault/Photos/.n11tmp-0a1b",
                      "Vault/Albums/0123456789abcdef0123456789abcdef/.n11tmp-x", "Meta/.n11tmp-y"] {
            #expect(Self.patterns.contains { Self.ignores($0, local) }, "\(local) is not ignored")
        }
        // ...and never a name that must travel, at the root or below.
        for travels in ["Vault/Photos/0123456789abcdef0123456789abcdef.n11", "Meta/0123456789abcdef0123456789abcdef.n11m",
                        "Notes/vault_0123456789abcdef0123456789abcdef.n11note", "Thumbnails/0123456789abcdef0123456789abcdef.n11thumb",
                        "Journal/0123456789abcdef0123456789abcdef-0000000000000001.n11j", "recovery.n11r",
                        "Quarantine/0123456789abcdef0123456789abcdef.n11", "Fade/0123456789abcdef0123456789abcdef.n11",
                        "Backup/0123456789abcdef0123456789abcdef.n11", "Vault/Photos/index.sqlite", "Meta/.lock"] {
            #expect(!Self.patterns.contains { Self.ignores($0, travels) }, "\(travels) would not sync")
        }
    }

    @Test("a vault that lacks it gets it again at the next unlock (0600, no temp file left); the owner's own .stignore is kept")
    func openingWritesItOnce() throws {
        let cli = try CLI()
        try cli.initVault()
        let path = cli.vault + "/.stignore"
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        let status = try cli.run(["status"])
        #expect(status.code == 0, "status: \(status.stderr)")
        _ = try cli.listJSON()
        #expect(FileManager.default.fileExists(atPath: path), "the unlock did not write the .stignore again")
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o600)
        #expect(Self.lines(try String(contentsOfFile: path, encoding: .utf8)) == Self.patterns)
        #expect(!Self.files(under: cli.vault).contains { $0.contains(".n11tmp-") }, "a temp file was left")

        let own = "// mine\n/index.sqlite*\n/.lock\n/CACHEDIR.TAG\n(?d).n11tmp-*\n/Holiday-notes.txt\n"
        try Data(own.utf8).write(to: URL(fileURLWithPath: path))
        _ = try cli.listJSON()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == own, "the owner's .stignore was replaced")
    }
}
