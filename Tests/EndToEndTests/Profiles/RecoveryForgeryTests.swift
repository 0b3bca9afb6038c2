// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 55's adversary review: the key sets in recovery.n11r are sealed to the phrase's public
/// key, so whoever can write the vault folder can seal a set of their own keys there
/// (`Tests/Fixtures/forge_recovery.py`), and plant or remove index rows. `recover` therefore
/// never keeps a set: the rebuilt key store has fresh keys; the sets only read what they open,
/// and what none opens comes back from the items' sidecars (issue 56's adversary review: rows
/// planted for a forged set, or an emptied index, made the old rule keep the attacker's keys).
@Suite("recovery data forged by a vault-folder writer")
struct RecoveryForgeryTests {
    static let forge = Repo.path("Tests/Fixtures/forge_recovery.py")

    @Test("a forged set alone, or put first: recover brings the items back (names from their sidecars) under fresh keys; nothing the owner has or adds after opens under the attacker's keys")
    func forgedSets() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let old = try #require(try cli.importIDs([cli.file("old.bin", [1, 2])]).first)
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost")
        let pristine = try Data(contentsOf: URL(fileURLWithPath: cli.vault + "/recovery.n11r"))

        // Only the attacker's set, and the index emptied of the item's rows: the item comes back
        // from the folder, with its name, under keys the attacker does not have.
        let vaultCopy = cli.root + "/pristine-vault"
        try FileManager.default.copyItem(atPath: cli.vault, toPath: vaultCopy)
        #expect(try cli.spawn("/usr/bin/python3", [Self.forge, cli.vault + "/recovery.n11r"]).code == 0)
        let emptied = try cli.spawn("/usr/bin/python3", ["-c", "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); db.execute('PRAGMA foreign_keys=ON'); db.execute('DELETE FROM item'); db.commit()",
                                                         cli.vault + "/index.sqlite"])
        #expect(emptied.code == 0, "\(emptied.stderr)")
        let alone = try cli.recover(phrase: phrase, newPIN: "rebuilt pin 0")
        #expect(alone.code == 0, "\(alone.out) \(alone.stderr)")
        #expect(try cli.with("rebuilt pin 0", ["export", old, "-o", "-"]).stdout == Data([1, 2]))
        #expect(try cli.with("rebuilt pin 0", ["list"]).out.contains("old.bin"), "the name did not come back from the sidecar")
        #expect(try cli.with("rebuilt pin 0", ["check"]).code == 0)
        let planted = try #require(try cli.with("rebuilt pin 0", ["import", cli.file("after.bin", [4])]).out.split(separator: "\n").first.map { String($0.prefix(32)) })
        for id in [planted, old] {
            let opens = try cli.spawn("/usr/bin/python3", [Self.forge, "--meta-opens", cli.vault + "/index.sqlite", id])
            #expect(opens.out.contains("does-not-open"), "the attacker's keys open \(id) after a recovery from a forged set alone: \(opens.out) \(opens.stderr)")
        }
        try FileManager.default.removeItem(atPath: cli.keystore)
        try FileManager.default.removeItem(atPath: cli.vault)
        try FileManager.default.moveItem(atPath: vaultCopy, toPath: cli.vault)

        // The attacker's set first, the real one after.
        try pristine.write(to: URL(fileURLWithPath: cli.vault + "/recovery.n11r"))
        #expect(try cli.spawn("/usr/bin/python3", [Self.forge, cli.vault + "/recovery.n11r", "--prepend"]).code == 0)
        let r = try cli.recover(phrase: phrase, newPIN: "rebuilt pin 1")
        #expect(r.code == 0 && r.out.contains("1 item(s) recovered"), "\(r.out) \(r.stderr)")
        #expect(try cli.with("rebuilt pin 1", ["export", old, "-o", "-"]).stdout == Data([1, 2]))
        #expect(try cli.with("rebuilt pin 1", ["check"]).code == 0)
        let added = try #require(try cli.with("rebuilt pin 1", ["import", cli.file("secret name.bin", [3])]).out.split(separator: "\n").first.map { String($0.prefix(32)) })
        let leak = try cli.spawn("/usr/bin/python3", [Self.forge, "--meta-opens", cli.vault + "/index.sqlite", added])
        #expect(leak.out.contains("does-not-open"), "the attacker's keys open what the owner added after the recovery: \(leak.out) \(leak.stderr)")
        let oldLeak = try cli.spawn("/usr/bin/python3", [Self.forge, "--meta-opens", cli.vault + "/index.sqlite", old])
        #expect(oldLeak.out.contains("does-not-open"), "\(oldLeak.out)")
    }

    @Test("forged index entries lose to the items' sidecars; an entry a set opens names only an item without a sidecar, and the report says so; no key of the recovery data is kept (archive-keys/ stays empty)")
    func forgedEntriesLoseToSidecars() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let ids = try cli.importIDs([cli.file("genuine.bin", [5, 6]), cli.file("second.bin", [7])])
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost")
        #expect(try cli.spawn("/usr/bin/python3", [Self.forge, cli.vault + "/recovery.n11r", "--prepend"]).code == 0)
        let planted = try cli.spawn("/usr/bin/python3", [Self.forge, "--plant-meta", cli.vault + "/index.sqlite", ids[0], "attacker.bin"])
        #expect(planted.code == 0, "\(planted.stderr)")
        try FileManager.default.removeItem(atPath: cli.vault + "/Meta/\(ids[1]).n11m")  // its entry (the genuine set's) is all there is
        let r = try cli.recover(phrase: phrase, newPIN: "rebuilt pin 2")
        #expect(r.code == 0 && r.out.contains("2 item(s) recovered"), "\(r.out) \(r.stderr)")
        let fromEntry = (r.out + r.stderr).split(separator: "\n").filter { $0.contains(ids[1]) }
        #expect(fromEntry.count == 1 && fromEntry.allSatisfy { $0.contains("sidecar") }, "the report does not say where item \(ids[1])'s name came from: \(r.out) \(r.stderr)")
        #expect(!(r.out + r.stderr).contains(ids[0]), "the item whose sidecar opened is reported: \(r.out) \(r.stderr)")
        let listed = try cli.with("rebuilt pin 2", ["list"])
        #expect(listed.out.contains("genuine.bin") && !listed.out.contains("attacker.bin"), "the forged entry overrode the sidecar: \(listed.out)")
        #expect(listed.out.contains("second.bin"), "\(listed.out)")
        let retired = (try? FileManager.default.contentsOfDirectory(atPath: cli.keystore + "/archive-keys")) ?? []
        #expect(retired.isEmpty, "archive keys from the recovery data's sets were kept: \(retired)")
        #expect(try cli.with("rebuilt pin 2", ["export", ids[0], "-o", "-"]).stdout == Data([5, 6]))
    }
}
