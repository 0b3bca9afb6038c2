// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 58: the shell runs every command, expands `~`, works when opened with --vault and
/// --keystore, and completes with Tab.
@Suite("nu11vlt shell: every command")
struct ShellEveryCommandTests {
    @Test("opened with --vault/--keystore (no environment): list, import ~/… (a quoted ~ stays), status, settings, fade, check all run; one unlock")
    func explicitPathsAndEveryCommand() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try #require(try cli.importIDs([cli.file("a.txt", Array("alpha".utf8))]).first)
        _ = cli.file("b.txt", Array("bravo".utf8))
        let before = try cli.run(["log"], pinStdin: true).out.components(separatedBy: "unlock").count
        var env = cli.environment
        env.removeValue(forKey: "NU11VLT_VAULT")
        env.removeValue(forKey: "NU11VLT_KEYSTORE")
        env["HOME"] = cli.root
        env["XDG_DATA_HOME"] = cli.root + "/elsewhere-data"
        env["XDG_STATE_HOME"] = cli.root + "/elsewhere-state"
        let saved = cli.environment
        cli.environment = env
        defer { cli.environment = saved }
        let lines = ["list", "import ~/b.txt", "status", "settings get lock.idle", "fade set \(id) 1h", "check", "list --json", "import '~/b.txt'"]
        let r = try cli.run(["shell", "--vault", cli.vault, "--keystore", cli.keystore],
                            stdin: Data((lines.joined(separator: "\n") + "\n").utf8), pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        // Only the quoted ~ (not expanded, as in a shell) is an error.
        let errors = r.stderr.split(separator: "\n").filter { $0.contains("error") }
        #expect(errors.count == 1 && errors.first?.contains("~/b.txt") == true, "\(r.stderr)")
        #expect(!r.stderr.contains("another vault") && !r.stderr.contains("does not run inside the shell"), "\(r.stderr)")
        #expect(r.out.contains(id) && r.out.contains("b.txt"), "\(r.out)")
        #expect(r.out.contains("vault      \(cli.vault)") && r.out.contains("5m") && r.out.contains("fades at"), "\(r.out)")
        cli.environment = saved
        let after = try cli.run(["log"], pinStdin: true).out.components(separatedBy: "unlock").count
        #expect(after - before == 2, "one unlock for the shell and one for this log")
    }

    @Test("under tmux: Tab completes a command, an item ID and a path")
    func tabCompletion() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try #require(try cli.importIDs([cli.file("a.txt", Array("alpha".utf8))]).first)
        try FileManager.default.createDirectory(atPath: cli.root + "/outfolder", withIntermediateDirectories: true)
        let session = try TmuxSession(cli, command: "HOME='\(cli.root)' \(CLI.binary) shell; sleep 60")
        #expect(try session.screen(until: { $0.contains("PIN or passphrase:") }).contains("PIN or passphrase:"))
        try session.send([cli.pin, "Enter"])
        _ = try session.screen(until: { $0.contains("nu11vlt>") })
        // (tmux drops a line's trailing spaces: the space each completion adds shows in the next word.)
        try session.send(["exp", "Tab"])
        #expect(try session.screen(until: { $0.contains("nu11vlt> export") }).contains("nu11vlt> export"))
        try session.send([String(id.prefix(5)), "Tab"])
        #expect(try session.screen(until: { $0.contains("nu11vlt> export \(id)") }).contains("nu11vlt> export \(id)"))
        try session.send(["--", "-o ~/outf", "Tab"])  // (after --: not a send-keys flag)
        #expect(try session.screen(until: { $0.contains("export \(id) -o ~/outf") }).contains("export \(id) -o ~/outf"))
        #expect(try session.screen(until: { $0.contains("-o ~/outfolder/") }).contains("-o ~/outfolder/"))
        try session.send(["Enter"])
        _ = try session.screen(until: { $0.contains("exported") || $0.contains("error") })
        #expect(FileManager.default.contents(atPath: cli.root + "/outfolder/a.txt") == Data("alpha".utf8))
    }
}
