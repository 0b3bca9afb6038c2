// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 58, the unlock agent's harder cases: Ctrl-C at a client while the agent runs its
/// command, a question (duplicates) asked through the agent, a security-key unlock, and
/// another process changing the PIN or rotating the keys while the agent holds the vault.
@Suite("unlock agent: interruptions, questions, security keys, other processes")
struct AgentLifeTests {
    static func count(_ cli: CLI, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let r = try cli.run(["list", "--json", "--limit", "0"])
        #expect(r.code == 0, "list: \(r.stderr)", sourceLocation: sourceLocation)
        let document = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any], "\(r.out)")
        return try #require(document["items"] as? [[String: Any]], "\(r.out)").count
    }

    @Test("Ctrl-C at a client during a folder import through the agent: the import stops there, the client ends as interrupted, the agent serves on and the vault checks clean")
    func interruptedImport() throws {
        let cli = try CLI()
        try cli.initVault()
        let folder = cli.root + "/many"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let total = 1500
        for i in 0..<total { FileManager.default.createFile(atPath: folder + "/f\(i).txt", contents: Data("file \(i) ".utf8 + Data(count: i))) }
        let pid = try AgentTests.unlock(cli)
        defer { kill(pid, SIGKILL) }
        // One commit per file: the import takes a while, and each file is its own all-or-nothing unit.
        let err = cli.root + "/import.err"
        FileManager.default.createFile(atPath: err, contents: nil)
        let client = try Program.start(CLI.binary, ["import", "-r", folder, "--commit-every", "1"], environment: cli.environment,
                                       directory: cli.root, stderr: try FileHandle(forWritingTo: URL(fileURLWithPath: err)))
        // Interrupted once some files are in (the vault's item folder fills), long before the end.
        #expect(Wait.until(seconds: 60) {
            ((try? FileManager.default.subpathsOfDirectory(atPath: cli.vault + "/Vault")) ?? []).filter { $0.hasSuffix(".n11") }.count >= 20
        }, "the import did not start")
        kill(client.processIdentifier, SIGINT)
        let asked = Date()
        client.waitUntilExit()
        #expect(Date().timeIntervalSince(asked) < 15, "the client took \(Date().timeIntervalSince(asked)) s to stop")
        // Ended as an interrupted process does (killed by SIGINT: a shell loop stops too).
        #expect(client.terminationReason == .uncaughtSignal && client.terminationStatus == SIGINT,
                "client: \(client.terminationReason) \(client.terminationStatus); \((try? String(contentsOfFile: err, encoding: .utf8)) ?? "")")
        let said = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        #expect(said.contains("interrupted") && said.contains("--skip-duplicates"), "\(said)")
        // The agent stopped the import (it does not go on with the client gone) and serves on.
        #expect(AgentTests.alive(pid), "the agent ended")
        let stopped = try Self.count(cli)
        #expect(stopped > 0 && stopped < total, "\(stopped) of \(total) imported: the agent went on after Ctrl-C")
        usleep(1_500_000)
        #expect(try Self.count(cli) == stopped, "the agent went on importing after Ctrl-C")
        let check = try cli.run(["check"])
        #expect(check.code == 0, "check after Ctrl-C: \(check.out) \(check.stderr)")
        // What the report says to do brings in exactly the rest: nothing half-imported, nothing twice.
        let rest = try cli.run(["import", "-r", folder, "--skip-duplicates"])
        #expect(rest.code == 0, "\(rest.stderr)")
        #expect(try Self.count(cli) == total)
        #expect(try cli.run(["lock"]).code == 0)
        #expect(!AgentTests.alive(pid))
    }

    @Test("an import that finds a duplicate asks at the client's terminal through the agent (it imported it again without asking)")
    func duplicateAsked() throws {
        let cli = try CLI()
        try cli.initVault()
        let file = cli.file("dup.txt", Array("the same bytes".utf8))
        let pid = try AgentTests.unlock(cli)
        defer { kill(pid, SIGKILL) }
        #expect(try cli.run(["import", file]).code == 0)
        let base = try AgentTests.unlocks(cli)
        let env = ["XDG_RUNTIME_DIR", "NU11VLT_VAULT", "NU11VLT_KEYSTORE"].map { "\($0)='\(cli.environment[$0] ?? "")'" }.joined(separator: " ")
        let session = try TmuxSession(cli, command: "env \(env) \(CLI.binary) import \(file); echo done-$?; sleep 30", width: 400)
        let shown = try session.screen { $0.contains("Import it again?") || $0.contains("done-") }
        #expect(shown.contains("is already in the vault") && shown.contains("Import it again?"), "no question through the agent: \(shown)")
        try session.send(["n", "Enter"])
        let last = try session.screen { $0.contains("done-") }
        #expect(last.contains("done-0"), "\(last)")
        #expect(try Self.count(cli) == 1, "the duplicate was imported although the answer was no")
        #expect(try AgentTests.unlocks(cli) == base, "the import asked for the PIN instead of using the agent")
    }

    @Test("unlock with a security key: --security-key starts the agent with a touch (and the key's own PIN), no key or no touch starts none", .enabled(if: SoftwareFIDO2.available))
    func securityKey() throws {
        let key = try SoftwareFIDO2(pin: "4242")
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.runWithKey(["fido2", "enroll", "--require", "key-pin"], key: key, keyPIN: "4242", pinStdin: true).code == 0)
        let id = try #require(try cli.importIDs([cli.file("a.bin", [7, 8, 9])]).first)
        func noAgent(_ why: String) {
            let sockets = ((try? FileManager.default.contentsOfDirectory(atPath: AgentTests.socketFolder(cli))) ?? []).filter { $0.hasSuffix(".sock") }
            #expect(sockets.isEmpty, "an agent was left after \(why)")
        }
        // The key's own PIN is needed and there is no terminal to ask it: one line, no agent.
        expectCleanError(try cli.runWithKey(["unlock", "--security-key"], key: key), code: 64, mentions: "no terminal")
        noAgent("a key PIN that could not be read")
        // Unplugged: one line, no agent.
        expectCleanError(try cli.runWithKey(["unlock", "--security-key"], key: nil), code: 4, mentions: "no security key is plugged in")
        noAgent("an absent key")

        let r = try cli.runWithKey(["unlock", "--security-key"], key: key, keyPIN: "4242")
        #expect(r.code == 0 && r.stderr.contains("unlocked"), "\(r.stderr)")
        let words = r.stderr.split(whereSeparator: { " ();".contains($0) })
        let pid = try #require(words.firstIndex(of: "pid").flatMap { pid_t(words[words.index(after: $0)]) }, "\(r.stderr)")
        defer { kill(pid, SIGKILL) }
        // Commands use it with neither PIN nor key.
        let export = try cli.run(["export", id, "-o", "-"])
        #expect(export.code == 0 && export.stdout == Data([7, 8, 9]), "\(export.stderr)")
        #expect(try cli.run(["lock"]).code == 0)
        #expect(!AgentTests.alive(pid))
        // The key blocks a wrong key PIN; nothing is started.
        expectCleanError(try cli.runWithKey(["unlock", "--security-key"], key: key, keyPIN: "9999"), code: 3)
        noAgent("a wrong key PIN")
    }

    @Test("a PIN changed by another process: the agent refuses the next command in one line and ends; its keys serve nothing more")
    func pinChangedElsewhere() throws {
        let cli = try CLI()
        try cli.initVault()
        let pid = try AgentTests.unlock(cli)
        defer { kill(pid, SIGKILL) }
        #expect(try cli.run(["import", cli.file("a.txt", Array("a".utf8))]).code == 0)
        let change = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(cli.pin)\nfresh passphrase 2\n".utf8))
        #expect(change.code == 0, "\(change.stderr)")
        let after = try cli.run(["import", cli.file("b.txt", Array("b".utf8))])
        expectCleanError(after, code: 64, mentions: "the PIN was changed by another program")
        for _ in 0..<100 where AgentTests.alive(pid) { usleep(50_000) }
        #expect(!AgentTests.alive(pid), "the agent still runs after the PIN was changed elsewhere")
        let list = try cli.run(["list"])
        #expect(list.code != 0 && list.stderr.contains(AgentSocketTests.noTerminal), "\(list.stderr)")
        // Nothing was added under the retired keys.
        let items = try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data("fresh passphrase 2\n".utf8))
        #expect(items.code == 0 && items.out.contains("a.txt") && !items.out.contains("b.txt"), "\(items.out) \(items.stderr)")
    }

    @Test("keys rotated by another process (rekey): the agent takes the new generation; what it adds opens with the PIN after and checks clean")
    func rekeyedElsewhere() throws {
        let cli = try CLI()
        try cli.initVault()
        let pid = try AgentTests.unlock(cli)
        defer { kill(pid, SIGKILL) }
        #expect(try cli.run(["import", cli.file("a.txt", Array("before".utf8))]).code == 0)
        #expect(try cli.run(["rekey"], pinStdin: true).code == 0)
        let added = try cli.run(["import", cli.file("b.txt", Array("after the rotation".utf8))])
        #expect(added.code == 0, "\(added.stderr)")
        let id = String(added.out.prefix(32))
        #expect(try cli.run(["lock"]).code == 0)
        #expect(!AgentTests.alive(pid))
        // Sealed under the current keys: it opens, and the whole vault checks clean, with the PIN alone.
        let export = try cli.run(["export", id, "-o", "-"], pinStdin: true)
        #expect(export.code == 0 && export.stdout == Data("after the rotation".utf8), "\(export.stderr)")
        let check = try cli.run(["check"], pinStdin: true)
        #expect(check.code == 0, "\(check.out) \(check.stderr)")
    }
}
