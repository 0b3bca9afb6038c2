// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// A software TPM (Debian swtpm) on a Unix socket in a folder of its own, started and stopped
/// by the test: each instance is "a machine". `make test` installs swtpm and tpm2-tools.
final class SoftwareTPM {
    static var available: Bool {
        ["/usr/bin/swtpm", "/usr/bin/tpm2_readclock", "/usr/bin/tpm2_setclock", "/usr/bin/tpm2_dictionarylockout"]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    let dir: String
    private let process: Process
    /// The TCTI string for `NU11VLT_TPM_TCTI` (a Unix socket: no TCP anywhere).
    var tcti: String { "swtpm:path=\(dir)/sock" }

    /// A new TPM, or (`stateFrom`) the same machine's TPM as it was when that state was saved.
    init(stateFrom: String? = nil) throws {
        dir = "/tmp/n11tpm-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        if let stateFrom {
            try FileManager.default.copyItem(atPath: stateFrom, toPath: dir + "/state")
        } else {
            try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
        }
        process = try Program.start("/usr/bin/swtpm", ["socket", "--tpm2", "--tpmstate", "dir=\(dir)/state",
                             "--server", "type=unixio,path=\(dir)/sock", "--ctrl", "type=unixio,path=\(dir)/sock.ctrl",
                             "--flags", "not-need-init,startup-clear"])
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: dir + "/sock") { usleep(20_000) }
        #expect(FileManager.default.fileExists(atPath: dir + "/sock"), "swtpm did not start")
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Stops the TPM (its permanent state stays in `dir/state`).
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)  // swtpm may ignore SIGTERM while a client is connected
        process.waitUntilExit()
    }

    /// Runs a tpm2-tools command against this TPM.
    @discardableResult
    func tool(_ name: String, _ args: [String]) throws -> (code: Int32, out: String) {
        // A file, not a pipe: a process another test starts at the same moment would inherit
        // the pipe's write end and keep it open forever.
        let path = dir + "/tool-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: path, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let p = try Program.start("/usr/bin/" + name, args, environment: ["TPM2TOOLS_TCTI": tcti, "PATH": "/usr/bin:/bin"], stdout: out, stderr: out)
        p.waitUntilExit()
        try out.close()
        return (p.terminationStatus, String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self))
    }

    /// The TPM's clock in ms.
    func clock() throws -> UInt64 {
        let text = try tool("tpm2_readclock", []).out
        let line = try #require(text.split(separator: "\n").first { $0.contains(" clock:") && !$0.contains("clock_info") })
        return try #require(UInt64(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? ""))
    }

    /// Moves the TPM's clock forward by `seconds` (it never moves back).
    func advance(seconds: UInt64) throws {
        let r = try tool("tpm2_setclock", [String(try clock() + seconds * 1000)])
        #expect(r.code == 0, "tpm2_setclock: \(r.out)")
    }

    /// Sets the dictionary-attack parameters (tries before lockout, seconds per forgiven try).
    func lockout(maxTries: Int, recoverySeconds: Int) throws {
        let r = try tool("tpm2_dictionarylockout", ["-s", "-n", "\(maxTries)", "-t", "\(recoverySeconds)", "-l", "10"])
        #expect(r.code == 0, "tpm2_dictionarylockout: \(r.out)")
        try tool("tpm2_dictionarylockout", ["-c"])
    }
}

extension CLI {
    /// A vault bound to `tpm` from `init --tpm`; returns the recovery key it printed.
    func initTPMVault(_ tpm: SoftwareTPM, extra: [String] = []) throws -> String {
        environment["NU11VLT_TPM_TCTI"] = tpm.tcti
        let r = try run(["init", "--tpm", "--kdf-memory", "19", "--kdf-iterations", "2"] + extra, pinStdin: true)
        #expect(r.code == 0, "init --tpm failed: \(r.stderr)")
        // No offline guessing with the TPM: no weak-PIN warning, even for six digits.
        #expect(!r.stderr.contains("this PIN is weak"), "\(r.stderr)")
        let key = r.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.count == 39 && $0.split(separator: "-").count == 8 }
        return try #require(key, "no recovery key in: \(r.out)")
    }
}
