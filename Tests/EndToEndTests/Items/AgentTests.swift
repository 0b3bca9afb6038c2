// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 58: `nu11vlt unlock` — one PIN for the command line, an agent on an AF_UNIX socket.
/// Commands here run without a terminal and without --pin-stdin: a command that asked for the
/// PIN would fail ("no terminal to ask for the PIN"), so every success is one PIN not asked.
@Suite("unlock agent")
struct AgentTests {
    /// `unlock` with the PIN on stdin (the one PIN entry); the agent's pid.
    static func unlock(_ cli: CLI, sourceLocation: SourceLocation = #_sourceLocation) throws -> pid_t {
        let r = try cli.run(["unlock"], pinStdin: true)
        #expect(r.code == 0, "unlock: \(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderr.contains("any program running as your user can use this vault"), "\(r.stderr)", sourceLocation: sourceLocation)
        let words = r.stderr.split(whereSeparator: { " ();".contains($0) })
        let index = try #require(words.firstIndex(of: "pid"), "no pid in: \(r.stderr)", sourceLocation: sourceLocation)
        return try #require(pid_t(words[words.index(after: index)]), sourceLocation: sourceLocation)
    }

    static func alive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        return !(stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).hasPrefix("Z") ?? true)
    }

    static func socketFolder(_ cli: CLI) -> String { cli.root + "/run/nu11vlt" }

    static func socket(_ cli: CLI) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: socketFolder(cli)).filter { $0.hasSuffix(".sock") }
        return socketFolder(cli) + "/" + (try #require(names.first, "no agent socket"))
    }

    static func unlocks(_ cli: CLI) throws -> Int {
        let r = try cli.run(["log", "--json"])
        #expect(r.code == 0, "log: \(r.stderr)")
        return r.out.components(separatedBy: "\"unlock\"").count - 1
    }

    @Test("a typical day (import a folder, list, view three photos, export an album, add a note) and the tour's reads: one PIN")
    func typicalDay() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["settings", "set", "lock.idle", "1h"], pinStdin: true).code == 0)
        let day = cli.root + "/Trips"
        try FileManager.default.createDirectory(atPath: day, withIntermediateDirectories: true)
        for (i, colour) in ["red", "green", "blue"].enumerated() {
            try PhotoFixtures.run(cli, "convert", ["-size", "40x30", "xc:\(colour)", day + "/p\(i).jpg"])
        }
        let pid = try Self.unlock(cli)
        defer { kill(pid, SIGKILL) }
        let base = try Self.unlocks(cli)

        #expect(try cli.run(["album", "create", "Trips"]).code == 0)
        let imported = try cli.run(["import", "-r", day, "--album", "Trips"])
        #expect(imported.code == 0, "\(imported.stderr)")
        let ids = imported.out.split(separator: "\n").map { String($0.prefix(32)) }
        #expect(ids.count == 3, "\(imported.out)")
        let list = try cli.run(["list"])
        #expect(list.code == 0 && ids.allSatisfy(list.out.contains), "\(list.stderr)")
        let seen = cli.root + "/seen"
        for id in ids {
            let r = try cli.run(["view", "--no-inline", id], environment: ["NU11VLT_VIEWER": "md5sum >>'\(seen)'"])
            #expect(r.code == 0, "view: \(r.stderr)")
        }
        #expect(((try? String(contentsOfFile: seen, encoding: .utf8)) ?? "").split(separator: "\n").count == 3)
        let out = cli.root + "/out"
        let export = try cli.run(["export", "--album", "Trips", "-o", "out"])  // relative: the client's folder
        #expect(export.code == 0, "\(export.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["p0.jpg", "p1.jpg", "p2.jpg"])
        #expect(FileManager.default.contents(atPath: out + "/p1.jpg") == FileManager.default.contents(atPath: day + "/p1.jpg"))
        let note = try cli.run(["note", "add", "--title", "Day one"], stdin: Data("a good day\n".utf8))
        #expect(note.code == 0, "note: \(note.stderr)")
        // More of the README tour's commands that read or add.
        for args in [["album", "create", "Later"], ["album", "list"], ["note", "list"], ["fade", "set", ids[0], "7d"],
                     ["status", "--unlock"], ["settings", "get", "lock.idle"], ["check"], ["log"], ["thumbnails", "--missing"]] {
            let r = try cli.run(args)
            #expect(r.code == 0, "\(args.joined(separator: " ")): \(r.stderr)")
        }
        // A command's exit code and its one-line error come back through the agent.
        expectCleanError(try cli.run(["export", "ffff0000", "-o", out]), code: 4)
        // One unlock for all of it: the agent's.
        #expect(try Self.unlocks(cli) == base)
        // `delete` does not go to the agent: it asks for the PIN (here: there is no terminal).
        let delete = try cli.run(["delete", ids[1]])
        #expect(delete.code != 0 && delete.stderr.contains("no terminal to ask for the PIN"), "\(delete.stderr)")

        let lock = try cli.run(["lock"])
        #expect(lock.code == 0 && lock.stderr.contains("locked"), "\(lock.stderr)")
        #expect(!Self.alive(pid), "the agent still runs after `nu11vlt lock`")
        #expect(try FileManager.default.contentsOfDirectory(atPath: Self.socketFolder(cli)).isEmpty, "the socket is left behind")
        let after = try cli.run(["list"])
        #expect(after.code != 0 && after.stderr.contains("no terminal to ask for the PIN"), "\(after.stderr)")
    }

    @Test("the agent refuses a process of another user (SO_PEERCRED), even with the socket open to it, and logs it")
    func otherUserRefused() throws {
        let setpriv = try #require(PhotoFixtures.tool("setpriv"), "setpriv is not installed")
        let cli = try CLI()
        try cli.initVault()
        let pid = try Self.unlock(cli)
        defer { kill(pid, SIGKILL) }
        let socket = try Self.socket(cli)
        let modes = [Self.socketFolder(cli), socket].map { (try? FileManager.default.attributesOfItem(atPath: $0)[.posixPermissions] as? Int) ?? -1 }
        #expect(modes == [0o700, 0o600], "folder and socket modes: \(modes.map { String($0, radix: 8) })")
        // For this test only: the folders and the socket reachable by uid 65534, so that the
        // agent's own check is what stands in its way.
        // make test's scratch folder (the parent of cli.root) is 0700 too: traversable for this test.
        for dir in [(cli.root as NSString).deletingLastPathComponent, cli.root, cli.root + "/run", Self.socketFolder(cli)] { chmod(dir, 0o711) }
        chmod(socket, 0o666)
        // A lock request: had the agent taken it, it would have ended.
        let client = """
            import json, socket, struct, sys
            s = socket.socket(socket.AF_UNIX)
            s.connect(sys.argv[1])
            body = json.dumps({"op": "lock", "argv": [], "cwd": "/", "env": []}).encode()
            s.sendall(struct.pack(">I", len(body)) + body)
            try:
                n = len(s.recv(4))
            except ConnectionResetError:  # closed unread: refused
                n = 0
            print("ANSWER", n)
            """
        let r = try cli.spawn(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", client, socket])
        #expect(r.code == 0 && r.out.contains("ANSWER 0"), "out: \(r.out) err: \(r.stderr)")
        #expect(Self.alive(pid), "the agent obeyed another user")
        // The same request from our own user is obeyed (the refusal above was the uid check's).
        chmod(Self.socketFolder(cli), 0o700)
        chmod(socket, 0o600)
        let log = try cli.run(["log"])
        #expect(log.out.contains("agent-refused") && log.out.contains("uid 65534"), "\(log.out)")
        let own = try cli.spawn("/usr/bin/python3", ["-c", client, socket])
        #expect(own.out.contains("ANSWER 4"), "\(own.out) \(own.stderr)")
        usleep(300_000)
        #expect(!Self.alive(pid))
    }

    @Test("after lock.idle (its floor, 10 s) without a command the agent ends; it is non-dumpable")
    func idleAndNonDumpable() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["settings", "set", "lock.idle", "10s"], pinStdin: true).code == 0)
        let pid = try Self.unlock(cli)
        defer { kill(pid, SIGKILL) }
        // Non-dumpable: a process of the same user without CAP_SYS_PTRACE may not attach to it
        // (EPERM), while it may attach to a dumpable process of ours (the control).
        let trace = try cli.spawn("/usr/bin/setpriv", ["--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "/usr/bin/python3", "-c", """
            import ctypes, subprocess, sys
            libc = ctypes.CDLL(None, use_errno=True)
            libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
            control = subprocess.Popen(["sleep", "30"])
            r = libc.ptrace(16, control.pid, None, None)
            print("CONTROL", r, ctypes.get_errno())
            control.kill()
            r = libc.ptrace(16, int(sys.argv[1]), None, None)
            print("AGENT", r, ctypes.get_errno())
            """, String(pid)])
        #expect(trace.out.contains("CONTROL 0 0") && trace.out.contains("AGENT -1 1"), "ptrace without CAP_SYS_PTRACE: \(trace.out) \(trace.stderr)")
        #expect(try cli.run(["list"]).code == 0)
        for _ in 0..<150 where Self.alive(pid) { usleep(100_000) }
        #expect(!Self.alive(pid), "the agent still runs after lock.idle")
        let after = try cli.run(["list"])
        #expect(after.stderr.contains("no terminal to ask for the PIN"), "\(after.stderr)")
    }
}

extension AgentTests {
    @Test("logind over D-Bus: another session's Lock is ignored; this session's Lock ends it; so does PrepareForSleep")
    func sessionLockAndSleep() throws {
        let daemon = try #require(PhotoFixtures.tool("dbus-daemon"), "dbus-daemon is not installed")
        let gdbus = try #require(PhotoFixtures.tool("gdbus"), "gdbus is not installed")
        let cli = try CLI()
        try cli.initVault()
        // A private bus standing in for the system bus.
        let address = "unix:path=\(cli.root)/bus"
        let bus = try Program.start(daemon, ["--session", "--nofork", "--address=\(address)"])
        defer { kill(bus.processIdentifier, SIGKILL) }  // (SIGTERM may be blocked in what the test runner starts)
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: cli.root + "/bus") { usleep(20_000) }
        cli.environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        cli.environment["XDG_SESSION_ID"] = "3"
        func emit(_ path: String, _ signal: String, _ args: [String] = []) throws {
            let r = try cli.spawn(gdbus, ["emit", "--system", "--object-path", path, "--signal", signal] + args)
            #expect(r.code == 0, "gdbus: \(r.stderr)")
        }
        var pid = try Self.unlock(cli)
        usleep(300_000)  // subscribed
        try emit("/org/freedesktop/login1/session/_34", "org.freedesktop.login1.Session.Lock")
        try emit("/org/freedesktop/login1", "org.freedesktop.login1.Manager.PrepareForSleep", ["false"])
        usleep(2_500_000)
        #expect(Self.alive(pid), "another session's lock, or waking, ended the agent")
        try emit("/org/freedesktop/login1/session/_33", "org.freedesktop.login1.Session.Lock")
        for _ in 0..<40 where Self.alive(pid) { usleep(100_000) }
        #expect(!Self.alive(pid), "the agent still runs after this session's Lock")
        kill(pid, SIGKILL)

        pid = try Self.unlock(cli)
        defer { kill(pid, SIGKILL) }
        usleep(300_000)
        try emit("/org/freedesktop/login1", "org.freedesktop.login1.Manager.PrepareForSleep", ["true"])
        for _ in 0..<40 where Self.alive(pid) { usleep(100_000) }
        #expect(!Self.alive(pid), "the agent still runs after PrepareForSleep(true)")
    }

    @Test("through the agent, the only socket calls are AF_UNIX (strace)")
    func onlyUnixSockets() throws {
        let strace = try #require(PhotoFixtures.tool("/usr/bin/strace"), "strace is not installed")
        let cli = try CLI()
        try cli.initVault()
        let pid = try Self.unlock(cli)
        defer { kill(pid, SIGKILL) }
        let r = try cli.spawn(strace, ["-f", "-qq", "-e", "trace=socket,connect", "-o", cli.root + "/trace", CLI.binary, "list"])
        #expect(r.code == 0, "\(r.stderr)")
        let calls = try String(contentsOfFile: cli.root + "/trace", encoding: .utf8).split(separator: "\n")
            .filter { ($0.contains("socket(") || $0.contains("connect(")) && !$0.contains("resumed") }
        #expect(!calls.isEmpty && calls.allSatisfy { $0.contains("AF_UNIX") }, "\(calls)")
    }
}
