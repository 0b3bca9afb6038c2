// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// `recovery setup` writes the new phrase's seals into the index, then into each sidecar
/// (FORMAT.md §2.2). Failing at a sidecar after the index's write had cleared the pending seals,
/// it left that sidecar with the revoked phrase's seal and the next unlock nothing to finish it
/// from: with the index lost, the phrase the setup showed did not bring that item back.
extension FaultTests {
    @Test("recovery setup failing at its sidecar writes: the next unlock finishes them, and the shown phrase recovers every item from the folder alone")
    func recoverySetupSidecarWrites() throws {
        try run("recovery setup (sidecars)", Scenario(
            prepare: { cli in
                let ids = try cli.importIDs([cli.file("a.txt", Array("alpha".utf8)), cli.file("b.txt", Array("bravo".utf8))])
                return [ids[0]: Data("alpha".utf8), ids[1]: Data("bravo".utf8)]
            },
            command: { _ in [CLI.binary, "recovery", "setup", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, _ in
                guard let phrase = try? String(contentsOfFile: cli.root + "/shown-phrase", encoding: .utf8) else { return cli.pin }
                // The next unlock finishes the setup; then the key store and the index are lost.
                let listed = try cli.run(["list"], pinStdin: true)
                #expect(listed.code == 0, "\(listed.stderr)")
                try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost-keystore")
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cli.vault + "/index.sqlite" + suffix) }
                let recovered = try cli.recover(phrase: phrase, newPIN: "recovered pin 3")
                #expect(recovered.code == 0 && recovered.out.contains("2 item(s) recovered"),
                        "the shown phrase does not recover every item from the folder: \(recovered.out) \(recovered.stderr)")
                return "recovered pin 3"
            },
            report: { cli, r in
                if let shown = SidecarRepairTests.phrase(in: r.out) {
                    try Data(shown.utf8).write(to: URL(fileURLWithPath: cli.root + "/shown-phrase"))
                }
            }), pick: { log in log.calls(under: "vault/Meta/") })
    }
}
