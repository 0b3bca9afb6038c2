// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The image helper's seccomp filter as a whole table, from the outside (issue 57): a test
/// program (Tests/Fixtures/seccomp_table.c) linked with the helper's own sandbox.c installs
/// the helper's exact filter in a forked child per probe and tries every system call number
/// 0…520 (all arguments 0), the argument edges of every conditional rule, x32 numbers and the
/// i386 entry; the verdicts must equal the table below, entry for entry. Adding a call to the
/// allow-list, dropping one, or loosening any argument check changes a line here.
@Suite("Decoder sandbox: the filter's whole table")
struct SandboxTableTests {
    /// The sweep's verdicts that are not EPERM ("E1"), by number (x86_64). "allow": the
    /// helper's filter lets the call through (the probe's marker filter then stops it, so
    /// nothing runs); "ran": getpid, which the probe itself needs, went through both filters.
    static let sweep: [Int: (name: String, verdict: String)] = [
        0: ("read", "allow"),             // fd 0: arguments are all 0 here
        3: ("close", "allow"),
        9: ("mmap", "allow"),
        10: ("mprotect", "allow"),
        11: ("munmap", "allow"),
        12: ("brk", "allow"),
        13: ("rt_sigaction", "allow"),
        14: ("rt_sigprocmask", "allow"),
        15: ("rt_sigreturn", "allow"),
        24: ("sched_yield", "allow"),
        25: ("mremap", "allow"),
        28: ("madvise", "allow"),
        35: ("nanosleep", "allow"),
        39: ("getpid", "ran"),
        60: ("exit", "allow"),
        99: ("sysinfo", "allow"),
        131: ("sigaltstack", "allow"),
        186: ("gettid", "allow"),
        202: ("futex", "allow"),
        204: ("sched_getaffinity", "allow"),
        219: ("restart_syscall", "allow"),
        228: ("clock_gettime", "allow"),
        230: ("clock_nanosleep", "allow"),
        231: ("exit_group", "allow"),
        273: ("set_robust_list", "allow"),
        318: ("getrandom", "allow"),
        334: ("rseq", "allow"),
        435: ("clone3", "E38"),           // ENOSYS: glibc falls back to clone, whose flags are checked
        // write (1), prctl (157), clone (56), tgkill (234): refused with all arguments 0;
        // their allowed argument values are in `edges`.
    ]

    static let sweepLast = 520

    /// Every argument edge and other-ABI probe, and its verdict.
    static let edges: [String: String] = [
        // read: fd 0 only, compared on the low 32 bits (the kernel's fd is an unsigned int)
        "read(fd=0)": "allow", "read(fd=0x1)": "E1", "read(fd=0x2)": "E1", "read(fd=0x3)": "E1", "read(fd=0x4)": "E1",
        "read(fd=0xffffffff)": "E1", "read(fd=0x100000000)": "allow", "read(fd=0x100000001)": "E1", "read(fd=0,count=1)": "allow",
        // write: fds 1 and 2 only
        "write(fd=0)": "E1", "write(fd=0x1)": "allow", "write(fd=0x2)": "allow", "write(fd=0x3)": "E1", "write(fd=0x4)": "E1",
        "write(fd=0xffffffff)": "E1", "write(fd=0x100000000)": "E1", "write(fd=0x100000001)": "allow", "write(fd=1,count=1)": "allow",
        // prctl: PR_SET_NAME (15) only
        "prctl(option=0)": "E1", "prctl(option=0x4)": "E1", "prctl(option=0xe)": "E1", "prctl(option=0xf)": "allow",
        "prctl(option=0x10)": "E1", "prctl(option=0x16)": "E1", "prctl(option=0x26)": "E1", "prctl(option=0x3b)": "E1",
        "prctl(option=0x10000000f)": "allow", "prctl(option=0xffffffff)": "E1",
        // clone: only with CLONE_THREAD (bit 16) in the low word
        "clone(flags=0)": "E1", "clone(flags=THREAD|VM|SIGHAND)": "allow", "clone(flags=~THREAD)": "E1", "clone(flags=THREAD<<32)": "E1",
        // tgkill: this process only
        "tgkill(tgid=self+0)": "allow", "tgkill(tgid=self+1)": "E1", "tgkill(tgid=self-1)": "E1", "tgkill(tgid=self+2)": "E1",
        "tgkill(tgid=0)": "E1", "tgkill(tgid=1)": "E1", "tgkill(tgid=-1)": "E1", "kill(pid=0)": "E1", "tkill(tid=0)": "E1",
        // another ABI kills the process (SIGSYS), even for calls allowed in x86_64's
        "x32 nr 0": "signal 31", "x32 nr 1": "signal 31", "x32 nr 39": "signal 31", "x32 nr 3": "signal 31",
        "x32 nr 231": "signal 31", "x32 nr 1073741823": "signal 31", "i386 getpid": "signal 31", "i386 write(fd=1)": "signal 31",
        // far out of the table (0x7fffffff has the x32 bit)
        "nr 0x3e8": "E1", "nr 0xfff": "E1", "nr 0x7fffffff": "signal 31", "nr 0x80000000": "E1",
    ].merging((0..<32).map { bit in ("clone(flags=1<<\(bit))", bit == 16 ? "allow" : "E1") }) { a, _ in a }

    /// The probe program, built once per run from the fixture and the helper's sandbox.c.
    static let program: String? = {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("nu11-seccomp-table-\(getpid())").path
        let status = Program.run("/usr/bin/cc", ["-O1", "-I", Repo.path("Sources/CNu11Image/include"), "-o", out,
                                                 Repo.path("Tests/Fixtures/seccomp_table.c"), Repo.path("Sources/CNu11Image/sandbox.c")],
                                 stderr: FileHandle.standardError)
        return status == 0 ? out : nil
    }()

    /// x86_64's names, for messages only.
    static let names: [Int: String] = {
        guard let text = try? String(contentsOfFile: "/usr/include/x86_64-linux-gnu/asm/unistd_64.h", encoding: .utf8) else { return [:] }
        var out: [Int: String] = [:]
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ")
            if f.count == 3, f[0] == "#define", f[1].hasPrefix("__NR_"), let n = Int(f[2]) { out[n] = String(f[1].dropFirst(5)) }
        }
        return out
    }()

    @Test("every system call number and every argument edge: the verdicts equal the table kept here")
    func wholeTable() throws {
        #if arch(x86_64)
        let program = try #require(Self.program, "the probe program did not compile (cc, Tests/Fixtures/seccomp_table.c)")
        let pipe = Pipe()
        let process = try Program.start(program, [], stdout: pipe)
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        var seen: [String: String] = [:]
        var trapped: [Int: String] = [:]
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            if let m = line.firstMatch(of: /^nr (\d+) trapped \((.*)\)$/), let n = Int(m.1) {
                trapped[n] = String(m.2)
                continue
            }
            guard let m = line.firstMatch(of: /^(.*) (allow|ran|E\d+|signal \d+|exit \d+)$/) else {
                Issue.record("an unreadable line: \(line)")
                continue
            }
            #expect(seen[String(m.1)] == nil, "probed twice: \(m.1)")
            seen[String(m.1)] = String(m.2)
        }
        // The sweep: every number, in order.
        var differ: [String] = []
        for nr in 0...Self.sweepLast {
            let want = Self.sweep[nr]?.verdict ?? "E1"
            let name = Self.sweep[nr]?.name ?? Self.names[nr] ?? "unassigned"
            if let how = trapped[nr] {
                // A number this machine traps before any filter (a hypervisor's private call):
                // no filter decides it, here or in the helper. Only numbers the helper refuses.
                #expect(want == "E1", "nr \(nr) (\(name)) never reaches seccomp on this machine (\(how)), but the table allows it")
                continue
            }
            let got = seen.removeValue(forKey: "nr \(nr)")
            if got != want { differ.append("nr \(nr) (\(name)): \(got ?? "not probed"), the table says \(want)") }
        }
        #expect(trapped.count <= 4, "too many numbers never reach seccomp: \(trapped)")
        for (label, want) in Self.edges.sorted(by: { $0.key < $1.key }) {
            let got = seen.removeValue(forKey: label)
            if got != want { differ.append("\(label): \(got ?? "not probed"), the table says \(want)") }
        }
        #expect(differ.isEmpty, "the helper's filter (Sources/CNu11Image/sandbox.c) differs from its table:\n\(differ.joined(separator: "\n"))")
        #expect(seen.isEmpty, "probes the table does not name: \(seen)")
        // The table agrees with the helper's own list of names (--allow-list reads the same rules).
        let allowedNames = Set(Self.sweep.values.filter { $0.verdict != "E38" }.map(\.name)).union(["write", "prctl", "clone", "tgkill"])
        let helper = (CLI.binary as NSString).deletingLastPathComponent + "/nu11vlt-image-helper"
        if FileManager.default.isExecutableFile(atPath: helper) {
            let cli = try CLI()
            let listed = Set(try cli.spawn(helper, ["--allow-list"]).out.split(separator: "\n")
                .filter { $0.hasPrefix("allowed ") }.map { String($0.dropFirst(8)) })
            #expect(listed == allowedNames, "the helper lists \(listed.symmetricDifference(allowedNames).sorted()) differently")
        }
        #endif
    }
}
