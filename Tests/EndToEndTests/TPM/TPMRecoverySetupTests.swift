// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 55: on a TPM vault the recovery phrase is also the TPM's recovery key and its lockout
/// authorization. `recovery setup` moves both to the new phrase: the old one, in the hands of
/// whoever kept it, neither clears nor raises the TPM's wrong-PIN limit (tpm2-tools, not nu11vlt)
/// nor recovers the key store; the new one does.
@Suite("TPM: recovery setup moves the lockout authorization", .enabled(if: SoftwareTPM.available))
struct TPMRecoverySetupTests {
    /// The lockout authorization a phrase gives (FORMAT.md §4.2b), computed by the test itself.
    static func lockoutHex(_ cli: CLI, _ phrase: String) throws -> String {
        let bytes = RecoveryTests.phraseBytes(phrase).map { String(format: "%02x", $0) }.joined()
        let script = """
            import sys
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.kdf.hkdf import HKDF
            print(HKDF(hashes.SHA256(), 32, b'nu11vlt tpm lockout', b'nu11vlt tpm lockout auth v1').derive(bytes.fromhex(sys.argv[1])).hex())
            """
        return try cli.spawn("/usr/bin/python3", ["-c", script, bytes]).out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("the old phrase after recovery setup: tpm2_dictionarylockout -c and -s refused, tpm recover refused; the new phrase does both")
    func oldPhraseLosesTheTPM() throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        // A wrong lockout value locks lockout commands for 1 s (not the default day).
        #expect(try tpm.tool("tpm2_dictionarylockout", ["-s", "-n", "10", "-t", "1000", "-l", "1"]).code == 0)
        let cli = try CLI(pin: "passphrase for the tpm 7")
        let old = try cli.initTPMVault(tpm)
        let id = try #require(try cli.importIDs([cli.file("a.bin", [4, 4])]).first)
        #expect(try tpm.tool("tpm2_dictionarylockout", ["-c", "-p", "hex:" + Self.lockoutHex(cli, old)]).code == 0, "the old phrase was not the lockout authorization to begin with")

        // Without the current phrase (no terminal): refused, nothing changed.
        let master = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        expectCleanError(try cli.run(["recovery", "setup"], pinStdin: true), code: 64)
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k")) == master)

        let script = "exec \"$0\" \"$@\" --current-phrase-fd 3 --pin-stdin 3<<'EOF'\n\(old)\nEOF\n"
        let setup = try cli.spawn("/bin/sh", ["-c", script, CLI.binary, "recovery", "setup"], input: Data((cli.pin + "\n").utf8))
        #expect(setup.code == 0, "\(setup.stderr)")
        let pattern = "[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}"
        let new = try #require(setup.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.range(of: "^" + pattern + "$", options: .regularExpression) != nil }, "\(setup.out)")

        usleep(1_500_000)
        // The adversary with the old phrase and tpm2-tools.
        #expect(try tpm.tool("tpm2_dictionarylockout", ["-c", "-p", "hex:" + Self.lockoutHex(cli, old)]).code != 0,
                "the old phrase still clears the TPM's count of wrong PINs")
        usleep(1_500_000)
        #expect(try tpm.tool("tpm2_dictionarylockout", ["-s", "-n", "1000", "-t", "1", "-l", "1", "-p", "hex:" + Self.lockoutHex(cli, old)]).code != 0,
                "the old phrase still raises the TPM's limit")
        usleep(1_500_000)
        let oldRecover = try cli.runPinFD(["tpm", "recover", "--recovery-key-fd", "0"], stdin: Data((old + "\n").utf8))
        #expect(oldRecover.code != 0, "the old phrase still opens the TPM recovery wrap")
        // The new phrase is the lockout authorization now, and recovers.
        #expect(try tpm.tool("tpm2_dictionarylockout", ["-c", "-p", "hex:" + Self.lockoutHex(cli, new)]).code == 0, "the new phrase is not the lockout authorization")
        let newRecover = try cli.runPinFD(["tpm", "recover", "--recovery-key-fd", "0"], stdin: Data((new + "\n").utf8))
        #expect(newRecover.code == 0, "\(newRecover.stderr)")
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data([4, 4]))
    }
}
