// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

@Suite("notes, fade, secure delete, wipe")
struct FadeNotesTests {
    @Test("notes: add (stdin), list, show, edit, delete; titles sealed; fade notes under fade_")
    func notes() throws {
        let cli = try CLI()
        try cli.initVault()
        let title = "Title-" + UUID().uuidString
        let added = try cli.runPinFD(["note", "add", "--title", title], stdin: Data("first body\n".utf8))
        #expect(added.code == 0, "\(added.stderr)")
        var id = added.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(cli.exists(cli.vault + "/Notes/vault_\(id).n11note"))
        let listed = try cli.run(["note", "list", "--json"], pinStdin: true)
        #expect(listed.out.contains(title) && listed.out.contains(id))
        #expect(try cli.run(["note", "show", id], pinStdin: true).out == "first body\n")
        let edited = try cli.runPinFD(["note", "edit", id, "--title", "New title"], stdin: Data("second body".utf8))
        #expect(edited.code == 0, "\(edited.stderr)")
        // The edited note has a new ID and key; the old version (key record and file) is shredded.
        let oldID = id
        id = String(edited.out.dropFirst("saved ".count).prefix(32))
        #expect(id != oldID && !cli.hasKeyRecord(oldID) && !cli.exists(cli.vault + "/Notes/vault_\(oldID).n11note"))
        expectCleanError(try cli.run(["note", "show", oldID], pinStdin: true), code: 4)
        #expect(try cli.run(["note", "show", id], pinStdin: true).out == "second body")
        #expect(try cli.run(["note", "list"], pinStdin: true).out.contains("New title"))
        // Notes are not files: `list` does not show them, `export` does not confuse them.
        #expect(!(try cli.run(["list"], pinStdin: true).out.contains(id)))
        let grep = try cli.spawn("/bin/sh", ["-c", "grep -rlaF \"$0\" \"$1\" \"$2\"; true", title, cli.vault, cli.keystore])
        #expect(grep.out.isEmpty, "title in clear: \(grep.out)")
        let fading = try cli.runPinFD(["note", "add", "--title", "brief", "--fade", "1h"], stdin: Data("gone soon".utf8))
        let fadeID = fading.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(cli.exists(cli.vault + "/Notes/fade_\(fadeID).n11note"))
        #expect(try cli.run(["note", "list"], pinStdin: true).out.contains("fades"))
        #expect(try cli.run(["note", "delete", id], pinStdin: true).code == 0)
        #expect(!cli.exists(cli.vault + "/Notes/vault_\(id).n11note") && !cli.hasKeyRecord(id))
        expectCleanError(try cli.run(["note", "show", id], pinStdin: true), code: 4)
        let fileID = try cli.importIDs([cli.file("f.txt", [1])])[0]
        expectCleanError(try cli.run(["note", "show", fileID], pinStdin: true), code: 64, mentions: "not a note")
    }

    /// One fade item of 2 s, then `command` after it expired: the item is gone everywhere.
    func fadeScenario(_ command: (CLI, String) throws -> Void) throws {
        let cli = try CLI()
        try cli.initVault()
        let keep = try cli.importIDs([cli.file("keep.jpg", [1, 2, 3])])[0]
        let id = try cli.importIDs([cli.file("fade.jpg", Array(repeating: 9, count: 40_000))], extra: ["--fade", "2s"])[0]
        let file = cli.vault + "/Fade/\(id).n11"
        #expect(cli.exists(file) && cli.hasKeyRecord(id))
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout.count == 40_000, "readable before expiry")
        cli.clockAhead = "+1h"  // the deadline passes (faketime: no sleep)
        try command(cli, id)
        #expect(!cli.exists(file), "file survived")
        #expect(!cli.hasKeyRecord(id), "key record survived")
        let rows = try cli.spawn("/usr/bin/sqlite3", [cli.vault + "/index.sqlite", "SELECT count(*) FROM item WHERE id = '\(id)'"])
        #expect(rows.out == "0\n", "index row survived")
        #expect(try cli.run(["export", keep, "-o", "-"], pinStdin: true).stdout == Data([1, 2, 3]))
    }

    @Test("an expired 2 s fade item is gone whatever the next command is")
    func fadeExpiry() throws {
        try fadeScenario { cli, _ in _ = try cli.run(["list"], pinStdin: true) }
        try fadeScenario { cli, id in
            expectCleanError(try cli.run(["export", id, "-o", "-"], pinStdin: true), code: 4)
        }
        try fadeScenario { cli, _ in
            let r = try cli.run(["sweep"])
            #expect(r.code == 0 && r.out.contains("1 item"))
        }
        try fadeScenario { cli, _ in _ = try cli.run(["status"]) }
        try fadeScenario { cli, _ in _ = try cli.run(["settings", "list"]) }
        try fadeScenario { cli, _ in _ = try cli.run(["list", "--pin-stdin"], stdin: Data("wrong pin\n".utf8)) }
    }

    @Test("an expired item never exports, even with its files restored from a copy made before expiry")
    func fadeRestore() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("secret.jpg", [7, 7, 7])], extra: ["--fade", "2s"])[0]
        #expect(try cli.spawn("/bin/cp", ["-a", cli.vault, cli.root + "/vault-copy"]).code == 0)
        #expect(try cli.spawn("/bin/cp", ["-a", cli.keystore, cli.root + "/ks-copy"]).code == 0)
        cli.clockAhead = "+1h"  // the deadline passes (faketime: no sleep)
        let swept = try cli.run(["sweep"])
        #expect(swept.code == 0 && swept.out.contains("1 item(s) destroyed"), "\(swept.out) \(swept.stderr)")
        #expect(!cli.hasKeyRecord(id))
        // Restore everything — vault folder and key store, including the old device state.
        let restored = try cli.spawn("/bin/sh", ["-c", "rm -rf \"$0\" \"$1\" && cp -a \"$2\" \"$0\" && cp -a \"$3\" \"$1\"",
                                      cli.vault, cli.keystore, cli.root + "/vault-copy", cli.root + "/ks-copy"])
        #expect(restored.code == 0, "restore failed: \(restored.stderr)")
        #expect(cli.hasKeyRecord(id) && cli.exists(cli.vault + "/Fade/\(id).n11"), "the copy was not restored")
        let r = try cli.run(["export", id, "-o", "-"], pinStdin: true)
        #expect(r.code != 0 && r.stdout.isEmpty, "an expired item exported")
        // Only the vault folder restored (the key record is gone for good).
        #expect(!cli.hasKeyRecord(id))
    }

    @Test("a fade item whose schedule entry is gone (the device state put back from before) is expired, never permanent")
    func rolledBackSchedule() throws {
        let cli = try CLI()
        try cli.initVault()
        let state = cli.keystore + "/state.n11s"
        let before = try Data(contentsOf: URL(fileURLWithPath: state))
        let id = try cli.importIDs([cli.file("soon.jpg", [5, 5, 5])], extra: ["--fade", "1h"])[0]
        #expect(try Data(contentsOf: URL(fileURLWithPath: state)) != before, "the schedule was not written")
        try before.write(to: URL(fileURLWithPath: state))   // the sealed schedule, from before the import
        let listed = try cli.listJSON()
        #expect(!listed.contains { $0["id"] as? String == id && $0["fadesAt"] == nil }, "listed as permanent: \(listed)")
        let r = try cli.run(["export", id, "-o", "-"], pinStdin: true)
        #expect(r.code == 4 && r.stdout.isEmpty, "a fade item without its deadline exported: \(r.code) \(r.stderr)")
        #expect(!cli.hasKeyRecord(id), "its key survived")
    }

    @Test("fade set moves a permanent item into Fade (re-encrypted, same ID) and it expires")
    func fadeSet() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["album", "create", "A"], pinStdin: true).code == 0)
        let bytes = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let old = try cli.importIDs([cli.file("p.jpg", bytes)], extra: ["--album", "A"])[0]
        // Long enough that a loaded machine lists it before it fades; the clock is moved past it below.
        let set = try cli.run(["fade", "set", old, "10m"], pinStdin: true)
        #expect(set.code == 0, "\(set.stderr)")
        // Re-encrypted into Fade under a new key, keeping its ID (issue 58; it was a new ID
        // before); the permanent copy is gone (its key record and file).
        let id = String(set.out.prefix(32))
        #expect(id == old && !set.out.contains("ID changed"))
        #expect(try IDStabilityTests.recordDomains(cli, old) == [2], "the permanent copy's key record survived")
        #expect(!cli.exists(cli.vault + "/Vault/Photos/\(old).n11"))
        #expect(cli.exists(cli.vault + "/Fade/\(id).n11"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Vault/Albums").allSatisfy {
            (try? FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Vault/Albums/" + $0))?.isEmpty ?? true
        })
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data(bytes))
        #expect(try cli.listJSON().first { $0["id"] as? String == id }?["fadesAt"] is String, "no deadline listed")
        expectCleanError(try cli.run(["fade", "set", id, "soon"], pinStdin: true), code: 64, mentions: "duration")
        cli.clockAhead = "+1h"  // the deadline passes (faketime: no sleep)
        expectCleanError(try cli.run(["export", id, "-o", "-"], pinStdin: true), code: 4)
    }

    @Test("secure delete overwrites the file's bytes before unlinking; standard delete does not")
    func secureDelete() throws {
        let cli = try CLI()
        try cli.initVault()
        let ids = try cli.importIDs([cli.file("a.jpg", Array(repeating: 1, count: 100_000)),
                                     cli.file("b.jpg", Array(repeating: 2, count: 100_000))])
        var before: [Data] = []
        for (n, id) in ids.enumerated() {
            let path = cli.vault + "/Vault/Photos/\(id).n11"
            before.append(try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(link(path, cli.root + "/link\(n)") == 0)
        }
        #expect(try cli.run(["delete", "--secure", ids[0]], pinStdin: true).code == 0)
        #expect(try cli.run(["delete", ids[1]], pinStdin: true).code == 0)
        let secure = try Data(contentsOf: URL(fileURLWithPath: cli.root + "/link0"))
        let standard = try Data(contentsOf: URL(fileURLWithPath: cli.root + "/link1"))
        #expect(secure.count == before[0].count && secure != before[0], "secure delete left the old bytes")
        #expect(standard == before[1], "standard delete is crypto-shredding only")
        #expect(!cli.hasKeyRecord(ids[0]) && !cli.hasKeyRecord(ids[1]))
        // The setting makes secure the default.
        #expect(try cli.run(["settings", "set", "deletion.mode", "secure"], pinStdin: true).code == 0)
        let c = try cli.importIDs([cli.file("c.jpg", Array(repeating: 3, count: 50_000))])[0]
        let cPath = cli.vault + "/Vault/Photos/\(c).n11"
        let cBefore = try Data(contentsOf: URL(fileURLWithPath: cPath))
        #expect(link(cPath, cli.root + "/link2") == 0)
        #expect(try cli.run(["delete", c], pinStdin: true).code == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.root + "/link2")) != cBefore)
    }

    @Test("secure delete of a photo overwrites its sealed thumbnail too, before unlinking it")
    func secureDeleteThumbnail() throws {
        let cli = try CLI()
        try cli.initVault()
        let jpeg = cli.root + "/photo.jpg"
        try PhotoFixtures.run(cli, "convert", ["-size", "320x240", "gradient:red-blue", jpeg])
        let id = try cli.importIDs([jpeg])[0]
        let paths = [cli.vault + "/Vault/Photos/\(id).n11", cli.vault + "/Thumbnails/\(id).n11thumb"]
        var before: [Data] = []
        for (n, path) in paths.enumerated() {
            try #require(cli.exists(path), "\(path) is missing: no thumbnail was made")
            before.append(try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(link(path, cli.root + "/witness\(n)") == 0)
        }
        #expect(try cli.run(["delete", "--secure", id], pinStdin: true).code == 0)
        for (n, path) in paths.enumerated() {
            #expect(!cli.exists(path))
            let after = try Data(contentsOf: URL(fileURLWithPath: cli.root + "/witness\(n)"))
            #expect(after.count == before[n].count && after != before[n], "secure delete left the old bytes of \(path)")
        }
    }

    @Test("wipe: keys first, then files; afterwards nothing opens and nothing remains")
    func wipe() throws {
        for secure in [false, true] {
            let cli = try CLI()
            try cli.initVault()
            let marker = "WIPE" + UUID().uuidString
            _ = try cli.importIDs([cli.file("w.txt", Array((marker + String(repeating: "z", count: 20_000)).utf8))])
            _ = try cli.runPinFD(["note", "add", "--title", marker], stdin: Data(marker.utf8))
            expectCleanError(try cli.run(["wipe"]), code: 64, mentions: "--yes")
            #expect(cli.exists(cli.keystore + "/master.n11k"), "nothing changed without confirmation")
            let r = try cli.run(["wipe", "--yes"] + (secure ? ["--secure"] : []))
            #expect(r.code == 0, "\(r.stderr)")
            let left = try cli.spawn("/usr/bin/find", [cli.vault, cli.keystore, "-type", "f"])
            #expect(left.out.isEmpty, "files remain: \(left.out)")
            expectCleanError(try cli.run(["list"], pinStdin: true), code: 4, mentions: "no vault")
            try FileManager.default.removeItem(atPath: cli.root + "/w.txt")
            let scan = try cli.spawn("/bin/sh", ["-c", "grep -rlaF \"$0\" /tmp /dev/shm 2>/dev/null; true", marker])
            #expect(scan.out.isEmpty, "plaintext left: \(scan.out)")
        }
    }
}
