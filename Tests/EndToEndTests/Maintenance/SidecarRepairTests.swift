// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 56, attacked: the index rebuild must leave the recovery phrase covering the vault. A
/// repair never copies a recovery seal out of the folder (an old sidecar put back carries a
/// revoked phrase's seal): every row it adopts or re-seals gets a fresh seal to the current
/// phrase, in the index and in the item's sidecar. `check` verifies the sidecars and the album
/// name files, the repair rewrites what is missing or damaged — and never overwrites a name
/// file that this key store cannot open (it may be newer than the key store).
@Suite("the index rebuild and the sidecars: seals to the current phrase, checked and rewritten")
struct SidecarRepairTests {
    struct Small {
        let cli: CLI
        let oldPhrase: String
        let phrase: String
        /// The primary vault's items (sealed to the phrase), with their contents (nil: a note).
        let items: [(id: String, bytes: String?)]
        let album: String
    }

    static func phrase(in out: String) -> String? {
        let pattern = "[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}"
        return out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.range(of: "^" + pattern + "$", options: .regularExpression) != nil }
    }

    /// An album with an item, an item, a note and a Fade item; then a new phrase (`recovery
    /// setup`): the first one is revoked. `beforeSetup` runs while the first phrase holds.
    static func small(beforeSetup: (CLI) throws -> Void = { _ in }) throws -> Small {
        let cli = try CLI()
        let old = try cli.initWithPhrase()
        let album = try cli.run(["album", "create", "Trip"], pinStdin: true)
        #expect(album.code == 0, "\(album.stderr)")
        let a = try cli.importIDs([cli.file("a.txt", Array("alpha".utf8))])[0]
        let b = try cli.importIDs([cli.file("b.txt", Array("bravo".utf8))], extra: ["--album", "Trip"])[0]
        let note = try cli.runPinFD(["note", "add", "--title", "Groceries"], stdin: Data("milk, eggs".utf8))
        #expect(note.code == 0, "\(note.stderr)")
        _ = try cli.importIDs([cli.file("fading.txt", Array("fades".utf8))], extra: ["--fade", "30d"])
        try beforeSetup(cli)
        let setup = try cli.run(["recovery", "setup"], pinStdin: true)
        #expect(setup.code == 0, "\(setup.stderr)")
        let current = try #require(phrase(in: setup.out), "recovery setup printed no phrase: \(setup.out)")
        return Small(cli: cli, oldPhrase: old, phrase: current,
                     items: [(a, "alpha"), (b, "bravo"), (String(note.out.prefix(32)), nil)], album: String(album.out.prefix(32)))
    }

    static func loseIndex(_ cli: CLI) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cli.vault + "/index.sqlite" + suffix) }
    }

    /// The phrase covers the vault: the revoked phrase opens no seal of the index (the
    /// adversary's client, written from FORMAT.md), the current one opens each; every sidecar
    /// holds its row's seal; the key store lost, `recover` with the current phrase into a fresh
    /// key store brings every item back.
    static func provePhraseCovers(_ s: Small) throws {
        let cli = s.cli
        for (id, _) in s.items {
            let old = try cli.spawn("/usr/bin/python3", [SpliceTests.client, "phrase", "--vault", cli.vault, "--item", id],
                                    input: Data("\(s.oldPhrase)\n".utf8))
            #expect(!old.out.hasPrefix("opened"), "the revoked phrase opens \(id)'s recovery seal: \(old.out)")
            let current = try cli.spawn("/usr/bin/python3", [SpliceTests.client, "phrase", "--vault", cli.vault, "--item", id],
                                        input: Data("\(s.phrase)\n".utf8))
            #expect(current.out.hasPrefix("opened"), "the current phrase does not open \(id)'s recovery seal: \(current.out) \(current.stderr)")
        }
        // FORMAT.md §2.2: byte 7 = 1 and bytes 24..<116 = the seal, the index's own.
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            for i in sys.argv[3:]:
                row = db.execute("SELECT seal FROM recovery WHERE id = ?", (i,)).fetchone()
                b = open(sys.argv[2] + "/" + i + ".n11m", "rb").read()
                print(i, "same" if row and b[7] == 1 and b[24:116] == bytes(row[0]) else "differs")
            """
        let same = try cli.spawn("/usr/bin/python3", ["-c", script, cli.vault + "/index.sqlite", cli.vault + "/Meta"] + s.items.map(\.id))
        #expect(same.code == 0 && same.out.split(separator: "\n").allSatisfy { $0.hasSuffix(" same") } && same.out.split(separator: "\n").count == s.items.count,
                "a sidecar does not hold its row's recovery seal: \(same.out) \(same.stderr)")
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost-keystore-\(UUID().uuidString)")
        let recovered = try cli.recover(phrase: s.phrase, newPIN: "recovered pin 7")
        #expect(recovered.code == 0, "recover with the current phrase: \(recovered.out) \(recovered.stderr)")
        for (id, bytes) in s.items {
            let r = try cli.with("recovered pin 7", ["export", id, "-o", "-"])
            #expect(r.code == 0 && (bytes.map { r.stdout == Data($0.utf8) } ?? true), "\(id) is not recovered by the current phrase: \(r.stderr)")
        }
    }

    @Test("old sidecars put back after a recovery setup, the index lost: the repair seals every row to the current phrase, never the revoked phrase's seal")
    func oldSidecarsPutBack() throws {
        let s = try Self.small { cli in
            #expect(Program.run("/bin/cp", ["-a", cli.vault + "/Meta", cli.root + "/old-meta"]) == 0)
        }
        let cli = s.cli
        for name in try FileManager.default.contentsOfDirectory(atPath: cli.root + "/old-meta") where name.hasSuffix(".n11m") {
            try? FileManager.default.removeItem(atPath: cli.vault + "/Meta/" + name)
            try FileManager.default.copyItem(atPath: cli.root + "/old-meta/" + name, toPath: cli.vault + "/Meta/" + name)
        }
        Self.loseIndex(cli)
        let repaired = try cli.run(["check", "--repair", "--json"], pinStdin: true)
        #expect(repaired.code == 0, "check --repair: \(repaired.out) \(repaired.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: repaired.stdout) as? [String: Any], "\(repaired.out)")
        #expect((report["rebuilt"] as? [[String: Any]])?.count == 4 && (report["failures"] as? [Any])?.isEmpty == true,
                "a rebuild of 4 items: \(repaired.out)")
        let checked = try cli.run(["check"], pinStdin: true)
        #expect(checked.code == 0, "check after the repair: \(checked.out) \(checked.stderr)")
        try Self.provePhraseCovers(s)
    }

    @Test("album name files deleted and a sidecar damaged: check names each, check --repair rewrites them, and a later lost index comes back with every name")
    func sidecarsAndNameFilesChecked() throws {
        let s = try Self.small()
        let cli = s.cli
        let meta = cli.vault + "/Meta/"
        let before = try cli.run(["list"], pinStdin: true).out
        let albumsBefore = try cli.run(["album", "list"], pinStdin: true).out
        for name in try FileManager.default.contentsOfDirectory(atPath: meta) where name.hasSuffix(".n11a") {
            try FileManager.default.removeItem(atPath: meta + name)
        }
        let damagedPath = meta + s.items[0].id + ".n11m"
        var damaged = try Data(contentsOf: URL(fileURLWithPath: damagedPath))
        damaged[damaged.count - 40] ^= 0x01
        try damaged.write(to: URL(fileURLWithPath: damagedPath))
        let checked = try cli.run(["check"], pinStdin: true)
        #expect(checked.code == 5 && checked.out.contains(s.items[0].id) && checked.out.contains(s.album), "check: \(checked.out) \(checked.stderr)")
        let repaired = try cli.run(["check", "--repair"], pinStdin: true)
        #expect(repaired.code == 0, "check --repair: \(repaired.out) \(repaired.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: damagedPath)) != damaged, "the damaged sidecar was not rewritten")
        #expect(FileManager.default.fileExists(atPath: meta + s.album + ".n11a"), "the album's name file was not rewritten")
        let again = try cli.run(["check"], pinStdin: true)
        #expect(again.code == 0, "check after the repair: \(again.out) \(again.stderr)")
        Self.loseIndex(cli)
        #expect(try cli.run(["check", "--repair"], pinStdin: true).code == 0)
        #expect(try cli.run(["list"], pinStdin: true).out == before, "names lost in the rebuild")
        #expect(try cli.run(["album", "list"], pinStdin: true).out == albumsBefore, "album names lost in the rebuild")
        try Self.provePhraseCovers(s)
    }

    @Test("the index and all of Meta/ lost: rows rebuilt under made-up names get sidecars and fresh seals; the report counts them rebuilt, not damaged")
    func metaLost() throws {
        let s = try Self.small()
        let cli = s.cli
        try FileManager.default.removeItem(atPath: cli.vault + "/Meta")
        Self.loseIndex(cli)
        let repaired = try cli.run(["check", "--repair"], pinStdin: true)
        #expect(repaired.code == 0 && repaired.out.contains("recovered-"), "check --repair: \(repaired.out) \(repaired.stderr)")
        #expect(!repaired.out.contains("DAMAGED") && repaired.out.contains("4 sound") && repaired.out.contains("4 rebuilt"),
                "a sound rebuild is reported as damage: \(repaired.out)")
        let checked = try cli.run(["check"], pinStdin: true)
        #expect(checked.code == 0, "check after the repair: \(checked.out) \(checked.stderr)")
        let sidecars = try FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Meta").filter { $0.hasSuffix(".n11m") }
        #expect(sidecars.count == 4, "sidecars after the rebuild: \(sidecars)")
        try Self.provePhraseCovers(s)
    }

    @Test("an older key store (a copy from before a pin change) against the current folder: the repair leaves the album name files it cannot open, and says why")
    func olderKeyStoreLeavesNameFiles() throws {
        let cli = try CLI()
        try cli.initVault()
        let created = try cli.run(["album", "create", "Holiday"], pinStdin: true)
        #expect(created.code == 0)
        let album = String(created.out.prefix(32))
        let id = try cli.importIDs([cli.file("h.txt", Array("hotel".utf8))], extra: ["--album", "Holiday"])[0]
        let old = cli.root + "/old-keystore"
        #expect(Program.run("/bin/cp", ["-a", cli.keystore, old]) == 0)
        let change = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(cli.pin)\nnew pin 4321\n".utf8))
        #expect(change.code == 0, "\(change.stderr)")
        let nameFile = cli.vault + "/Meta/" + album + ".n11a"
        let name = try Data(contentsOf: URL(fileURLWithPath: nameFile))
        let r = try cli.spawn(CLI.binary, ["check", "--repair", "--keystore", old, "--pin-stdin"], input: Data("\(cli.pin)\n".utf8))
        #expect(try Data(contentsOf: URL(fileURLWithPath: nameFile)) == name, "the repair with an older key store overwrote the album's name file: \(r.out)")
        #expect(r.out.contains(album) && r.out.contains("older than the vault folder"), "the report does not say why the name file was left: \(r.out) \(r.stderr)")
        // The current key store brings the name back from the file that was left.
        let current = try cli.with("new pin 4321", ["check", "--repair"])
        #expect(current.code == 0, "\(current.out) \(current.stderr)")
        #expect(try cli.with("new pin 4321", ["album", "list"]).out.contains("Holiday"), "the album's name is lost")
        #expect(try cli.with("new pin 4321", ["export", id, "-o", "-"]).stdout == Data("hotel".utf8))
    }
}
