// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Two devices and an untrusted peer through Syncthing, with no server (issue 60):
/// Tests/Sync/run.sh starts three Syncthing instances on 127.0.0.1 — A and B trusted, C a
/// receive-encrypted peer with a folder password — isolated from every other address (their
/// config written before they start; checked under strace and with ss), shares a vault folder
/// made by `nu11vlt`, and checks each convergence (Tests/Sync/syncthing_pair.py says what).
/// `make test` starts it in the background after the release build, against the release
/// `nu11vlt`; `swift test` alone runs it here against the `nu11vlt` under test.
@Suite("two devices through Syncthing")
struct SyncTests {
    @Test("A and B converge byte-identical, device-local files stay on A, no sync-conflict; C holds no plaintext name or content and decrypts to B's files; B paused and resumed catches up, a delete reaches both; nothing but 127.0.0.1 under strace; only the chosen ports listen",
          .timeLimit(.minutes(10)))
    func syncthingPair() async throws {
        let (code, output): (Int32, String)
        if let result = try await BackgroundHarness(name: "sync-test").result(waitingAtMost: 8) {
            (code, output) = result
        } else {
            try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/syncthing"),
                         "syncthing is not installed (scripts/ensure-deps.sh test installs it)")
            let r = try CLI().spawn("/bin/sh", [GUITests.repo + "/Tests/Sync/run.sh", CLI.binary])
            (code, output) = (r.code, r.out + "\n" + r.stderr)
        }
        #expect(code == 0, "sync test failed:\n\(output.suffix(6000))")
        for line in ["round 1: B holds A's", "kept on A only: .lock, .stignore, CACHEDIR.TAG", "no plaintext run",
                     "byte-identical", "round 2: B holds A's", "no UDP socket", "isolation: ", "all three stopped by PID",
                     "sync: PASS"] {
            #expect(output.contains(line), "the sync test's log lacks \"\(line)\":\n\(output.suffix(3000))")
        }
    }
}
