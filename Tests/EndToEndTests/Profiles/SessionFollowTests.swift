// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 55: open sessions follow the vault. A shell stays unlocked while another process runs
/// `rekey`, `recovery setup` and `pin change`; after each, an import in the shell is sealed under
/// the current keys and to the current phrase (or refused, after a PIN change), never under a
/// retired one. The new credentials open every new item, the old ones none.
@Suite("sessions follow the vault")
struct SessionFollowTests {
    static let client = SpliceTests.client

    /// Imports `name` in the shell; the ID it printed, or nil (with the screen) when it was refused.
    func shellImport(_ session: TmuxSession, _ cli: CLI, _ name: String, _ bytes: [UInt8]) throws -> (id: String?, screen: String) {
        let path = cli.file(name, bytes)
        try session.send(["import '\(path)'", "Enter"])
        let screen = try session.screen(until: { $0.contains("  \(name)") || $0.contains("error:") }, seconds: 30)
        let line = screen.split(separator: "\n").last { $0.hasSuffix("  \(name)") && $0.count >= 34 }
        return (line.map { String($0.prefix(32)) }, screen)
    }

    @Test("a shell open across rekey, recovery setup and pin change in other processes: every import opens with the current PIN and phrase, none with the old ones", .timeLimit(.minutes(10)))
    func shellFollows() throws {
        let cli = try CLI()
        let phrase0 = try cli.initWithPhrase()
        #expect(try cli.run(["settings", "set", "lock.idle", "0"], pinStdin: true).code == 0)
        let session = try TmuxSession(cli, command: "\(CLI.binary) shell; echo SHELL-EXIT=$?; sleep 60")
        #expect(try session.screen(until: { $0.contains("PIN or passphrase:") }).contains("PIN or passphrase:"))
        try session.send([cli.pin, "Enter"])
        #expect(try session.screen(until: { $0.contains("nu11vlt>") }).contains("unlocked"))

        // 1. rekey elsewhere: the shell takes the new keys.
        let masterBefore = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        #expect(try cli.run(["rekey"], pinStdin: true).code == 0)
        let afterRekey = try shellImport(session, cli, "after-rekey.bin", [1, 1, 1])
        let id1 = try #require(afterRekey.id, "\(afterRekey.screen)")
        #expect(try cli.run(["check"], pinStdin: true).out.contains("0 damaged"))
        let old = cli.root + "/old-ks"
        #expect(Program.run("/bin/cp", ["-a", cli.keystore, old]) == 0)
        try masterBefore.write(to: URL(fileURLWithPath: old + "/master.n11k"))
        let viaOld = try cli.spawn(CLI.binary, ["export", id1, "-o", "-", "--keystore", old, "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
        #expect(viaOld.stdout != Data([1, 1, 1]), "the retired keys open an item the shell added after the rekey")

        // 2. recovery setup elsewhere: the shell's next import is sealed to the new phrase only.
        let setup = try cli.run(["recovery", "setup"], pinStdin: true)
        #expect(setup.code == 0, "\(setup.stderr)")
        let pattern = "[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}"
        let phrase1 = try #require(setup.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.range(of: "^" + pattern + "$", options: .regularExpression) != nil })
        let afterSetup = try shellImport(session, cli, "after-setup.bin", [2, 2, 2])
        let id2 = try #require(afterSetup.id, "\(afterSetup.screen)")
        for (id, phrase, opens) in [(id1, phrase0, false), (id2, phrase0, false), (id1, phrase1, true), (id2, phrase1, true)] {
            let r = try cli.spawn("/usr/bin/python3", [Self.client, "phrase", "--vault", cli.vault, "--item", id], input: Data("\(phrase)\n".utf8))
            #expect(r.out.hasPrefix("opened") == opens, "\(id) with \(phrase == phrase0 ? "the old" : "the new") phrase: \(r.out) \(r.stderr)")
        }

        // 3. pin change elsewhere: the shell cannot follow without the new PIN — it refuses and locks.
        let change = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(cli.pin)\nnew pin 4321\n".utf8))
        #expect(change.code == 0, "\(change.stderr)")
        let refused = try shellImport(session, cli, "after-change.bin", [3, 3, 3])
        #expect(refused.id == nil && refused.screen.contains("PIN was changed"), "\(refused.screen)")
        #expect(try session.screen(until: { $0.contains("SHELL-EXIT=") }, seconds: 20).contains("SHELL-EXIT="))

        // recover with the new phrase brings back every item the shell added.
        try FileManager.default.removeItem(atPath: cli.keystore)
        let recovered = try cli.recover(phrase: phrase1, newPIN: "recovered pin 5")
        #expect(recovered.code == 0 && recovered.out.contains("2 item(s) recovered"), "\(recovered.out) \(recovered.stderr)")
        for (id, bytes) in [(id1, [UInt8](repeating: 1, count: 3)), (id2, [UInt8](repeating: 2, count: 3))] {
            #expect(try cli.with("recovered pin 5", ["export", id, "-o", "-"]).stdout == Data(bytes))
        }
    }

    @Test("a backup-PIN change leaves forward/ as empty as a primary one: the key store looks the same whichever PIN rotated")
    func backupRotationLeavesNoRecord() throws {
        let cli = try CLI()
        try cli.initVault()
        try cli.setBackup("backup pin 1")
        _ = try cli.with("backup pin 1", ["import", cli.file("b.bin", [9])])
        let r = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: Data("backup pin 1\nbackup pin 2\n".utf8))
        #expect(r.code == 0, "\(r.stderr)")
        let forward = (try? FileManager.default.contentsOfDirectory(atPath: cli.keystore + "/forward")) ?? []
        #expect(forward.isEmpty, "a backup rotation left \(forward)")
    }
}
