// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 56: one damaged file must not lock everything. The index is a cache: overwrite its
/// first 4 KiB or delete it, and `check --repair` brings every item back from the vault folder
/// (each item's sidecar, `Meta/`), with its name, dates, album and Live Photo link.
@Suite("the index rebuilds itself")
struct IndexRebuildTests {
    enum Damage: String, CaseIterable, Sendable { case overwritten, deleted }

    /// A vault of 1,000 items with albums (one empty), a note, a Fade item and a Live Photo.
    static func populated() throws -> CLI { try populatedWithPhrase().cli }

    /// The same, with its recovery phrase (the spec-only decrypter's tests use both credentials).
    static func populatedWithPhrase() throws -> (cli: CLI, phrase: String) {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let folder = cli.root + "/many"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for i in 0..<995 {
            try Data("file number \(i) \(String(repeating: "x", count: i % 97))".utf8).write(to: URL(fileURLWithPath: folder + "/f\(i).txt"))
        }
        #expect(try cli.run(["import", "-r", folder], pinStdin: true).code == 0)
        #expect(try cli.run(["album", "create", "Trip"], pinStdin: true).code == 0)
        #expect(try cli.run(["album", "create", "Empty one"], pinStdin: true).code == 0)
        _ = try cli.importIDs([cli.file("in-album.txt", Array("in the album".utf8))], extra: ["--album", "Trip"])
        _ = try cli.importIDs([cli.file("fading.txt", Array("fades".utf8))], extra: ["--fade", "30d"])
        #expect(try cli.runPinFD(["note", "add", "--title", "Groceries"], stdin: Data("milk, eggs".utf8)).code == 0)
        let roll = cli.root + "/roll"
        try FileManager.default.createDirectory(atPath: roll, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: try VideoTests.iphoneClip(cli), toPath: roll + "/IMG_0001.MOV")
        // A Live Photo's still is a HEIC or JPEG (`LivePhotos.stillExtensions`): a PNG would stay apart.
        try PhotoFixtures.run(cli, "convert", ["-size", "240x320", "gradient:teal-white", roll + "/IMG_0001.JPG"])
        #expect(try cli.run(["import", "-r", roll], pinStdin: true).code == 0)
        #expect(try cli.listJSON(["--all"]).contains { $0["name"] as? String == "IMG_0001.JPG" && $0["motion"] is String },
                "IMG_0001.JPG is not linked to its motion: the vault has no Live Photo")
        return (cli, phrase)
    }

    /// What a user sees: every item's JSON (names, dates, album, link) and the albums.
    static func listing(_ cli: CLI) throws -> (items: [String], albums: String, notes: String) {
        let items = try cli.listJSON(["--all"]).map { item -> String in
            let keys = item.keys.sorted()
            return keys.map { "\($0)=\(item[$0].map { "\($0)" } ?? "nil")" }.joined(separator: " ")
        }.sorted()
        return (items, try cli.run(["album", "list"], pinStdin: true).out, try cli.run(["note", "list"], pinStdin: true).out)
    }

    static func exported(_ cli: CLI, _ name: String) throws -> [String: Data] {
        let dir = cli.root + "/" + name
        let r = try cli.run(["export", "--all", "-o", dir], pinStdin: true)
        #expect(r.code == 0, "export --all: \(r.stderr)")
        var out: [String: Data] = [:]
        for file in FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? [] {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir + "/" + file, isDirectory: &isDir), !isDir.boolValue {
                out[file] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + file))
            }
        }
        return out
    }

    @Test("index.sqlite overwritten (first 4 KiB) or deleted: check --repair brings back every item with its name, dates, album and link; export --all is byte-identical",
          arguments: Damage.allCases)
    func rebuild(damage: Damage) throws {
        let cli = try Self.populated()
        let before = try Self.listing(cli)
        #expect(before.items.count >= 998, "\(before.items.count) items listed")
        let exportBefore = try Self.exported(cli, "before")
        let index = cli.vault + "/index.sqlite"
        switch damage {
        case .overwritten:
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: index))
            try handle.write(contentsOf: Data(repeating: 0x41, count: 4096))
            try handle.close()
        case .deleted:
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: index + suffix) }
        }
        // Every command says what happened and what to run, in one line.
        let locked = try cli.run(["list"], pinStdin: true)
        #expect(locked.code != 0 && locked.stderr.contains("check --repair"), "\(locked.stderr)")
        let repaired = try cli.run(["check", "--repair"], pinStdin: true)
        #expect(repaired.code == 0, "check --repair: \(repaired.stderr) \(repaired.out.suffix(600))")
        #expect(repaired.stderr.contains("rebuilding it from the vault folder"), "\(repaired.stderr)")
        let after = try Self.listing(cli)
        #expect(after.items == before.items, "the rebuilt index lists other items: \(Set(before.items).subtracting(after.items).prefix(3))")
        #expect(after.albums == before.albums, "albums: \(before.albums) → \(after.albums)")
        #expect(after.notes == before.notes, "notes: \(before.notes) → \(after.notes)")
        #expect(try Self.exported(cli, "after") == exportBefore, "export --all differs after the rebuild")
        #expect(try cli.run(["check"], pinStdin: true).code == 0, "check after the rebuild")
        // Nothing was deleted: the damaged file is kept beside the new one.
        if damage == .overwritten {
            let kept = try FileManager.default.contentsOfDirectory(atPath: cli.vault).filter { $0.hasPrefix("index.sqlite.damaged-") }
            #expect(!kept.isEmpty, "the damaged index was not kept")
        }
    }

    @Test("a sidecar lost, or another item's put in its place: the item comes back under a made-up name, and the report says what was not recovered")
    func sidecarMissing() throws {
        let cli = try CLI()
        try cli.initVault()
        let ids = try cli.importIDs([cli.file("one.txt", Array("first".utf8)), cli.file("two.txt", Array("second".utf8)),
                                     cli.file("three.txt", Array("third".utf8))])
        let meta = cli.vault + "/Meta/"
        try FileManager.default.removeItem(atPath: meta + ids[0] + ".n11m")
        // Two's sidecar replaced by three's: it opens for neither under two's key.
        try FileManager.default.removeItem(atPath: meta + ids[1] + ".n11m")
        try FileManager.default.copyItem(atPath: meta + ids[2] + ".n11m", toPath: meta + ids[1] + ".n11m")
        try FileManager.default.removeItem(atPath: cli.vault + "/index.sqlite")
        let repaired = try cli.run(["check", "--repair"], pinStdin: true)
        #expect(repaired.code == 0, "\(repaired.stderr)")
        #expect(repaired.out.contains("not recovered: its name"), "\(repaired.out)")
        let listed = try cli.run(["list"], pinStdin: true).out
        #expect(listed.contains("recovered-\(ids[0].prefix(8))") && listed.contains("recovered-\(ids[1].prefix(8))") && listed.contains("three.txt"),
                "\(listed)")
        #expect(!listed.contains("one.txt") && !listed.contains("two.txt"))
        #expect(try cli.run(["export", ids[1], "-o", "-"], pinStdin: true).stdout == Data("second".utf8))
    }

    @Test("a sound index is never set aside, and a folder that is not a vault folder never gets one")
    func soundIndexKept() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("kept.txt", Array("kept".utf8))])[0]
        let repaired = try cli.run(["check", "--repair"], pinStdin: true)
        #expect(repaired.code == 0 && !repaired.stderr.contains("set aside"), "\(repaired.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.vault).allSatisfy { !$0.contains("damaged") })
        let empty = cli.root + "/not-a-vault"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let r = try cli.run(["check", "--repair", "--vault", empty], pinStdin: true)
        #expect(r.code != 0 && !FileManager.default.fileExists(atPath: empty + "/index.sqlite"), "\(r.stderr)")
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data("kept".utf8))
    }
}

extension IndexRebuildTests {
    @Test("the key store lost and the index damaged: recover with the phrase brings back every item with its name and album; the same phrase goes on working")
    func recoverWithoutIndex() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        #expect(try cli.run(["album", "create", "Trip"], pinStdin: true).code == 0)
        let a = try cli.importIDs([cli.file("a.txt", Array("alpha".utf8))])[0]
        let b = try cli.importIDs([cli.file("b.txt", Array("bravo".utf8))], extra: ["--album", "Trip"])[0]
        let before = try cli.run(["list"], pinStdin: true).out
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: cli.vault + "/index.sqlite"))
        try handle.write(contentsOf: Data(repeating: 0, count: 4096))
        try handle.close()
        let r = try cli.recover(phrase: phrase, newPIN: "recovered pin")
        #expect(r.code == 0 && r.out.contains("rebuilt from the folder"), "\(r.out) \(r.stderr)")
        #expect(try cli.with("recovered pin", ["list"]).out == before, "names or albums differ")
        #expect(try cli.with("recovered pin", ["export", a, "-o", "-"]).stdout == Data("alpha".utf8))
        #expect(try cli.with("recovered pin", ["export", b, "-o", "-"]).stdout == Data("bravo".utf8))
        #expect(try cli.with("recovered pin", ["check"]).code == 0)
        // Added after the recovery, then the key store lost again: the same phrase covers it.
        let c = String(try cli.with("recovered pin", ["import", cli.file("c.txt", Array("charlie".utf8))]).out.prefix(32))
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost2")
        let again = try cli.recover(phrase: phrase, newPIN: "second pin")
        #expect(again.code == 0, "\(again.stderr)")
        #expect(try cli.with("second pin", ["export", c, "-o", "-"]).stdout == Data("charlie".utf8))
    }
}

extension IndexRebuildTests {
    @Test("a vault from before sidecars (no Meta/, migration v5 not done): the next unlock writes every sidecar and album name file; then a lost index comes back whole")
    func backfill() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["album", "create", "Old album"], pinStdin: true).code == 0)
        _ = try cli.importIDs([cli.file("old1.txt", Array("one".utf8)), cli.file("old2.txt", Array("two".utf8))], extra: ["--album", "Old album"])
        let before = try cli.run(["list"], pinStdin: true).out
        try FileManager.default.removeItem(atPath: cli.vault + "/Meta")
        let sql = try cli.spawn("/usr/bin/python3", ["-c", "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); db.execute('DELETE FROM sidecars'); db.commit()",
                                                      cli.vault + "/index.sqlite"])
        #expect(sql.code == 0, "\(sql.stderr)")
        #expect(try cli.run(["list"], pinStdin: true).out == before)
        let meta = try FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Meta")
        #expect(meta.filter { $0.hasSuffix(".n11m") }.count == 2 && meta.filter { $0.hasSuffix(".n11a") }.count == 1, "\(meta)")
        try FileManager.default.removeItem(atPath: cli.vault + "/index.sqlite")
        #expect(try cli.run(["check", "--repair"], pinStdin: true).code == 0)
        #expect(try cli.run(["list"], pinStdin: true).out == before)
    }
}

extension IndexRebuildTests {
    @Test("an index from before a rekey put back (a sync peer's old copy): check --repair rebuilds its entries from the sidecars, quarantines nothing, and every item lists and exports")
    func oldIndexPutBack() throws {
        let cli = try CLI()
        try cli.initVault()
        let ids = try cli.importIDs([cli.file("a.txt", Array("alpha".utf8)), cli.file("b.txt", Array("bravo".utf8))])
        let oldIndex = try Data(contentsOf: URL(fileURLWithPath: cli.vault + "/index.sqlite"))
        #expect(try cli.run(["rekey"], pinStdin: true).code == 0)
        let z = try cli.importIDs([cli.file("z.txt", Array("zulu".utf8))])[0]
        let before = try cli.run(["list"], pinStdin: true).out
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cli.vault + "/index.sqlite" + suffix) }
        try oldIndex.write(to: URL(fileURLWithPath: cli.vault + "/index.sqlite"))
        let repaired = try cli.run(["check", "--repair"], pinStdin: true)
        #expect(repaired.code == 0, "\(repaired.out) \(repaired.stderr)")
        #expect(!repaired.out.contains("quarantined") && !FileManager.default.fileExists(atPath: cli.vault + "/Quarantine/\(ids[0]).n11"), "\(repaired.out)")
        #expect(try cli.run(["list"], pinStdin: true).out == before, "the listing differs after the repair")
        for (id, bytes) in zip(ids + [z], ["alpha", "bravo", "zulu"]) {
            #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data(bytes.utf8))
        }
    }

    @Test("an index set aside by a repair goes at the next deletion: it held the deleted item's name and recovery seal")
    func setAsideIndexShredded() throws {
        let cli = try CLI()
        _ = try cli.initWithPhrase()
        let ids = try cli.importIDs([cli.file("keep.txt", Array("keep".utf8)), cli.file("secret-name.txt", Array("gone".utf8))])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: cli.vault + "/index.sqlite"))
        try handle.write(contentsOf: Data(repeating: 0x42, count: 16))
        try handle.close()
        #expect(try cli.run(["check", "--repair"], pinStdin: true).code == 0)
        let aside = { try FileManager.default.contentsOfDirectory(atPath: cli.vault).filter { $0.hasPrefix("index.sqlite.damaged-") } }
        #expect(try !aside().isEmpty, "no index was set aside")
        #expect(try cli.run(["delete", "--secure", ids[1]], pinStdin: true).code == 0)
        #expect(try aside().isEmpty, "the set-aside index outlived a deletion")
        #expect(try cli.run(["export", ids[0], "-o", "-"], pinStdin: true).stdout == Data("keep".utf8))
    }

    /// The adversary review: an index whose tables were altered (renamed by hand, or a page
    /// that SQLite reads but that no longer holds the schema) was an I/O error ("index error:
    /// no such table: item", exit 74, hint `check`) for every command, `check --repair` included.
    @Test("an index whose table was renamed or dropped: every command names the repair, check --repair sets it aside and rebuilds every item")
    func alteredSchema() throws {
        let sqlite = try #require(PhotoFixtures.tool("sqlite3"), "sqlite3 is not installed")
        for alteration in ["ALTER TABLE item RENAME TO item_old", "DROP TABLE recovery", "ALTER TABLE album RENAME COLUMN name TO old_name", "a folder"] {
            let cli = try CLI()
            try cli.initVault()
            let ids = try cli.importIDs([cli.file("a.txt", Array("alpha".utf8)), cli.file("b.txt", Array("bravo".utf8))])
            #expect(try cli.run(["album", "create", "Trip"], pinStdin: true).code == 0)
            if alteration == "a folder" {
                // A folder where the index belongs said "disk I/O error … free some disk space".
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cli.vault + "/index.sqlite" + suffix) }
                try FileManager.default.createDirectory(atPath: cli.vault + "/index.sqlite", withIntermediateDirectories: false)
            } else {
                let altered = try cli.spawn(sqlite, [cli.vault + "/index.sqlite", alteration])
                #expect(altered.code == 0, "\(alteration): \(altered.stderr)")
            }
            for args in [["list"], ["check"]] {
                let r = try cli.run(args, pinStdin: true)
                #expect(r.code == 5 && r.stderr.contains("check --repair") && !r.stderr.contains("index error"), "\(alteration), \(args[0]): exit \(r.code) \(r.stderr)")
            }
            let repaired = try cli.run(["check", "--repair"], pinStdin: true)
            #expect(repaired.code == 0, "\(alteration): check --repair: \(repaired.out) \(repaired.stderr)")
            for (id, text) in zip(ids, ["alpha", "bravo"]) {
                #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data(text.utf8), "\(alteration): \(text)")
            }
            #expect(try cli.run(["album", "list"], pinStdin: true).out.contains("Trip"), "\(alteration): the album")
        }
    }
}
