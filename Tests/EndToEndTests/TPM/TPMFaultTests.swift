// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Fault injection for the commands that write a TPM-bound key store: each trial runs on a
/// copy of the TPM as it was when the vault was prepared.
extension FaultTests {
    @Test("tpm enroll", .enabled(if: SoftwareTPM.available)) func tpmEnroll() throws {
        try run("tpm enroll", Scenario(
            prepare: { cli in [try cli.importIDs([cli.file("a.jpg", [4, 2])])[0]: Data([4, 2])] },
            command: { _ in [CLI.binary, "tpm", "enroll", "--pin-stdin", "--other-pins-fd", "0"] },
            input: { cli in Data("\(cli.pin)\n\n".utf8) },
            verify: { cli, ok in
                let version = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))[4]
                #expect(version == (ok ? 4 : 3), "tpm enroll said \(ok ? "done" : "failed") but the master record is version \(version)")
                let status = try cli.run(["tpm", "status", "--json"])
                #expect(status.code == 0, "tpm status: \(status.stderr)")
                return cli.pin
            }), tpm: true)
    }

    /// Issue 56: the removal's commit point is the master record's rename; a failure after it
    /// (its folder's fsync, the state re-sealed without the TPM, the rotation that follows) is
    /// "done, but …", never an exit status that says the key store is still bound.
    @Test("tpm remove", .enabled(if: SoftwareTPM.available)) func tpmRemove() throws {
        try run("tpm remove", Scenario(
            prepare: { cli in
                let enrolled = try cli.run(["tpm", "enroll", "--other-pins-fd", "0"], stdin: Data("\n".utf8), pinStdin: true)
                #expect(enrolled.code == 0, "tpm enroll: \(enrolled.stderr)")
                return [try cli.importIDs([cli.file("a.jpg", [4, 2])])[0]: Data([4, 2])]
            },
            command: { _ in [CLI.binary, "tpm", "remove", "--pin-stdin", "--other-pins-fd", "0"] },
            input: { cli in Data("\(cli.pin)\n\n".utf8) },
            verify: { cli, ok in
                let version = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))[4]
                #expect(version == (ok ? 3 : 4), "tpm remove said \(ok ? "done" : "failed") but the master record is version \(version)")
                return cli.pin
            }), tpm: true, pick: { log in
                // The removal's own calls (master record, state, the TPM record set aside) and
                // every sync after a rename; the rotation that follows writes every key pack and
                // index row, each failed in turn by the rekey test already.
                let own = log.calls.filter { $0.path.hasPrefix("keystore") && !$0.path.hasPrefix("keystore/keys/") && !$0.path.hasPrefix("keystore/log/") }
                return Array(Set(own.map(\.n) + log.syncsAfterRename(under: ""))).sorted()
            })
    }

    @Test("fade set, TPM-bound (the device state under the TPM)", .enabled(if: SoftwareTPM.available)) func fadeSetTPM() throws {
        try run("fade set (TPM)", fadeScenario(enrolTPM: true), tpm: true)
    }
}
