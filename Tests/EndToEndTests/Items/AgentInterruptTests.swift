// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 58: Ctrl-C at a client stops every long command the unlock agent runs for it, not
/// only `import` — an export of every item (the agent wrote on after the client was gone,
/// files appearing after the user had cancelled), a share, a check.
@Suite("unlock agent: Ctrl-C stops every long command")
struct AgentInterruptTests {
    /// `count` files of a few KiB each, imported through the agent.
    func seeded(_ cli: CLI, count: Int) throws -> pid_t {
        let folder = cli.root + "/many"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for i in 0..<count { FileManager.default.createFile(atPath: folder + "/f\(i).bin", contents: Data(repeating: UInt8(i % 251), count: 4096 + i)) }
        let pid = try AgentTests.unlock(cli)
        let r = try cli.run(["import", "-r", folder])
        #expect(r.code == 0, "import: \(r.stderr)")
        return pid
    }

    /// The CPU time (clock ticks) a process has used.
    static func ticks(_ pid: pid_t) -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 13,
              let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return user + system
    }

    /// Starts `args` through the agent, interrupts it once `started` holds, and checks the
    /// client ended as interrupted within 15 s, saying so. Returns what the client printed.
    /// With `agent`, the agent is stopped (SIGSTOP) from the moment `started` holds until the
    /// client has been interrupted, so a short command cannot finish first.
    func interrupt(_ cli: CLI, _ args: [String], agent: pid_t? = nil, started: @escaping () -> Bool) throws -> String {
        let err = cli.root + "/client-\(args[0]).err"
        FileManager.default.createFile(atPath: err, contents: nil)
        let client = try Program.start(CLI.binary, args, environment: cli.environment, directory: cli.root,
                                       stderr: try FileHandle(forWritingTo: URL(fileURLWithPath: err)))
        #expect(Wait.until(seconds: 60, started), "\(args[0]) did not start")
        if let agent { kill(agent, SIGSTOP) }
        kill(client.processIdentifier, SIGINT)
        if let agent {
            usleep(200_000)
            kill(agent, SIGCONT)
        }
        let asked = Date()
        client.waitUntilExit()
        let said = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        #expect(Date().timeIntervalSince(asked) < 15, "the client took \(Date().timeIntervalSince(asked)) s to stop")
        #expect(client.terminationReason == .uncaughtSignal && client.terminationStatus == SIGINT,
                "\(args[0]): \(client.terminationReason) \(client.terminationStatus); \(said)")
        #expect(said.contains("interrupted"), "\(args[0]): \(said)")
        return said
    }

    func files(_ folder: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() }

    @Test("export --all through the agent, Ctrl-C: it stops there (no file appears after), no partial file, the agent serves on")
    func export() throws {
        let cli = try CLI()
        try cli.initVault()
        let total = 600
        let pid = try seeded(cli, count: total)
        defer { kill(pid, SIGKILL) }
        let out = cli.root + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        _ = try interrupt(cli, ["export", "--all", "-o", out]) { self.files(out).count >= 10 }
        let stopped = files(out)
        usleep(1_500_000)
        let later = files(out)
        #expect(later == stopped, "the agent went on exporting after Ctrl-C: \(stopped.count) then \(later.count) files")
        #expect(later.count < total, "everything was exported: Ctrl-C came too late to tell")
        // Every file there is whole (all or nothing per file): the same size as its source.
        for name in later {
            let size = (try? FileManager.default.attributesOfItem(atPath: out + "/" + name)[.size] as? Int) ?? -1
            let source = (try? FileManager.default.attributesOfItem(atPath: cli.root + "/many/" + name)[.size] as? Int) ?? -2
            #expect(size == source, "\(name): \(size) bytes, its source \(source)")
        }
        #expect(AgentTests.alive(pid), "the agent ended")
        #expect(try cli.run(["list", "--limit", "1"]).code == 0)
    }

    @Test("check through the agent, Ctrl-C: it stops, the agent serves on; a share through the agent, Ctrl-C: no share file is left")
    func checkAndShare() throws {
        let cli = try CLI()
        try cli.initVault()
        let pid = try seeded(cli, count: 1500)
        defer { kill(pid, SIGKILL) }
        // check: its progress line reaches the terminal only with one; the agent's CPU is the
        // sign it runs (1,500 items take it well over the 50 ms waited for).
        var before = Self.ticks(pid)
        _ = try interrupt(cli, ["check"], agent: pid) { Self.ticks(pid) >= before + 5 }
        #expect(AgentTests.alive(pid), "the agent ended")
        let key = cli.root + "/age.key"
        #expect(try cli.spawn("/usr/bin/age-keygen", ["-o", key]).code == 0)
        let recipient = try cli.spawn("/usr/bin/age-keygen", ["-y", key]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        let share = cli.root + "/all.age"
        let ids = try cli.listJSON(["--all"]).compactMap { $0["id"] as? String }
        before = Self.ticks(pid)
        _ = try interrupt(cli, ["share", "--to", recipient, "-o", share] + ids, agent: pid) { Self.ticks(pid) >= before + 5 }
        usleep(1_500_000)
        #expect(!FileManager.default.fileExists(atPath: share), "a share file appeared after Ctrl-C")
        #expect(files(cli.root).filter { $0.contains("n11tmp") }.isEmpty, "a temporary file was left: \(files(cli.root))")
        #expect(AgentTests.alive(pid), "the agent ended")
    }
}
