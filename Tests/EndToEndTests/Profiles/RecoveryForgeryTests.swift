// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 55's adversary review: the key sets in recovery.n11r are sealed to the phrase's public
/// key, so whoever can write the vault folder can seal a set of their own keys there
/// (`Tests/Fixtures/forge_recovery.py`). `recover` trusts a set only for the index entries it
/// opens and then rotates: keys that came out of the folder never seal anything new.
@Suite("recovery data forged by a vault-folder writer")
struct RecoveryForgeryTests {
    static let forge = Repo.path("Tests/Fixtures/forge_recovery.py")

    @Test("a forged set alone: recover refuses and writes nothing; a forged set put first: recover uses the real one, and what the owner adds after opens not under the attacker's keys")
    func forgedSets() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let old = try #require(try cli.importIDs([cli.file("old.bin", [1, 2])]).first)
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost")
        let pristine = try Data(contentsOf: URL(fileURLWithPath: cli.vault + "/recovery.n11r"))

        // Only the attacker's set: refused, no key store made.
        #expect(try cli.spawn("/usr/bin/python3", [Self.forge, cli.vault + "/recovery.n11r"]).code == 0)
        expectCleanError(try cli.recover(phrase: phrase, newPIN: "rebuilt pin 1"), code: 5, mentions: "was replaced")
        #expect(!FileManager.default.fileExists(atPath: cli.keystore), "a refused recovery left a key store")

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
}
