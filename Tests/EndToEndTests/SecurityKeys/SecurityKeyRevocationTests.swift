// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 55: a removed security key is revoked — the adversary kept the lost key and has old
/// copies of the key store (a backup, a synced folder), and tries both the stock binary and a
/// client of the test's own written from docs/FORMAT.md with the lost key's secrets.
@Suite("security key revocation", .enabled(if: SoftwareFIDO2.available))
struct SecurityKeyRevocationTests {
    @Test("fido2 remove: the lost key opens nothing added after, with any old key-store file put back (stock binary and the FORMAT.md client); the spare keeps working untouched; the PIN too")
    func removeRevokes() throws {
        let lost = try SoftwareFIDO2()
        let spare = try SoftwareFIDO2()
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.runWithKey(["fido2", "enroll", "--name", "lost"], key: lost, pinStdin: true).code == 0)
        #expect(try cli.runWithKey(["fido2", "enroll", "--name", "spare"], key: spare, pinStdin: true).code == 0)
        let old = try #require(try cli.importIDs([cli.file("old.bin", [7, 7, 7])]).first)
        // Before: the lost key opens, through the binary and through the client.
        #expect(try cli.runWithKey(["export", old, "-o", "-", "--security-key"], key: lost).stdout == Data([7, 7, 7]))
        let before = try client(cli, keystore: cli.keystore, vault: cli.vault, item: old, key: lost)
        #expect(before.out.hasPrefix("opened"), "the client cannot open with an enrolled key: \(before.out) \(before.stderr)")
        let t0Keys = SpliceTests.snapshot(cli.keystore)

        let removed = try cli.runWithKey(["fido2", "remove", "1"], key: nil, pinStdin: true)
        #expect(removed.code == 0 && removed.out.contains("rotated"), "\(removed.out) \(removed.stderr)")
        let bytes = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 11) })
        let added = try #require(try cli.importIDs([cli.file("new.bin", Array(bytes))]).first)

        // Today: the spare opens the new item with a touch (nothing was asked of it at removal);
        // the PIN opens it; the lost key is a wrong key.
        #expect(try cli.runWithKey(["export", added, "-o", "-", "--security-key"], key: spare).stdout == bytes)
        #expect(try cli.run(["export", added, "-o", "-"], pinStdin: true).stdout == bytes)
        expectCleanError(try cli.runWithKey(["list", "--security-key"], key: lost), code: 3, mentions: "does not open the vault")

        // Every key-store file that changed, put back alone and all together, into a copy of today's key store.
        let changed = SpliceTests.changed(t0Keys, now: cli.keystore)
        #expect(changed.contains("security-keys.n11u") && changed.contains("master.n11k"), "\(changed)")
        for files in changed.map({ [$0] }) + [changed, ["security-keys.n11u", "master.n11k"]] {
            let keys = cli.root + "/spliced-\(UUID().uuidString.prefix(8))"
            #expect(Program.run("/bin/cp", ["-a", cli.keystore, keys]) == 0)
            for rel in files { try SpliceTests.put(t0Keys[rel], at: keys + "/" + rel) }
            let stock = try cli.runWithKey(["export", added, "-o", "-", "--security-key", "--keystore", keys], key: lost)
            #expect(stock.stdout != bytes && stock.code != 0, "\(files): the stock binary opened the new item with the removed key")
            let own = try client(cli, keystore: keys, vault: cli.vault, item: added, key: lost)
            #expect(!own.out.hasPrefix("opened"), "\(files): the client opened the new item with the removed key: \(own.out)")
            print("SPLICE | fido2 remove | keys/\(files.joined(separator: " + ")) | stock+lostKey: exit \(stock.code) | client securitykey: \(own.out.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    @Test("removal needs the primary PIN, not a security key; the remaining key follows the removal without being touched for it")
    func removalNeedsPIN() throws {
        let spare = try SoftwareFIDO2()
        let other = try SoftwareFIDO2()
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.runWithKey(["fido2", "enroll", "--name", "spare"], key: spare, pinStdin: true).code == 0)
        #expect(try cli.runWithKey(["fido2", "enroll", "--name", "other"], key: other, pinStdin: true).code == 0)
        // Removal through a security-key unlock is refused: the PIN is what changes slot 0's KEK.
        let viaKey = try cli.runWithKey(["fido2", "remove", "2"], key: spare)
        #expect(viaKey.code != 0, "fido2 remove ran without the PIN: \(viaKey.out)")
        #expect(try cli.runWithKey(["fido2", "remove", "2"], key: nil, pinStdin: true).code == 0)
        let id = try #require(try cli.importIDs([cli.file("x.bin", [5])]).first)
        #expect(try cli.runWithKey(["export", id, "-o", "-", "--security-key"], key: spare).stdout == Data([5]))
        expectCleanError(try cli.runWithKey(["list", "--security-key"], key: other), code: 3, mentions: "does not open the vault")
    }

    /// The client's security-key mode with the key's own secrets (its software state).
    func client(_ cli: CLI, keystore: String, vault: String, item: String, key: SoftwareFIDO2) throws -> CLI.Outcome {
        try cli.spawn("/usr/bin/python3", [SpliceTests.client, "securitykey", "--keystore", keystore, "--vault", vault,
                                           "--item", item, "--authenticator-state", key.statePath])
    }
}
