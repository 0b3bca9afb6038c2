// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Runs the built `nu11vlt` binary, as a user or a script would.
final class CLI {
    struct Outcome {
        let code: Int32
        let stdout: Data
        let stderr: String
        var out: String { String(decoding: stdout, as: UTF8.self) }
    }

    static let binary: String = {
        // `make test` runs the release build it has just made, the binaries a user installs
        // (NU11VLT_TEST_BIN_DIR); a plain `swift test` (and `make mutants`, which builds each
        // mutant in debug) the products next to the test bundle.
        if let dir = ProcessInfo.processInfo.environment["NU11VLT_TEST_BIN_DIR"], !dir.isEmpty {
            // Its real path (.build/release is a link): tests compare it with /proc/PID/exe.
            return URL(fileURLWithPath: dir).resolvingSymlinksInPath().path + "/nu11vlt"
        }
        return bundled
    }()

    /// The `nu11vlt` built with the tests (debug), next to the test bundle.
    static let bundled: String = {
        // The test bundle sits next to the products (…/.build/debug/Nu11VLTPackageTests.xctest).
        var dir = Bundle.main.bundleURL
        if dir.pathExtension == "xctest" { dir = dir.deletingLastPathComponent() }
        for candidate in [dir, Bundle.main.bundleURL.deletingLastPathComponent(),
                          URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("nu11vlt").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return dir.appendingPathComponent("nu11vlt").path
    }()

    let root: String
    let pin: String
    var environment: [String: String]

    init(pin: String = "e2e passphrase") throws {
        // Short (12 hex digits of a UUID): a socket's path has room for 107 bytes, and the unlock
        // agent's lives under root/run (make test's TMPDIR is itself /dev/shm/nu11vlt-tests.XXXXXX).
        let unique = UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        root = FileManager.default.temporaryDirectory.appendingPathComponent("n11e2e-\(unique)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        self.pin = pin
        var env = ProcessInfo.processInfo.environment
        env["NU11VLT_VAULT"] = root + "/vault"
        env["NU11VLT_KEYSTORE"] = root + "/keystore"
        env.removeValue(forKey: "NU11VLT_TEST_BIN_DIR")
        env.removeValue(forKey: "NU11VLT_VIEWER")
        // Plaintext for viewers and editors goes to a private folder of this test only, so a
        // test looks only at what it made (never at other processes' files in /dev/shm).
        try FileManager.default.createDirectory(atPath: root + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        env["XDG_RUNTIME_DIR"] = root + "/run"
        environment = env
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    var vault: String { root + "/vault" }
    var keystore: String { root + "/keystore" }

    /// When set (e.g. "+1h"), every later command runs that far ahead under faketime, which
    /// moves the wall and boot clocks together as a real wait would: the tests' way to let a
    /// deadline pass without sleeping. Only ever moved forward (a clock that goes back is a
    /// tamper signal the vault reacts to).
    var clockAhead: String?

    /// Runs `nu11vlt args…`; with `pinStdin` the PIN is written to its stdin.
    @discardableResult
    func run(_ args: [String], stdin: Data? = nil, pinStdin: Bool = false, environment extra: [String: String] = [:]) throws -> Outcome {
        var input = stdin ?? Data()
        var arguments = args
        if pinStdin {
            arguments.append("--pin-stdin")
            input = Data((pin + "\n").utf8) + input
        }
        if let clockAhead {
            try #require(FileManager.default.isExecutableFile(atPath: ClockTests.faketime), "faketime is not installed (make test installs it)")
            return try spawn(ClockTests.faketime, ["-f", clockAhead, CLI.binary] + arguments, input: input, environment: extra)
        }
        return try spawn(CLI.binary, arguments, input: input, environment: extra)
    }

    /// Runs with the PIN on file descriptor 3 (a shell here-document), leaving stdin free.
    @discardableResult
    func runPinFD(_ args: [String], stdin: Data? = nil, pin: String? = nil) throws -> Outcome {
        let script = "exec \"$0\" \"$@\" --pin-fd 3 3<<'PINEOF'\n\(pin ?? self.pin)\nPINEOF\n"
        return try spawn("/bin/sh", ["-c", script, CLI.binary] + args, input: stdin ?? Data(), environment: [:])
    }

    /// Any program, with this vault's environment.
    @discardableResult
    func spawn(_ executable: String, _ args: [String], input: Data = Data(), environment extra: [String: String] = [:]) throws -> Outcome {
        let outPath = root + "/.out-\(UUID().uuidString)"
        let errPath = root + "/.err-\(UUID().uuidString)"
        let inPath = root + "/.in-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: outPath, contents: nil)
        FileManager.default.createFile(atPath: errPath, contents: nil)
        FileManager.default.createFile(atPath: inPath, contents: input)
        defer { for p in [outPath, errPath, inPath] { try? FileManager.default.removeItem(atPath: p) } }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let inp = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
        var (executable, args) = (executable, args)
        if let log = Self.cpuLog {
            // Profiling the suite (Tests/README.md): each child's CPU time, by test.
            let test = (Test.current?.displayName ?? Test.current?.name ?? "?").replacingOccurrences(of: "\t", with: " ")
                .replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "%", with: "%%")
            (executable, args) = ("/usr/bin/time", ["-a", "-o", log, "-f", "\(test)\t%U\t%S\t%e", executable] + args)
        }
        let process = try Program.start(executable, args, environment: environment.merging(extra) { $1 }, directory: root, stdin: inp, stdout: out, stderr: err)
        process.waitUntilExit()
        try out.close()
        try err.close()
        try inp.close()
        return Outcome(code: process.terminationStatus,
                       stdout: try Data(contentsOf: URL(fileURLWithPath: outPath)),
                       stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self))
    }

    /// NU11VLT_TEST_CPU_LOG: a file that gets one line per program the tests run ("test, user
    /// and system CPU seconds, wall seconds"), to find where the suite's time goes.
    static let cpuLog = ProcessInfo.processInfo.environment["NU11VLT_TEST_CPU_LOG"]

    /// Creates a vault at the KDF floor (a cost any user may choose).
    func initVault() throws {
        let r = try run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true)
        #expect(r.code == 0, "init failed: \(r.stderr)")
    }

    func file(_ name: String, _ bytes: [UInt8]) -> String {
        let path = root + "/" + name
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    func importIDs(_ paths: [String], extra: [String] = []) throws -> [String] {
        let r = try run(["import"] + extra + paths, pinStdin: true)
        // Required, not expected: callers index the IDs, and a failed import must fail the test,
        // not crash the whole suite on an empty array.
        try #require(r.code == 0, "import failed: \(r.stderr)")
        return r.out.split(separator: "\n").map { String($0.prefix(32)) }
    }

    func listJSON(_ extra: [String] = []) throws -> [[String: Any]] {
        let r = try run(["list", "--json"] + extra, pinStdin: true)
        #expect(r.code == 0, "list failed: \(r.stderr)")
        // Not JSON, or not an array, is a failure: an empty result must never pass by accident.
        let document = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any], "list --json gave: \(r.out)")
        return try #require(document["items"] as? [[String: Any]], "list --json has no items array: \(r.out)")
    }
}

/// Errors are one line with a hint, never a crash or a stack trace.
func expectCleanError(_ r: CLI.Outcome, code: Int32, mentions: String? = nil,
                      sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(r.code == code, "exit \(r.code), expected \(code); stderr: \(r.stderr)", sourceLocation: sourceLocation)
    let lines = r.stderr.split(separator: "\n")
    #expect(lines.count >= 1, "no error message", sourceLocation: sourceLocation)
    #expect(!r.stderr.contains("Fatal error") && !r.stderr.contains("Stack dump"), "crash: \(r.stderr)", sourceLocation: sourceLocation)
    // One error line with a hint; anything else on stderr is a gate notice printed before it.
    let errors = lines.filter { $0.hasPrefix("nu11vlt: error: ") }
    #expect(errors.count == 1 && errors[0].contains("hint:") && lines.allSatisfy { $0.hasPrefix("nu11vlt: ") },
            "not one error line with a hint: \(r.stderr)", sourceLocation: sourceLocation)
    if let mentions {
        #expect(r.stderr.contains(mentions), "'\(mentions)' not in: \(r.stderr)", sourceLocation: sourceLocation)
    }
}

/// Whether this machine lets the tests mount a tmpfs (root, or a user namespace): tests that
/// need one are reported as skipped by the test framework where it does not — never passed.
enum Mounts {
    static let available: Bool = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("n11-mount-probe-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func run(_ tool: String, _ args: [String]) -> Bool {
            guard let p = try? Program.start(tool, args) else { return false }
            p.waitUntilExit()
            return p.terminationStatus == 0
        }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir]) else { return false }
        return run("/bin/umount", [dir])
    }()
}
