// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The TPM as the root of the key hierarchy (issue 13), against software TPMs: each
/// `SoftwareTPM` is one machine.
@Suite("TPM 2.0: enrolment, other machine, recovery, lockout, Skeleton, state", .enabled(if: SoftwareTPM.available))
struct TPMTests {
    @Test("init --tpm: import/export work; on another machine's TPM the key store says so; the recovery key opens it there and re-enrols")
    func otherMachineAndRecovery() throws {
        let first = try SoftwareTPM()
        let cli = try CLI()
        let recovery = try cli.initTPMVault(first)
        let master = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        #expect(master[4] == 4, "a TPM-bound master record is version 4 (2, with slot 0's pepper)")
        let photo = cli.file("p.jpg", Array(FaultTests.payload))
        let id = try #require(try cli.importIDs([photo]).first)
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == FaultTests.payload)
        #expect(try cli.run(["tpm", "status"]).out.contains("this machine's TPM"))

        // The same folders on a second machine.
        let second = try SoftwareTPM()
        cli.environment["NU11VLT_TPM_TCTI"] = second.tcti
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 9, mentions: "another machine's TPM")
        expectCleanError(try cli.run(["export", id, "-o", "-"], pinStdin: true), code: 9, mentions: "nu11vlt tpm recover")
        // A wrong recovery key, a malformed one, a wrong PIN with the right key: refused, nothing changed.
        var wrong = Array(recovery)
        wrong[0] = wrong[0] == "c" ? "b" : "c"
        try Data((String(wrong) + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/rk-wrong"))
        expectCleanError(try cli.runPinFD(["tpm", "recover", "--recovery-key-fd", "0"], stdin: Data((String(wrong) + "\n").utf8)),
                         code: 3, mentions: "recovery key does not open")
        expectCleanError(try cli.runPinFD(["tpm", "recover", "--recovery-key-fd", "0"], stdin: Data("1234-5678\n".utf8)),
                         code: 64, mentions: "not a recovery key")
        expectCleanError(try cli.runPinFD(["tpm", "recover", "--recovery-key-fd", "0"], stdin: Data((recovery + "\n").utf8), pin: "not the pin"),
                         code: 3, mentions: "wrong")
        let recovered = try cli.runPinFD(["tpm", "recover", "--recovery-key-fd", "0", "--json"], stdin: Data((recovery.uppercased() + "\n").utf8))
        #expect(recovered.code == 0, "recover: \(recovered.stderr)")
        // The same object as `tpm status --json` (docs/JSON.md), as it is after the change.
        let after = try #require(try JSONSerialization.jsonObject(with: recovered.stdout) as? [String: Any], "\(recovered.out)")
        let status = try #require(try JSONSerialization.jsonObject(with: try cli.run(["tpm", "status", "--json"]).stdout) as? [String: Any])
        #expect(Set(after.keys) == Set(status.keys) && status.count == 13)
        #expect(after["thisTPM"] as? Bool == true && after["enrolled"] as? Bool == true)
        // Bound to the second TPM now: every command works there without the recovery key.
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == FaultTests.payload)
        #expect(try cli.run(["tpm", "status"]).out.contains("this machine's TPM"))
        // And the first machine's TPM no longer opens it.
        cli.environment["NU11VLT_TPM_TCTI"] = first.tcti
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 9, mentions: "another machine's TPM")
        // No TPM at all: a clear message, not a crash.
        cli.environment["NU11VLT_TPM_TCTI"] = "swtpm:path=" + cli.root + "/no-such-socket"
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 9, mentions: "could not be reached")
        cli.environment["NU11VLT_TPM_TCTI"] = "cmd:tpm2_startup"
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 64, mentions: "does not use")
        cli.environment["NU11VLT_TPM_TCTI"] = "swtpm:host=192.0.2.7,port=2321"
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 64, mentions: "uses no network")
    }

    @Test("wrong PINs trip the TPM's lockout after its max tries; the message says how long; the right PIN works after the recovery time")
    func lockout() throws {
        let tpm = try SoftwareTPM()
        let cli = try CLI(pin: "482913")
        // Before enrolment: after it, only the recovery key changes the TPM's lockout parameters.
        try tpm.lockout(maxTries: 3, recoverySeconds: 2)
        _ = try cli.initTPMVault(tpm)
        for i in 1...3 {
            expectCleanError(try cli.runPinFD(["list"], pin: "wrong pin \(i)"), code: 3, mentions: "wrong")
        }
        #expect(try tpm.tool("tpm2_getcap", ["properties-variable"]).out.contains("TPM2_PT_LOCKOUT_COUNTER: 0x3"))
        // Locked: even the right PIN is refused, with the time to wait from the TPM's own parameters.
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 6, mentions: "the TPM is locked out")
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 6, mentions: "try again in 2s")
        // The TPM forgives one failure after its 2 s recovery time, on its own clock: wait for that.
        #expect(Wait.until(seconds: 30) { (try? tpm.tool("tpm2_getcap", ["properties-variable"]).out.contains("TPM2_PT_LOCKOUT_COUNTER: 0x2")) == true })
        let r = try cli.run(["list"], pinStdin: true)
        #expect(r.code == 0, "after the recovery time: \(r.stderr)")
        // The TPM counted them, and nu11vlt's own delay did not pile up on top (refusals are no attempts).
        #expect(!r.stderr.contains("try again"))
    }

    @Test("Skeleton in the TPM: a check-in before the deadline keeps it open; past the TPM clock's deadline the PIN opens nothing, whatever the files or the system clock say")
    func hardwareSkeleton() throws {
        let tpm = try SoftwareTPM()
        let cli = try CLI()
        _ = try cli.initTPMVault(tpm)
        let id = try #require(try cli.importIDs([cli.file("a.bin", [1, 2, 3])]).first)
        let armed = try cli.run(["skeleton", "enable", "--interval", "2h"], pinStdin: true)
        #expect(armed.code == 0 && armed.out.contains("the TPM's own clock"), "\(armed.out) \(armed.stderr)")
        #expect(try cli.run(["tpm", "status"]).out.contains("armed in the TPM"))
        let stateBefore = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/state.n11s"))
        let masterBefore = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        // 1.5 h on the TPM's clock (the system clock did not move): a check-in moves the deadline.
        try tpm.advance(seconds: 5400)
        #expect(try cli.run(["checkin"], pinStdin: true).code == 0)
        // Past the first deadline, before the new one: still open.
        try tpm.advance(seconds: 1800)
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data([1, 2, 3]))
        // Past the new deadline on the TPM's clock, with the key store's files restored from
        // before the check-ins and the system clock set back a day: the PIN opens nothing.
        try tpm.advance(seconds: 7300)
        let saved = cli.root + "/saved"
        try FileManager.default.copyItem(atPath: cli.keystore, toPath: saved)
        try FileManager.default.copyItem(atPath: cli.vault, toPath: saved + "-vault")
        try stateBefore.write(to: URL(fileURLWithPath: cli.keystore + "/state.n11s"))
        try masterBefore.write(to: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        let r = try cli.spawn(ClockTests.faketime, ["-f", "-1d", CLI.binary, "export", id, "-o", "-", "--pin-stdin"],
                              input: Data((cli.pin + "\n").utf8))
        #expect(r.code != 0 && r.stdout.isEmpty, "opened past the TPM deadline: \(r.stderr)")
        #expect(r.stderr.contains("Skeleton Switch fired"), "\(r.stderr)")
        // With the current files (no rollback), the TPM's clock alone decides.
        for (copy, place) in [(saved, cli.keystore), (saved + "-vault", cli.vault)] {
            try? FileManager.default.removeItem(atPath: place)
            try FileManager.default.copyItem(atPath: copy, toPath: place)
        }
        let second = try cli.spawn(ClockTests.faketime, ["-f", "-1d", CLI.binary, "list", "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
        #expect(second.code != 0, "listed past the TPM deadline: \(second.out)")
        #expect(second.stderr.contains("deadline on the TPM's clock"), "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.keystore + "/master.n11k"), "the switch wipes")
    }

    @Test("forging state.n11s with the device key resets no counter and disarms nothing when a TPM is enrolled (it does without one)")
    func forgedState() throws {
        // Without a TPM: the forgery is accepted (the reason for this issue).
        let plain = try CLI()
        try plain.initVault()
        for _ in 1...5 { _ = try plain.runPinFD(["list"], pin: "wrong") }
        expectCleanError(try plain.run(["list"], pinStdin: true), code: 6, mentions: "try again")
        try Self.forge(plain.keystore, failures: 0, skeletonCheckin: nil)
        #expect(try plain.run(["list"], pinStdin: true).code == 0, "the baseline forgery should work without a TPM")

        let tpm = try SoftwareTPM()
        let cli = try CLI()
        try tpm.lockout(maxTries: 20, recoverySeconds: 1)
        _ = try cli.initTPMVault(tpm)
        // A rollback: the state from before five wrong PINs, restored, is caught by the TPM's
        // counter. It restores nothing: each missed write counts as a wrong PIN (issue 29: an
        // unauthenticated signal fails closed without destroying anything).
        let before = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/state.n11s"))
        for _ in 1...5 { _ = try cli.runPinFD(["list"], pin: "wrong") }
        try before.write(to: URL(fileURLWithPath: cli.keystore + "/state.n11s"))
        let rolledBack = try cli.run(["list"], pinStdin: true)
        expectCleanError(rolledBack, code: 6, mentions: "try again in")
        #expect(rolledBack.stderr.contains("counter is 5 ahead"), "\(rolledBack.stderr)")
        try before.write(to: URL(fileURLWithPath: cli.keystore + "/state.n11s"))
        // The same with a forgery sealed under the device key, carrying the TPM counter's value
        // (anyone on the machine can read it).
        for _ in 1...5 { _ = try cli.runPinFD(["list"], pin: "wrong") }
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 6, mentions: "try again")
        try Self.forge(cli.keystore, failures: 0, skeletonCheckin: nil, tpmCounter: Self.counter(cli, tpm))
        let r = try cli.run(["list"], pinStdin: true)
        expectCleanError(r, code: 6, mentions: "try again in 60 minutes")
        #expect(r.stderr.contains("device state was missing or altered"))

        // The Skeleton Switch: a forged check-in far in the future does not keep it open.
        let armed = try CLI()
        _ = try armed.initTPMVault(tpm)
        #expect(try armed.run(["skeleton", "enable", "--interval", "2h"], pinStdin: true).code == 0)
        try Self.forge(armed.keystore, failures: 0, skeletonCheckin: Date().timeIntervalSince1970 + 86_400 * 365,
                       tpmCounter: Self.counter(armed, tpm))
        let fired = try armed.run(["list"], pinStdin: true)
        #expect(fired.code != 0 && fired.stderr.contains("Skeleton Switch fired"), "\(fired.stderr)")
    }

    /// The key store's NV counter as root reads it (tpm2_nvread, with the auth value derived
    /// from the device-state object, which opens without a PIN).
    static func counter(_ cli: CLI, _ tpm: SoftwareTPM) throws -> UInt64 {
        let status = try #require(try JSONSerialization.jsonObject(with: try cli.run(["tpm", "status", "--json"]).stdout) as? [String: Any])
        let index = try #require(status["nvIndex"] as? String)
        let out = tpm.dir + "/nv.bin"
        let auth = try TPMCounterTests.counterAuth(cli, tpm)
        let r = try tpm.tool("tpm2_nvread", [index, "-C", index, "-P", "hex:" + auth, "-s", "8", "-o", out])
        #expect(r.code == 0, "tpm2_nvread: \(r.out)")
        return try Data(contentsOf: URL(fileURLWithPath: out)).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Writes a device state sealed the way version 1 seals it, with the device key from the
    /// key store (what anyone who can read and write the key store can do).
    static func forge(_ keystore: String, failures: Int, skeletonCheckin: Double?, tpmCounter: UInt64? = nil) throws {
        var state: [String: Any] = ["latestSeen": Date().timeIntervalSince1970, "failures": failures, "lockedUntil": 0, "fade": []]
        if let tpmCounter { state["tpmCounter"] = tpmCounter }
        if let skeletonCheckin { state["skeleton"] = ["interval": 7200, "lastCheckin": skeletonCheckin, "secure": false] }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: state, options: [.sortedKeys]), as: UTF8.self)
        let script = """
            import os, sys
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
            from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
            ks, js = sys.argv[1], sys.argv[2].encode()
            device = open(ks + '/device.n11d', 'rb').read()[5:37]
            key = HKDFExpand(hashes.SHA256(), 32, b'nu11vlt subkey v1 device state').derive(device)
            js += b' ' * ((1024 - len(js) % 1024) % 1024)
            nonce = os.urandom(12)
            sealed = ChaCha20Poly1305(key).encrypt(nonce, js, b'nu11vlt device state v1')
            open(ks + '/state.n11s', 'wb').write(b'N11S\\x01' + nonce + sealed)
            """
        let p = try Program.start("/usr/bin/python3", ["-c", script, keystore, json])
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "the forging script failed")
    }
}
