// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The running processes as the kernel reports them in /proc (issue 57): the REAL image
/// helper (started by an import of the CLI) and the CLI, during the import and waiting at
/// its PIN prompt. (The app: the GUI test's crash pass, check_app_proc.) For each: dumpable or not, NoNewPrivs and
/// Seccomp from /proc/PID/status, and the exact descriptor set (/proc/PID/fd).
///
/// Dumpability from the outside: the tests run as root, and CAP_SYS_PTRACE reads any
/// process. So the programs run without any capability (`setpriv --bounding-set=-all`: root's
/// uid, an empty capability set), and a reader equally without capabilities opens
/// /proc/PID/environ, which the kernel allows for a process of the same uid whose
/// capabilities it holds — unless that process is not dumpable. A control process (`sleep`,
/// started the same way) proves that the reader can read a dumpable one.
@Suite("Decoder sandbox: the real processes from /proc")
struct SandboxProcTests {
    static let setpriv = "/usr/bin/setpriv"
    static let capless = ["--bounding-set=-all", "--inh-caps=-all", "--"]

    static var helperPath: String { (CLI.binary as NSString).deletingLastPathComponent + "/nu11vlt-image-helper" }

    /// /proc/PID/status as fields ("NoNewPrivs" → "1").
    static func status(_ pid: Int32) -> [String: String] {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return [:] }
        var out: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { out[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return out
    }

    /// Whether a capability-less reader of the same uid may open /proc/PID/environ (the
    /// process is dumpable).
    static func readableByPeer(_ pid: Int32) -> Bool {
        Program.run(setpriv, capless + ["/bin/cat", "/proc/\(pid)/environ"]) == 0
    }

    /// The descriptor set: number → what it points at ("pipe:[…]" shortened to "pipe").
    static func descriptors(_ pid: Int32, raw: Bool = false) -> [Int: String] {
        var out: [Int: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? [] {
            guard let n = Int(name), let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(name)") else { continue }
            out[n] = raw ? target : target.hasPrefix("pipe:") ? "pipe" : target.hasPrefix("socket:") ? "socket" : target
        }
        return out
    }

    /// The children of `parent` whose command name starts with `prefix`.
    static func children(of parent: Int32, named prefix: String) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let pid = Int32(entry),
                  let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8), comm.hasPrefix(prefix),
                  status(pid)["PPid"] == "\(parent)" else { return nil }
            return pid
        }
    }

    /// A control: a dumpable process without capabilities is readable by the reader.
    func expectReaderWorks() throws {
        let control = try Program.start(Self.setpriv, Self.capless + ["/bin/sleep", "30"])
        defer { kill(control.processIdentifier, SIGKILL); control.waitUntilExit() }
        #expect(Wait.until(seconds: 10) { Self.status(control.processIdentifier)["CapBnd"] == "0000000000000000"
            && (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(control.processIdentifier)/exe")) == "/usr/bin/sleep" })
        #expect(Self.readableByPeer(control.processIdentifier), "the capability-less reader cannot read even a dumpable process: the check would prove nothing")
    }

    /// The helper's walls as /proc shows them, and its descriptors: 0 and 1 the pipes to
    /// its parent, 2 /dev/null, nothing else.
    func expectLockedDown(_ helper: Int32, _ who: String) {
        #expect(Wait.until(seconds: 30) { Self.status(helper)["Seccomp"] == "2" }, "\(who): the helper never entered its seccomp filter")
        let s = Self.status(helper)
        #expect(s["NoNewPrivs"] == "1", "\(who): NoNewPrivs \(s["NoNewPrivs"] ?? "?")")
        #expect(s["Seccomp"] == "2", "\(who): Seccomp \(s["Seccomp"] ?? "?")")
        if let filters = s["Seccomp_filters"] { #expect(filters == "1", "\(who): \(filters) seccomp filters") }
        #expect(!Self.readableByPeer(helper), "\(who): the helper is dumpable (a process of the same user may ptrace it, read its memory)")
        let fds = Self.descriptors(helper)
        #expect(fds == [0: "pipe", 1: "pipe", 2: "/dev/null"], "\(who): the helper's descriptors: \(fds)")
    }

    @Test("the helper an import starts: not dumpable, NoNewPrivs, one seccomp filter, descriptors 0-2 only; the CLI not dumpable")
    func importHelper() throws {
        try expectReaderWorks()
        let cli = try CLI()
        try cli.initVault()
        let roll = cli.root + "/roll"
        try FileManager.default.createDirectory(atPath: roll, withIntermediateDirectories: true)
        try PhotoFixtures.run(cli, "/usr/bin/python3", ["-c", """
            from PIL import Image
            for i in range(6):
                Image.effect_noise((1600, 1200), 30 + i).convert("RGB").save('\(roll)/p%02d.jpg' % i, quality=85)
            """])
        let pin = Pipe()
        let process = try Program.start(Self.setpriv, Self.capless + [CLI.binary, "import", "-r", roll, "--pin-stdin"],
                                        environment: cli.environment, directory: cli.root, stdin: pin)
        let pid = process.processIdentifier
        pin.fileHandleForWriting.write(Data((cli.pin + "\n").utf8))
        try pin.fileHandleForWriting.close()
        // The first helper the import starts; the import is then stopped, so the helper stays.
        var helper: Int32?
        let seen = Wait.until(seconds: 60) {
            helper = Self.children(of: pid, named: "nu11vlt-image").first
            if helper != nil { kill(pid, SIGSTOP) }
            return helper != nil || !process.isRunning
        }
        defer {
            kill(pid, SIGCONT)
            process.waitUntilExit()
        }
        let found = try #require(seen ? helper : nil, "no helper was seen while the import ran")
        #expect(Self.status(pid)["NoNewPrivs"] == "0" && Self.status(pid)["Seccomp"] == "0")
        #expect(!Self.readableByPeer(pid), "the CLI is dumpable while it decrypts")
        expectLockedDown(found, "import")
    }

    @Test("the CLI at its PIN prompt: not dumpable, no filter, no file or folder open")
    func cliAtPrompt() throws {
        try expectReaderWorks()
        let cli = try CLI()
        try cli.initVault()
        let pin = Pipe()
        let process = try Program.start(Self.setpriv, Self.capless + [CLI.binary, "list", "--pin-stdin"],
                                        environment: cli.environment, directory: cli.root, stdin: pin)
        let pid = process.processIdentifier
        defer {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
        #expect(Wait.untilReading(pid, fd: 0, executable: CLI.binary), "the CLI never waited for its PIN")
        let s = Self.status(pid)
        // The CLI is not sandboxed (it starts the user's viewer and editor, which may need
        // what a filter would refuse); its walls are hygiene: no core, not dumpable.
        #expect(s["NoNewPrivs"] == "0" && s["Seccomp"] == "0", "the CLI's status: \(s)")
        #expect(!Self.readableByPeer(pid), "the CLI waiting for the PIN is dumpable")
        let fds = Self.descriptors(pid)
        // 0 the PIN's pipe, 1 and 2 where the test sent them; beyond them what the Swift
        // runtime and Dispatch make for themselves (an epoll, an eventfd, a timerfd) and what
        // Foundation's Process lets the test runner's sockets and pipes leak into a child: no
        // file or folder — nothing of the vault, the key store or the home is open before the PIN.
        #expect(fds[0] == "pipe" && fds[1] == "/dev/null" && fds[2] == "/dev/null", "the CLI's standard descriptors: \(fds)")
        let other = fds.filter { $0.key > 2 && $0.value.hasPrefix("/") && $0.value != "/dev/null" }
        #expect(other.isEmpty, "the CLI at its PIN prompt holds \(other)")
        // No helper before the PIN: the CLI starts helpers only when it decodes.
        #expect(Self.children(of: pid, named: "nu11vlt-image").isEmpty)
    }
}
