// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 58: what a client of the unlock agent checks before it trusts the socket. A command
/// that finds something wrong says so in one line and asks for the PIN instead (here, with
/// no terminal, that ends in "no terminal to ask for the PIN"); it never sends anything.
@Suite("unlock agent: the socket")
struct AgentSocketTests {
    static let noTerminal = "no terminal to ask for the PIN"

    @Test("no XDG_RUNTIME_DIR: unlock refuses in one line (no socket in /tmp); commands ask the PIN")
    func noRuntimeDir() throws {
        let cli = try CLI()
        try cli.initVault()
        cli.environment.removeValue(forKey: "XDG_RUNTIME_DIR")
        expectCleanError(try cli.run(["unlock"], pinStdin: true), code: 64, mentions: "XDG_RUNTIME_DIR is not set")
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
    }

    @Test("killed with -9: the stale socket is noticed, the PIN asked; a new unlock replaces it")
    func killedAgent() throws {
        let cli = try CLI()
        try cli.initVault()
        let pid = try AgentTests.unlock(cli)
        kill(pid, SIGKILL)
        for _ in 0..<50 where AgentTests.alive(pid) { usleep(20_000) }
        let socket = try AgentTests.socket(cli)
        let r = try cli.run(["list"])
        #expect(r.code != 0 && r.stderr.contains("stale socket") && r.stderr.contains(Self.noTerminal), "\(r.stderr)")
        let again = try AgentTests.unlock(cli)
        defer { kill(again, SIGKILL) }
        #expect(try cli.run(["list"]).code == 0)
        #expect(FileManager.default.fileExists(atPath: socket))
        #expect(try cli.run(["lock"]).code == 0)
        #expect(!AgentTests.alive(again))
    }

    @Test("the socket replaced by a regular file: not used, and unlock will not remove it")
    func regularFile() throws {
        let cli = try CLI()
        try cli.initVault()
        let pid = try AgentTests.unlock(cli)
        defer { kill(pid, SIGKILL) }
        let socket = try AgentTests.socket(cli)
        #expect(try cli.run(["lock"]).code == 0)
        FileManager.default.createFile(atPath: socket, contents: Data("not a socket".utf8), attributes: [.posixPermissions: 0o600])
        let r = try cli.run(["list"])
        #expect(r.stderr.contains("is not a socket") && r.stderr.contains(Self.noTerminal), "\(r.stderr)")
        expectCleanError(try cli.run(["unlock"], pinStdin: true), code: 64, mentions: "is not a socket of yours")
        #expect(FileManager.default.contents(atPath: socket) == Data("not a socket".utf8))
    }

    @Test("a folder of another user, or a socket served by another user's process: not used, nothing sent")
    func foreignSocket() throws {
        let setpriv = try #require(PhotoFixtures.tool("setpriv"), "setpriv is not installed")
        let cli = try CLI()
        try cli.initVault()
        let pid = try AgentTests.unlock(cli)
        defer { kill(pid, SIGKILL) }
        let folder = AgentTests.socketFolder(cli)
        let socket = try AgentTests.socket(cli)
        // The folder of another user: refused before connecting. (A folder merely open to
        // others is made private again by every command's start, for its plaintext spool.)
        chown(folder, 65534, 65534)
        var r = try cli.run(["list"])
        #expect(r.stderr.contains("belongs to another user (uid 65534)") && r.stderr.contains(Self.noTerminal), "\(r.stderr)")
        chown(folder, 0, 0)
        #expect(try cli.run(["lock"]).code == 0)

        // A fake agent run by uid 65534, its socket file then given to us (as a hostile
        // process could not, but as the client must not rely on): the peer's uid decides.
        // make test's scratch folder (the parent of cli.root) is 0700 too: traversable for this test.
        for dir in [(cli.root as NSString).deletingLastPathComponent, cli.root, cli.root + "/run"] { chmod(dir, 0o711) }
        chmod(folder, 0o777)
        let captured = cli.root + "/captured"
        FileManager.default.createFile(atPath: captured, contents: nil)
        chmod(captured, 0o666)
        let fake = try Program.start(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
            open(sys.argv[2], "a").write("listening\\n")
            while True:
                c, _ = s.accept(); data = c.recv(65536); open(sys.argv[2], "a").write("got %d\\n" % len(data)); c.close()
            """, socket, captured])
        defer { kill(fake.processIdentifier, SIGKILL) }  // (SIGTERM may be blocked in what the test runner starts)
        for _ in 0..<100 where !(((try? String(contentsOfFile: captured, encoding: .utf8)) ?? "").contains("listening")) { usleep(50_000) }
        chmod(folder, 0o700)
        chown(socket, 0, 0)
        r = try cli.run(["list"])
        #expect(r.stderr.contains("runs as another user (uid 65534)") && r.stderr.contains(Self.noTerminal), "\(r.stderr)")
        // `lock` does not talk to it either.
        expectCleanError(try cli.run(["lock"]), code: 64, mentions: "another user")
        usleep(200_000)
        let seen = ((try? String(contentsOfFile: captured, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(seen.filter { $0.hasPrefix("got") }.allSatisfy { $0 == "got 0" }, "the client sent to a fake agent: \(seen)")
    }
}
