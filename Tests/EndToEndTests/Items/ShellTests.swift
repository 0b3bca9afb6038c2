// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 35: `nu11vlt shell` — one unlock, then commands at a prompt, in a real terminal (tmux).
@Suite("nu11vlt shell")
struct ShellTests {
    @Test("under tmux: one PIN, then list, export --album, delete; ↑ recalls a line; the history is nowhere on disk; locked after lock.idle")
    func oneUnlockManyCommands() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["album", "create", "Trips"], pinStdin: true).code == 0)
        let ids = try cli.importIDs([cli.file("a.txt", Array("alpha".utf8)), cli.file("b.txt", Array("bravo".utf8))],
                                    extra: ["--album", "Trips"])
        let other = try #require(try cli.importIDs([cli.file("c.txt", Array("charlie".utf8))]).first)
        #expect(try cli.run(["settings", "set", "lock.idle", "20s"], pinStdin: true).code == 0)
        let out = cli.root + "/out"

        let session = try TmuxSession(cli, command: "\(CLI.binary) shell; echo SHELL-EXIT=$?; sleep 60")
        #expect(try session.screen(until: { $0.contains("PIN or passphrase:") }).contains("PIN or passphrase:"))
        try session.send([cli.pin, "Enter"])
        #expect(try session.screen(until: { $0.contains("nu11vlt>") }).contains("unlocked"))

        // While the shell waits at its prompt, another command uses the vault (the lock is per command).
        let beside = try cli.run(["list"], pinStdin: true)
        #expect(beside.code == 0 && !beside.stderr.contains("waiting for another nu11vlt"), "\(beside.stderr)")
        try session.send(["list", "Enter"])
        var screen = try session.screen(until: { ids.allSatisfy($0.contains) && $0.contains(other) })
        #expect(ids.allSatisfy(screen.contains) && screen.contains(other), "\(screen)")

        try session.send(["export --album Trips -o '\(out)'", "Enter"])
        screen = try session.screen(until: { $0.contains("exported 2 of 2") || $0.contains("error") }, seconds: 8)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["a.txt", "b.txt"], "\(screen)")
        #expect(FileManager.default.contents(atPath: out + "/b.txt") == Data("bravo".utf8))

        try session.send(["delete \(other)", "Enter"])
        screen = try session.screen(until: { $0.contains("deleted \(other)") || $0.contains("error") }, seconds: 8)
        #expect(!screen.contains("error"), "\(screen)")
        // A command that needs the PIN itself runs as its own process and asks for it (issue 58);
        // Ctrl-C ends that process, not the shell, which goes on.
        try session.send(["pin change", "Enter"])
        #expect(try session.screen(until: { $0.contains("Current PIN or passphrase:") }).contains("Current PIN or passphrase:"))
        try session.send(["C-c"])
        #expect(try session.screen(until: { $0.contains("interrupted") }).contains("interrupted"))
        // ↑ twice recalls the delete line (history in memory); Ctrl-U clears it again.
        try session.send(["Up", "Up"])
        #expect(try session.screen(until: { $0.contains("nu11vlt> delete \(other)") }).contains("nu11vlt> delete \(other)"))
        try session.send(["C-u"])
        // Nothing the shell typed went to a file: no history file anywhere in its folders.
        let written = cli.allFiles(cli.root).filter { !$0.hasPrefix(cli.vault) && !$0.hasPrefix(cli.keystore) && !$0.hasPrefix(out) }
        for path in written {
            let content = FileManager.default.contents(atPath: path) ?? Data()
            #expect(content.range(of: Data("delete \(other)".utf8)) == nil, "\(path) holds the shell's history")
        }
        // lock.idle (20 s, so a loaded machine does not lock it between two commands) without a key: locked, and the shell ends.
        screen = try session.screen(until: { $0.contains("SHELL-EXIT=") }, seconds: 60)
        #expect(screen.contains("locked after 20s without input") && screen.contains("SHELL-EXIT=0"), "\(screen)")
        // Only one unlock in the audit log for the whole session (and the list that checks it).
        let log = try cli.run(["log"], pinStdin: true).out
        #expect(log.contains("delete"))
        #expect(!(try cli.listJSON()).contains { ($0["id"] as? String) == other })
    }

    @Test("a pipe of commands: one unlock for all; a bad line is one error and the next still runs; Ctrl-D (end of input) locks")
    func piped() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try #require(try cli.importIDs([cli.file("a.txt", Array("alpha".utf8))]).first)
        let before = try cli.run(["log"], pinStdin: true).out.components(separatedBy: "unlock").count
        let r = try cli.run(["shell"], stdin: Data("list\nexport \(id) -o -\nbogus\nalbum create \"Two words\"\nalbum list\n".utf8), pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.out.contains(id) && r.out.contains("alpha") && r.out.contains("Two words"), "\(r.out)")
        #expect(r.stderr.contains("unknown command 'bogus'") && r.stderr.contains("nu11vlt: locked"), "\(r.stderr)")
        let after = try cli.run(["log"], pinStdin: true).out.components(separatedBy: "unlock").count
        #expect(after - before == 2, "one unlock for the shell and one for this log")
    }
}
