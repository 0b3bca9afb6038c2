// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 55: a key store and vault folder from before key generations (master record version 1,
/// no recovery commitment in the slot, recovery.n11r version 1 with the Fade key, a version 1
/// security-key file — made by `Tests/Fixtures/legacy_keystore.py` from FORMAT.md) migrate at the
/// first unlock, and a fault at any file-system call of it loses nothing: the phrase still opens
/// every item, and the next unlock finishes the migration.
extension FaultTests {
    @Test("first unlock of a key store from before generations") func migrationAtFirstUnlock() throws {
        var item = ""
        try run("migration at first unlock", Scenario(
            prepare: { cli in
                let setup = try cli.run(["recovery", "setup"], pinStdin: true)
                let pattern = "[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}"
                let phrase = try #require(setup.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                    .first { $0.range(of: "^" + pattern + "$", options: .regularExpression) != nil }, "\(setup.out) \(setup.stderr)")
                try Data((phrase + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/phrase"))
                item = try cli.importIDs([cli.file("old.jpg", [8, 8])])[0]
                let legacy = try cli.spawn("/usr/bin/python3", [Repo.path("Tests/Fixtures/legacy_keystore.py"), "--keystore", cli.keystore,
                                                                "--vault", cli.vault], input: Data((cli.pin + "\n").utf8))
                #expect(legacy.code == 0, "\(legacy.stderr)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: cli.vault + "/recovery.n11r"))[4] == 1)
                return [item: Data([8, 8])]
            },
            command: { _ in [CLI.binary, "list", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, _ in
                let phrase = try Data(contentsOf: URL(fileURLWithPath: cli.root + "/phrase"))
                let opened = try cli.spawn("/usr/bin/python3", [SpliceTests.client, "phrase", "--vault", cli.vault, "--item", item], input: phrase)
                #expect(opened.out.hasPrefix("opened"), "the phrase no longer opens the item after a fault in the migration: \(opened.out) \(opened.stderr)")
                // The next unlock (no fault) finishes it: version 2 recovery data, and the slot names it,
                // so a deleted recovery.n11r is reported.
                #expect(try cli.run(["list"], pinStdin: true).code == 0)
                #expect(try Data(contentsOf: URL(fileURLWithPath: cli.vault + "/recovery.n11r"))[4] == 2)
                let copy = cli.root + "/without-recovery"
                #expect(Program.run("/bin/cp", ["-a", cli.vault, copy]) == 0)
                try FileManager.default.removeItem(atPath: copy + "/recovery.n11r")
                let missing = try cli.spawn(CLI.binary, ["list", "--vault", copy, "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
                #expect(missing.stderr.contains("recovery.n11r) is missing"), "\(missing.stderr)")
                return cli.pin
            }))
    }
}
