// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 29: the wrong-PIN limit and the Skeleton deadline hold against someone who holds the
/// laptop and talks to its TPM with tpm2-tools and a client of their own (never nu11vlt):
/// the dictionary-attack count cannot be cleared or the limit raised without the recovery
/// key, and power cuts that set the TPM's clock back are limited in number.
@Suite("TPM limits against tpm2-tools", .enabled(if: SoftwareTPM.available))
struct TPMLimitAttackTests {
    typealias Client = TPMSkeletonAttackTests

    static func status(_ cli: CLI) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: try cli.run(["tpm", "status", "--json"]).stdout) as? [String: Any])
    }

    @Test("tpm2_dictionarylockout -c and -s between wrong PINs: after the stated 4 the right PIN opens nothing, through nu11vlt or a client of our own; the recovery key clears the count")
    func limitCannotBeReset() throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        // The stated limit: 4 wrong PINs, one forgiven every 1000 s; a wrong lockout value locks lockout commands for 1 s.
        #expect(try tpm.tool("tpm2_dictionarylockout", ["-s", "-n", "4", "-t", "1000", "-l", "1"]).code == 0)
        let cli = try CLI(pin: "482913")
        let recoveryKey = try cli.initTPMVault(tpm)
        var status = try Self.status(cli)
        #expect(status["wrongPINsLeft"] as? Int == 4 && status["limitResetBy"] as? String == "recovery key", "\(status)")

        // The client: the primary PIN's entry (slot 0), unsealed with the auth value any client computes.
        try Client.object(cli.keystore, index: 0, into: cli.root)
        let auth = try Client.authValue(cli, pin: cli.pin)
        let control = try Client.unseal(cli, tpm, policy: [], auth: auth)
        #expect(control.secret != nil, "the client cannot unseal the entry even with the PIN: \(control.why)")

        for i in 1...6 {
            // Before every guess the attacker clears the count and raises the limit: refused.
            let clear = try tpm.tool("tpm2_dictionarylockout", ["-c"])
            #expect(clear.code != 0, "tpm2_dictionarylockout -c worked without the lockout authorization")
            let raise = try tpm.tool("tpm2_dictionarylockout", ["-s", "-n", "1000", "-t", "1", "-l", "1"])
            #expect(raise.code != 0, "tpm2_dictionarylockout -s worked without the lockout authorization")
            _ = try cli.runPinFD(["list"], pin: "00000\(i)")
        }
        // Also with a guess whose TPM entry the client picks itself.
        let wrongAuth = try Client.authValue(cli, pin: "000007")
        #expect(try Client.unseal(cli, tpm, policy: [], auth: wrongAuth).secret == nil)

        // The right PIN: nu11vlt and the client are both refused by the TPM's lockout.
        let refused = try cli.run(["list"], pinStdin: true)
        expectCleanError(refused, code: 6, mentions: "locked out")
        #expect(refused.stderr.contains("nu11vlt tpm recover"), "the message names the recovery key's way out: \(refused.stderr)")
        let late = try Client.unseal(cli, tpm, policy: [], auth: auth)
        #expect(late.secret == nil, "the client unsealed the entry past the limit")
        #expect(late.why.contains("0x921") || late.why.contains("lockout"), "refused for another reason: \(late.why)")
        status = try Self.status(cli)
        #expect(status["wrongPINsLeft"] as? Int == 0, "\(status)")

        // The recovery key (and the PIN) clears the count and opens the vault.
        // The attacker's refused lockout commands above locked lockout use for the TPM's 1 s: a
        // wait on the TPM's own clock, which no property shows and nothing but time moves.
        usleep(1_500_000)
        let recovered = try cli.runPinFD(["tpm", "recover", "--recovery-key-fd", "0"], stdin: Data((recoveryKey + "\n").utf8))
        #expect(recovered.code == 0, "tpm recover: \(recovered.stderr)")
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        status = try Self.status(cli)
        #expect(status["limitResetBy"] as? String == "recovery key" && status["wrongPINsLeft"] as? Int == 4, "\(status)")
        // Only one NV counter left on the TPM: recover released the old one.
        let indices = try tpm.tool("tpm2_getcap", ["handles-nv-index"]).out
        #expect(indices.split(separator: "\n").filter { $0.contains("0x1") }.count == 1, "\(indices)")

        // release-lockout with a wrong key is refused; with the right one the TPM's lockout is empty again.
        var wrong = Array(recoveryKey)
        wrong[0] = wrong[0] == "c" ? "b" : "c"
        expectCleanError(try cli.run(["tpm", "release-lockout", "--recovery-key-fd", "0"], stdin: Data((String(wrong) + "\n").utf8)),
                         code: 3, mentions: "did not set")
        usleep(1_500_000)  // the wrong key's lockout use locked it for 1 s, as above
        let released = try cli.run(["tpm", "release-lockout", "--recovery-key-fd", "0"], stdin: Data((recoveryKey + "\n").utf8))
        #expect(released.code == 0, "\(released.stderr)")
        #expect(try tpm.tool("tpm2_dictionarylockout", ["-c"]).code == 0)
        #expect(try Self.status(cli)["limitResetBy"] as? String == "anyone")
    }

    @Test("a TPM whose lockout authorization is someone else's: a six-digit PIN is refused at enrolment, a passphrase is taken and tpm status warns")
    func foreignLockout() throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        #expect(try tpm.tool("tpm2_changeauth", ["-c", "lockout", "someone-elses-secret"]).code == 0)
        let weak = try CLI(pin: "482913")
        weak.environment["NU11VLT_TPM_TCTI"] = tpm.tcti
        let refused = try weak.run(["init", "--tpm", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true)
        expectCleanError(refused, code: 9, mentions: "someone else")
        #expect(!FileManager.default.fileExists(atPath: weak.keystore + "/master.n11k"), "a refused init left a key store")
        let strong = try CLI(pin: "copper-lantern-orbit-meadow-thistle")
        strong.environment["NU11VLT_TPM_TCTI"] = tpm.tcti
        let made = try strong.run(["init", "--tpm", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true)
        #expect(made.code == 0, "\(made.stderr)")
        #expect(made.stderr.contains("belongs to someone else"), "enrolment did not say so: \(made.stderr)")
        #expect(try Self.status(strong)["limitResetBy"] as? String == "someone else")
        #expect(try strong.run(["tpm", "status"]).out.contains("WARNING: the TPM's lockout authorization is someone else's"))
    }

    @Test("power cuts (swtpm killed, no TPM2_Shutdown) set the TPM's clock back, but the Skeleton object allows only its stated number of TPM resets: one more and even the PIN unseals nothing")
    func powerCuts() throws {
        var tpm = try SoftwareTPM()
        let cli = try CLI(pin: "482913")
        _ = try cli.initTPMVault(tpm)
        let id = try cli.importIDs([cli.file("secret.bin", [4, 2])])[0]
        #expect(try cli.run(["skeleton", "enable", "--interval", "2h"], pinStdin: true).code == 0)
        let sealed = try Client.skeletonObject(cli.keystore, into: cli.root)
        let limit = try #require(sealed.resetLimit)
        let auth = try Client.authValue(cli, pin: cli.pin)
        #expect(try Client.unseal(cli, tpm, deadline: sealed, auth: auth).secret != nil, "positive control")
        var status = try Self.status(cli)
        let allowed = try #require(status["skeletonRestartsLeft"] as? Int)
        #expect(allowed == 4, "2 h interval: the minimum of 4 restarts; \(status)")

        // Run the TPM for a while (its clock advances), then cut the power: the clock goes back.
        var cuts = 0
        func cut() throws {
            try tpm.advance(seconds: 600)
            let before = try tpm.clock()
            let state = tpm.dir + "/state"
            tpm.stop()
            tpm = try SoftwareTPM(stateFrom: state)
            cli.environment["NU11VLT_TPM_TCTI"] = tpm.tcti
            cuts += 1
            #expect(try tpm.clock() < before, "the power cut did not set the clock back")
        }
        for _ in 0..<allowed { try cut() }
        // Within the stated number: the clock is still before the deadline and the client (with the PIN) unseals.
        #expect(try tpm.clock() < sealed.deadline)
        #expect(try Client.unseal(cli, tpm, deadline: sealed, auth: auth).secret != nil, "refused within the allowance")
        status = try Self.status(cli)
        #expect(status["skeletonRestartsLeft"] as? Int == 0, "\(status)")
        // One more: the clock is still before the deadline, yet nothing unseals — not for the client, not for nu11vlt.
        try cut()
        #expect(try tpm.clock() < sealed.deadline && limit > 0)
        let late = try Client.unseal(cli, tpm, deadline: sealed, auth: auth)
        #expect(late.secret == nil, "the Skeleton secret unsealed after more TPM resets than allowed")
        let r = try cli.run(["export", id, "-o", "-"], pinStdin: true)
        #expect(r.code != 0 && r.stdout.isEmpty, "opened after too many TPM resets")
        #expect(r.stderr.contains("Skeleton Switch fired"), "\(r.stderr)")
        tpm.stop()
    }
}
