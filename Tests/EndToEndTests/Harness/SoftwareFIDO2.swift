// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The project's software FIDO2 authenticator (Tests/Fixtures/soft_fido2.py) on a Unix socket
/// in a folder of its own: each instance is one security key. nu11vlt reaches it through
/// `NU11VLT_FIDO2_DEVICE=unix:PATH` (debug builds only). `make test` installs python3-fido2.
final class SoftwareFIDO2 {
    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
            && Program.run("/usr/bin/python3", ["-c", "import fido2.cbor, cryptography"]) == 0
    }

    let dir: String
    private var process: Process?
    private let pin: String?
    var device: String { "unix:\(dir)/sock" }
    var statePath: String { dir + "/state.json" }

    /// A new key; `pin`: its own PIN (clientPIN), none when nil.
    init(pin: String? = nil) throws {
        dir = "/tmp/n11fido-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        self.pin = pin
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Starts (or re-plugs) the key; `denyTouch`: nobody touches it.
    func start(denyTouch: Bool = false) throws {
        stop()
        try? FileManager.default.removeItem(atPath: dir + "/sock")
        var args = [Repo.path("Tests/Fixtures/soft_fido2.py"), "--socket", dir + "/sock", "--state", statePath]
        if let pin { args += ["--pin", pin] }
        if denyTouch { args.append("--deny-touch") }
        process = try Program.start("/usr/bin/python3", args)
        #expect(Wait.until(seconds: 30) { FileManager.default.fileExists(atPath: dir + "/sock") }, "the software authenticator did not start")
    }

    /// Unplugs the key.
    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: dir + "/sock")
    }

    /// The key's own PIN tries left, from its state.
    func retries() throws -> Int {
        let state = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statePath))) as? [String: Any])
        return try #require(state["retries"] as? Int)
    }
}

extension CLI {
    /// Runs with `key` as the security key and the key's own PIN (when given) on descriptor 4.
    @discardableResult
    func runWithKey(_ args: [String], key: SoftwareFIDO2?, keyPIN: String? = nil, pinStdin: Bool = false) throws -> Outcome {
        let device = key?.device ?? "unix:\(root)/no-such-key"
        var arguments = args
        var script = "exec \"$0\" \"$@\""
        if let keyPIN {
            arguments += ["--key-pin-fd", "4"]
            script += " 4<<'KEYPIN'\n\(keyPIN)\nKEYPIN\n"
        }
        if pinStdin { arguments.append("--pin-stdin") }
        // The debug build: only it takes the software key's unix: socket (a release build refuses it).
        return try spawn("/bin/sh", ["-c", script, CLI.bundled] + arguments, input: pinStdin ? Data((pin + "\n").utf8) : Data(),
                         environment: ["NU11VLT_FIDO2_DEVICE": device])
    }
}
