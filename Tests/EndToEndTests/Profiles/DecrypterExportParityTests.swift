// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 56, "done when": the spec-only decrypter (`tools/nu11vlt_decrypt.py`) does what
/// `check --repair` and `export --all` do, from the folder and a credential, with the index
/// overwritten (first 4 KiB) or deleted, in the 1,000-item vault of `IndexRebuildTests`: every
/// file as `export --all` writes it (bytes, file name, modification time), its album and the
/// Live Photo link in the manifest, the note as TITLE.txt, and one summary line that says what
/// did not come back (a Fade item past its deadline; with the phrase, the Fade items it never
/// covers; a lost sidecar; a damaged item).
@Suite("the decrypter does what export --all does")
struct DecrypterExportParityTests {
    static let manifestName = "nu11vlt-decrypt-manifest.json"

    /// What `export --all` wrote, by item ID: its file name, bytes and modification time.
    struct Exported {
        var file: String
        var bytes: Data
        var mtime: Date?
    }

    static func mtime(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    static func exportAll(_ cli: CLI) throws -> [String: Exported] {
        let dir = cli.root + "/exported"
        let r = try cli.run(["export", "--all", "--json", "-o", dir], pinStdin: true)
        #expect(r.code == 0, "export --all: \(r.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any], "\(r.out)")
        var out: [String: Exported] = [:]
        for entry in try #require(document["exported"] as? [[String: Any]]) {
            let id = try #require(entry["id"] as? String)
            let file = try #require(entry["file"] as? String)
            out[id] = Exported(file: file, bytes: try Data(contentsOf: URL(fileURLWithPath: dir + "/" + file)), mtime: mtime(dir + "/" + file))
        }
        return out
    }

    /// The decrypter's run: its exit, its summary line, and its manifest's items by ID.
    struct Run {
        var outcome: CLI.Outcome
        var out: String
        var summary: String
        var items: [String: [String: Any]]
        var manifest: [String: Any]
    }

    static func decrypt(_ cli: CLI, _ args: [String], input: String, out: String) throws -> Run {
        let py = try cli.spawn("/usr/bin/python3", [RecoveryTests.tool] + args + [out], input: Data((input + "\n").utf8))
        #expect(!py.stderr.contains("Traceback"), "\(py.stderr)")
        let summary = String(py.stderr.split(separator: "\n").last ?? "")
        let data = FileManager.default.contents(atPath: out + "/" + manifestName) ?? Data()
        let manifest = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        #expect(!manifest.isEmpty, "no manifest in \(out): \(py.stderr.suffix(400))")
        var items: [String: [String: Any]] = [:]
        for item in manifest["items"] as? [[String: Any]] ?? [] {
            if let id = item["id"] as? String { items[id] = item }
        }
        return Run(outcome: py, out: out, summary: summary, items: items, manifest: manifest)
    }

    /// Every expected item came back as export wrote it, with the name, album and link the
    /// vault lists; the note as TITLE.txt; nothing else in the folder.
    static func expectParity(_ run: Run, expected: [String: Exported], listed: [String: [String: Any]], _ what: String) {
        for (id, exported) in expected {
            guard let entry = run.items[id] else {
                Issue.record("\(what): \(exported.file) (\(id)) is not in the manifest")
                continue
            }
            let file = entry["file"] as? String ?? "?"
            #expect(file == exported.file, "\(what): \(id) written as \(file), export wrote \(exported.file)")
            let path = run.out + "/" + file
            #expect(FileManager.default.contents(atPath: path) == exported.bytes, "\(what): \(file) differs from export's")
            #expect(mtime(path) == exported.mtime, "\(what): \(file): mtime \(String(describing: mtime(path))), export's \(String(describing: exported.mtime))")
            let item = listed[id] ?? [:]
            #expect(entry["name"] as? String == item["name"] as? String, "\(what): \(file): name")
            #expect(entry["album"] as? String == item["album"] as? String, "\(what): \(file): album \(String(describing: entry["album"]))")
            #expect((entry["motion"] as? [String: Any])?["id"] as? String == item["motion"] as? String, "\(what): \(file): Live Photo link")
        }
        let notes = run.items.values.filter { $0["kind"] as? String == "note" }
        #expect(notes.count == 1 && notes.first?["file"] as? String == "Groceries.txt" && notes.first?["name"] as? String == "Groceries",
                "\(what): the note: \(notes)")
        #expect(FileManager.default.contents(atPath: run.out + "/Groceries.txt") == Data("milk, eggs".utf8), "\(what): the note's body")
        #expect(run.items.count == expected.count + 1, "\(what): \(run.items.count) items in the manifest, expected \(expected.count + 1)")
        let onDisk = Set((try? FileManager.default.contentsOfDirectory(atPath: run.out)) ?? [])
        #expect(onDisk == Set(expected.values.map(\.file) + ["Groceries.txt", manifestName]),
                "\(what): other files in the folder: \(onDisk.symmetricDifference(expected.values.map(\.file) + ["Groceries.txt", manifestName]).prefix(5))")
        let albums = (run.manifest["albums"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(albums) == ["Trip", "Empty one"], "\(what): albums \(albums)")
    }

    @Test("index.sqlite overwritten (first 4 KiB) or deleted, with the phrase or the key store and PIN: every file as export --all writes it (bytes, name, mtime), album and Live Photo link in the manifest, the note, and a summary of what did not come back")
    func thousandItems() throws {
        let (cli, phrase) = try IndexRebuildTests.populatedWithPhrase()
        // Two items of one name (export's order — the file's date — decides which gets " (2)"),
        // and a name that is not a safe file name.
        for (folder, seconds) in [("a", 1_100_000_000.0), ("b", 1_000_000_000.0)] {
            let dir = cli.root + "/" + folder
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: dir + "/same.txt", contents: Data("same name, from \(folder)".utf8))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: seconds)], ofItemAtPath: dir + "/same.txt")
            _ = try cli.importIDs([dir + "/same.txt"])
        }
        _ = try cli.importIDs([cli.file("back\\slash.txt", Array("unsafe name".utf8))])
        var listed: [String: [String: Any]] = [:]
        for item in try cli.listJSON(["--all"]) {
            if let id = item["id"] as? String { listed[id] = item }
        }
        let exported = try Self.exportAll(cli)
        #expect(exported.count >= 1002 && exported.count == listed.count, "\(exported.count) exported of \(listed.count)")
        #expect(Set(exported.values.map(\.file)).isSuperset(of: ["same.txt", "same (2).txt", "back_slash.txt", "IMG_0001.JPG", "IMG_0001.MOV"]))
        let still = try #require(listed.first { $0.value["motion"] is String }, "no Live Photo still listed")
        // The phrase never covers a Fade item; the key store brings back those before their deadline.
        let fadeIDs = Set(listed.filter { $0.value["domain"] as? String == "fade" }.keys)
        #expect(fadeIDs.count == 1, "\(fadeIDs)")
        let covered = exported.filter { !fadeIDs.contains($0.key) }
        // Past its deadline when the decrypter runs: not brought back, and said so.
        _ = try cli.importIDs([cli.file("gone.txt", Array("fades at once".utf8))], extra: ["--fade", "1s"])
        let faded = Date().addingTimeInterval(2)

        var copies: [(String, String)] = []
        for how in ["overwritten", "deleted"] {
            let copy = cli.root + "/vault-" + how
            try FileManager.default.copyItem(atPath: cli.vault, toPath: copy)
            let index = copy + "/index.sqlite"
            if how == "overwritten" {
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: index))
                try handle.write(contentsOf: Data(repeating: 0x41, count: 4096))
                try handle.close()
            } else {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: index + suffix) }
            }
            copies.append((how, copy))
        }
        Thread.sleep(until: faded)
        for (how, copy) in copies {
            let withPhrase = try Self.decrypt(cli, ["--vault", copy], input: phrase, out: cli.root + "/phrase-" + how)
            #expect(withPhrase.outcome.code == 0, "phrase, \(how): \(withPhrase.outcome.stderr.suffix(600))")
            Self.expectParity(withPhrase, expected: covered, listed: listed, "phrase, index \(how)")
            #expect(withPhrase.summary == "nu11vlt_decrypt: summary: \(covered.count + 1) item(s) recovered; not recovered: 2 Fade item(s): the phrase never covers them (--keystore brings back those before their deadline); the list is in \(withPhrase.out)/\(Self.manifestName)",
                    "phrase, \(how): \(withPhrase.summary)")
            let withKeyStore = try Self.decrypt(cli, ["--vault", copy, "--keystore", cli.keystore], input: cli.pin, out: cli.root + "/ks-" + how)
            #expect(withKeyStore.outcome.code == 0, "key store, \(how): \(withKeyStore.outcome.stderr.suffix(600))")
            Self.expectParity(withKeyStore, expected: exported, listed: listed, "key store, index \(how)")
            #expect(withKeyStore.summary == "nu11vlt_decrypt: summary: \(exported.count + 1) item(s) recovered; not recovered: 1 Fade item(s) past their deadline (meant to disappear); the list is in \(withKeyStore.out)/\(Self.manifestName)",
                    "key store, \(how): \(withKeyStore.summary)")
            let fade = try #require(fadeIDs.first)
            #expect(withKeyStore.items[fade]?["fadesAt"] is Double, "key store, \(how): the Fade item's deadline")
            // The Live Photo link, both ways, by file name.
            let motion = try #require(still.value["motion"] as? String)
            for run in [withPhrase, withKeyStore] {
                #expect((run.items[still.key]?["motion"] as? [String: Any])?["file"] as? String == exported[motion]?.file, "\(how): the still's link")
                #expect((run.items[motion]?["still"] as? [String: Any])?["file"] as? String == exported[still.key]?.file, "\(how): the video's link")
            }
        }
        // Three of the numbered files (outside any album, so in Vault/Photos; names no other item
        // has, so what the others are named does not depend on them).
        let plain = covered.keys.filter { id in covered[id]?.file.range(of: #"^f[0-9]+\.txt$"#, options: .regularExpression) != nil }.sorted()
        try #require(plain.count >= 3, "\(plain.count) plain files")
        try degraded(cli, phrase: phrase, copy: copies[1].1, exported: exported, covered: covered, pick: (plain[0], plain[1], plain[2]))
        // --help says what the folder gets.
        let help = try cli.spawn("/usr/bin/python3", [RecoveryTests.tool, "--help"])
        #expect(help.code == 0 && help.out.contains(Self.manifestName) && help.out.contains("export --all") && help.out.contains("Live Photo"),
                "\(help.out) \(help.stderr)")
    }

    /// The index deleted and, besides, one item's sidecar altered, another's lost, and a third
    /// item's content damaged: the first comes back under a made-up name; the second too with
    /// the key store, while the phrase cannot open it (its recovery seal was in the sidecar);
    /// the third is named on stderr; the summary counts each, and the exit is 1.
    func degraded(_ cli: CLI, phrase: String, copy: String, exported: [String: Exported], covered: [String: Exported],
                  pick: (String, String, String)) throws {
        let (unnamed, lostSidecar, damaged) = pick
        var sidecar = try Data(contentsOf: URL(fileURLWithPath: copy + "/Meta/\(unnamed).n11m"))
        sidecar[sidecar.count - 1] ^= 0x01
        try sidecar.write(to: URL(fileURLWithPath: copy + "/Meta/\(unnamed).n11m"))
        try FileManager.default.removeItem(atPath: copy + "/Meta/\(lostSidecar).n11m")
        let photos = copy + "/Vault/Photos/"
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: photos).first { $0.contains(damaged) }, "\(damaged) not in Vault/Photos")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: photos + file))
        bytes[bytes.count - 20] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: photos + file))
        let fadeLine = "2 Fade item(s): the phrase never covers them (--keystore brings back those before their deadline)"
        let sidecarLine = "1 without their sidecar (Meta/<ID>.n11m held the recovery seal; the key store opens them)"
        let withPhrase = try Self.decrypt(cli, ["--vault", copy], input: phrase, out: cli.root + "/phrase-degraded")
        let withKeyStore = try Self.decrypt(cli, ["--vault", copy, "--keystore", cli.keystore], input: cli.pin, out: cli.root + "/ks-degraded")
        // The counts include the note: the phrase loses the damaged item and the one without its
        // sidecar; the key store only the damaged one.
        let cases: [(Run, [String: Exported], [String], String)] = [
            (withPhrase, covered, [unnamed],
             "\(covered.count - 1) item(s) recovered (1 without their name: named recovered-<ID>); not recovered: 1 damaged or unreadable (named above); \(sidecarLine); \(fadeLine)"),
            (withKeyStore, exported, [unnamed, lostSidecar],
             "\(exported.count) item(s) recovered (2 without their name: named recovered-<ID>); not recovered: 1 damaged or unreadable (named above); 1 Fade item(s) past their deadline (meant to disappear)"),
        ]
        for (run, expected, madeUp, summary) in cases {
            let what = run.out.hasSuffix("phrase-degraded") ? "phrase" : "key store"
            #expect(run.outcome.code == 1, "\(what): \(run.outcome.stderr.suffix(600))")
            #expect(run.outcome.stderr.contains("item \(damaged)"), "\(what): the damaged item is not named: \(run.outcome.stderr.suffix(600))")
            #expect(run.summary == "nu11vlt_decrypt: summary: \(summary); the list is in \(run.out)/\(Self.manifestName)", "\(what): \(run.summary)")
            for id in madeUp {
                let name = "recovered-\(id.prefix(8))"
                #expect(run.items[id]?["file"] as? String == name && run.items[id]?["name"] is NSNull, "\(what): \(String(describing: run.items[id]))")
                #expect(FileManager.default.contents(atPath: run.out + "/" + name) == expected[id]?.bytes, "\(what): \(name)'s bytes")
            }
            #expect(run.items[damaged] == nil && !FileManager.default.fileExists(atPath: run.out + "/" + (expected[damaged]?.file ?? "?")), "\(what)")
            let lost = (run.manifest["notRecovered"] as? [[String: Any]] ?? []).compactMap { entry in
                (entry["id"] as? String).map { $0 + " " + (entry["reason"] as? String ?? "?") }
            }
            let expectedLost = ["\(damaged) damaged"] + (madeUp.contains(lostSidecar) ? [] : ["\(lostSidecar) no-sidecar"])
            #expect(Set(lost.filter { !$0.hasSuffix(" faded") }) == Set(expectedLost), "\(what): \(lost)")
            // Every other item as export wrote it.
            for (id, item) in expected where ![unnamed, lostSidecar, damaged].contains(id) {
                #expect(run.items[id]?["file"] as? String == item.file, "\(what): \(item.file)")
            }
        }
    }
}
