// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Security keys on a TPM-bound key store: the key opens without a TPM attempt, never while
/// the Skeleton Switch is armed in the TPM (the review pre-empted the switch once), and it
/// follows the KEK through the TPM's removal.
@Suite("FIDO2 security keys with a TPM", .enabled(if: SoftwareFIDO2.available && SoftwareTPM.available))
struct SecurityKeyTPMTests {
    @Test("a TPM vault opens by key; an armed Skeleton Switch refuses the key (only the PIN checks in); disarmed and after tpm remove the key opens again")
    func skeletonAndRemoval() throws {
        let tpm = try SoftwareTPM()
        let key = try SoftwareFIDO2()
        let cli = try CLI()
        _ = try cli.initTPMVault(tpm)
        let id = try #require(try cli.importIDs([cli.file("a.bin", [4, 2])]).first)
        #expect(try cli.runWithKey(["fido2", "enroll"], key: key, pinStdin: true).code == 0)
        let opened = try cli.runWithKey(["export", id, "-o", "-", "--security-key"], key: key)
        #expect(opened.code == 0 && opened.stdout == Data([4, 2]), "\(opened.stderr)")

        #expect(try cli.run(["skeleton", "enable", "--interval", "2h"], pinStdin: true).code == 0)
        expectCleanError(try cli.runWithKey(["list", "--security-key"], key: key), code: 3, mentions: "Skeleton Switch is armed")
        #expect(try cli.run(["list"], pinStdin: true).code == 0, "the PIN still opens and checks in")
        #expect(try cli.run(["skeleton", "disable"], pinStdin: true).code == 0)
        #expect(try cli.runWithKey(["list", "--security-key"], key: key).code == 0, "disarmed: the key opens again")

        let removed = try cli.run(["tpm", "remove", "--other-pins-fd", "0"], stdin: Data("\n".utf8), pinStdin: true)
        #expect(removed.code == 0, "\(removed.stderr)")
        let after = try cli.runWithKey(["export", id, "-o", "-", "--security-key"], key: key)
        #expect(after.code == 0 && after.stdout == Data([4, 2]), "the key follows the KEK through tpm remove: \(after.stderr)")
    }
}
