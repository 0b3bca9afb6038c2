// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The image helper treated as already compromised: from inside its lock-down it tries what
/// the independent review did (io_uring, TIOCSTI, pidfd_getfd, process_vm_readv, /proc/PID/mem,
/// chmod/xattr/utimensat, kill(-1), reading $HOME and the key store, sockets, exec, an x32
/// number), against a real parent and sibling of the same user and at a terminal that is its
/// controlling one, so that anything the lock-down let through would succeed.
@Suite("Decoder sandbox")
struct SandboxTests {
    static var helper: String { (CLI.binary as NSString).deletingLastPathComponent + "/nu11vlt-image-helper" }

    /// The helper under test, the debug one and the release one where a release build exists
    /// (`make test`, `make release`, `make bench`): the probe runs on each.
    static var helpers: [String] {
        let debug = (CLI.bundled as NSString).deletingLastPathComponent + "/nu11vlt-image-helper"
        let release = ((CLI.bundled as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent + "/release/nu11vlt-image-helper"
        var out: [String] = []
        for path in [helper, debug, release] where !out.contains(path) && FileManager.default.isExecutableFile(atPath: path) {
            out.append(path)
        }
        return out
    }

    /// The kernel's Landlock ABI as nu11vlt reports it (`status`, "decoders"); 0 when the
    /// kernel has none (not built in, or not in the active LSM list).
    static let landlockABI: Int = {
        guard let cli = try? CLI(), let out = try? cli.run(["status"]).out,
              let match = out.firstMatch(of: /Landlock \(ABI (\d+)\)/) else { return 0 }
        return Int(match.1) ?? 0
    }()

    /// The start address of a process's first mapping (readable memory for process_vm_readv).
    func firstMapping(_ pid: Int32) throws -> String {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        return String(try #require(maps.split(separator: "-").first))
    }

    /// A process of the same user that is not the helper's parent.
    func sibling() throws -> Process {
        let p = try Program.start("/bin/sleep", ["60"])
        return p
    }

    /// Every escape the probe reports: each must be refused, and every one must have run.
    static let escapes = [
        "io_uring_setup", "TIOCSTI-fd1", "TIOCSTI-fd2", "ioctl-TCGETS",
        "pidfd_open-parent", "pidfd_getfd-parent", "process_vm_readv-parent", "process_vm_writev-parent",
        "ptrace-seize-parent", "open-proc-mem-parent", "kill-parent", "tgkill-parent",
        "pidfd_open-sibling", "pidfd_getfd-sibling", "process_vm_readv-sibling", "process_vm_writev-sibling",
        "ptrace-seize-sibling", "open-proc-mem-sibling", "kill-sibling", "tgkill-sibling", "kill(-1)",
        "chmod", "chown", "setxattr", "removexattr", "utimensat", "fchmod-pipe",
        "read-home-file", "read-keystore-file", "write-open-file", "create-file", "mkdir", "unlink-file", "rename-file",
        "memfd_create", "socket-tcp", "socket-unix", "socketpair", "execve", "fork",
        "read-other-fd", "write-other-fd", "prctl-dumpable", "clone3-fork",
    ]

    func targets(_ cli: CLI, sibling: Process) throws -> [String] {
        let home = cli.root + "/home"
        try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: home + "/.ssh/id_ed25519", contents: Data("PRIVATE KEY".utf8))
        try FileManager.default.createDirectory(atPath: cli.keystore, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: cli.keystore + "/master.n11k", contents: Data("key store".utf8))
        FileManager.default.createFile(atPath: cli.root + "/visible", contents: Data("seen".utf8))
        let me = getpid()
        return ["--parent", "\(me):\(try firstMapping(me))", "--sibling", "\(sibling.processIdentifier):\(try firstMapping(sibling.processIdentifier))",
                "--file", cli.root + "/visible", "--home-file", home + "/.ssh/id_ed25519",
                "--keystore-file", cli.keystore + "/master.n11k", "--new-file", cli.root + "/created"]
    }

    @Test("--probe inside the lock-down, and with the seccomp filter alone: every escape refused, at a controlling terminal, against a parent and a sibling",
          arguments: ["--probe", "--probe-seccomp"], SandboxTests.helpers)
    func probeRefusesEverything(mode: String, helper: String) throws {
        let cli = try CLI()
        let other = try sibling()
        defer { kill(other.processIdentifier, SIGKILL); other.waitUntilExit() }
        let args = try targets(cli, sibling: other)
        // `script` gives the probe a pty as its controlling terminal (TIOCSTI would work there).
        let command = ([helper, mode] + args).joined(separator: " ") + " < /dev/null"
        let r = try cli.spawn("/usr/bin/script", ["-qec", command, "/dev/null"])
        let lines = r.out.replacingOccurrences(of: "\r", with: "").split(separator: "\n").map(String.init)
        #expect(r.code == 0, "\(helper) \(mode) reports an escape:\n\(lines.filter { !$0.hasSuffix(" refused") }.joined(separator: "\n"))")
        for name in Self.escapes {
            #expect(lines.contains("\(name) refused"), "\(mode) \(name): \(lines.first { $0.hasPrefix(name + " ") } ?? "never attempted (the probe died before it)")")
        }
        for name in ["thread", "tgkill-self", "read-stdin"] {
            #expect(lines.contains("\(name) works"), "decoding needs \(name): \(lines)")
        }
        if mode == "--probe" {
            // The memory limit applies: address space past it is refused, a working set under it is not.
            for name in ["memory-limit", "memory-under-limit"] {
                #expect(lines.contains("\(name) works"), "\(name): \(lines.first { $0.hasPrefix(name + " ") } ?? "never tried")")
            }
        }
        if mode == "--probe" && Self.landlockABI > 0 {
            #expect(lines.contains { $0.hasPrefix("landlock ABI ") }, "Landlock was not applied on a kernel that has it: \(lines.last ?? "")")
        }
        // Nothing happened to the files it could name.
        #expect(!FileManager.default.fileExists(atPath: cli.root + "/created"))
        #expect(try String(contentsOfFile: cli.root + "/visible", encoding: .utf8) == "seen")
        let mode = try FileManager.default.attributesOfItem(atPath: cli.root + "/visible")[.posixPermissions] as? Int
        #expect(mode != 0o666, "the probe changed a file's mode")
    }

    @Test("Landlock alone (without seccomp) refuses every file: reading $HOME and the key store, writing, creating")
    func landlockAlone() throws {
        let cli = try CLI()
        guard Self.landlockABI > 0 else {
            // A kernel without Landlock: the second wall is missing, and nu11vlt must say so
            // (status, and one warning at every import of a photo) — that is what is tested here.
            #expect(try cli.run(["status"]).out.contains("this kernel has no Landlock"))
            try cli.initVault()
            let photo = cli.root + "/p.jpg"
            try PhotoFixtures.run(cli, "convert", ["-size", "64x48", "plasma:fractal", photo])
            let r = try cli.run(["import", photo], pinStdin: true)
            #expect(r.code == 0 && r.stderr.contains("this kernel has no Landlock"), "\(r.stderr)")
            return
        }
        let other = try sibling()
        defer { kill(other.processIdentifier, SIGKILL); other.waitUntilExit() }
        let r = try cli.spawn(Self.helper, ["--probe-landlock"] + (try targets(cli, sibling: other)))
        #expect(r.code == 0, "Landlock let a file through:\n\(r.out)")
        for name in ["read-home-file", "read-keystore-file", "write-open-file", "create-file", "mkdir", "unlink-file", "rename-file"] {
            #expect(r.out.contains("\(name) refused\n"), "\(name): \(r.out)")
        }
    }

    @Test("an x32 system call number kills the helper (SIGSYS) before the kernel sees it")
    func x32Killed() throws {
        let cli = try CLI()
        let r = try cli.spawn(Self.helper, ["--probe-x32"])
        #expect(r.code == SIGSYS && !r.out.contains("survived"), "x32 call: exit \(r.code), \(r.out)")
    }

    /// One request of the helper's pipe protocol (Nu11Media's ImageWire).
    func request(_ op: UInt8, _ arg: UInt32, _ bytes: Data) -> Data {
        var d = Data([op])
        for i in (0..<4).reversed() { d.append(UInt8(truncatingIfNeeded: arg >> (8 * UInt32(i)))) }
        for i in (0..<8).reversed() { d.append(UInt8(truncatingIfNeeded: UInt64(bytes.count) >> (8 * UInt64(i)))) }
        return d + bytes
    }

    @Test("the helper's system calls over the whole image corpus, videos, and every request are all on its allow-list")
    func traceMatchesAllowList() throws {
        let cli = try CLI()
        let strace = try #require(PhotoFixtures.tool("strace"), "strace is not installed")
        let corpus = try PhotoFixtures.corpus(cli)
        try PhotoFixtures.run(cli, "convert", ["-size", "400x300", "plasma:fractal", cli.root + "/a.webp"])
        try PhotoFixtures.run(cli, "convert", ["-size", "400x300", "plasma:fractal", cli.root + "/a.tif"])
        try PhotoFixtures.run(cli, "convert", ["-size", "300x200", "gradient:red-blue", "-alpha", "set", "-channel", "A",
                                               "-evaluate", "set", "40%", "+channel", cli.root + "/alpha.webp"])
        let files = corpus.good + corpus.bad + [cli.root + "/a.webp", cli.root + "/a.tif", cli.root + "/alpha.webp"]
        var input = Data()
        for file in files {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            for (op, arg) in [(UInt8(1), UInt32(0)), (2, 0), (3, 512), (4, 256), (4, 4096)] { input += request(op, arg, bytes) }
        }
        // The video decoder (FFmpeg, op 5) under the same lock-down: good clips, then a cut one.
        let videos = [try VideoTests.iphoneClip(cli), try VideoTests.webm(cli)]
        for video in videos { input += request(5, 0, try Data(contentsOf: URL(fileURLWithPath: video))) }
        input += request(5, 0, try Data(contentsOf: URL(fileURLWithPath: videos[0])).prefix(9000))
        let r = try cli.spawn(strace, ["-f", "-qq", "-o", cli.root + "/trace", Self.helper], input: input)
        #expect(r.code == 0, "the helper failed over the corpus: \(r.code)")
        // Every good image is answered (ok) for every request; the bad ones are refused, not fatal.
        var at = 0, answers: [Bool] = []
        let out = [UInt8](r.stdout)
        while at + 9 <= out.count {
            let length = out[(at + 1)..<(at + 9)].reduce(0) { $0 << 8 | Int($1) }
            answers.append(out[at] == 0)
            at += 9 + length
        }
        #expect(answers.count == files.count * 5 + 3, "answers: \(answers.count) for \(files.count * 5 + 3) requests")
        #expect(answers.prefix(corpus.good.count * 5).allSatisfy { $0 }, "a good image was refused: \(answers)")
        #expect(answers.suffix(3) == [true, true, false], "the videos: \(answers.suffix(3))")
        let list = try cli.spawn(Self.helper, ["--allow-list"]).out.split(separator: "\n")
        let allowed = Set(list.filter { $0.hasPrefix("allowed ") }.map { String($0.dropFirst(8)) })
        let refused = Set(list.filter { $0.hasPrefix("refused ") }.map { String($0.dropFirst(8)) })
        #expect(allowed.count >= 20 && allowed.isDisjoint(with: ["openat", "socket", "ioctl", "execve", "io_uring_setup", "kill"]))
        let trace = try String(contentsOfFile: cli.root + "/trace", encoding: .utf8).split(separator: "\n")
        let start = try #require(trace.firstIndex { $0.contains("seccomp(") }, "the trace shows no lock-down")
        var used: [String: String] = [:]
        for line in trace[(start + 1)...] {
            // By the call's name only (StraceLines): "???( <detached ...>", "+++", "---" name none.
            guard let name = StraceLines.callName(line) else { continue }
            used[name] = used[name] ?? String(line)
        }
        #expect(used.count >= 8, "the trace is not working: \(used.keys.sorted())")
        for (name, example) in used.sorted(by: { $0.key < $1.key }) where !allowed.contains(name) {
            #expect(refused.contains(name), "\(name) is not on the helper's allow-list (sandbox.c): \(example)")
        }
    }
}
