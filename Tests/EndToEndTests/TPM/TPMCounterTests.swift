// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 29: rollback detection never destroys data on an unauthenticated signal. The key
/// store's counter needs an auth value only a reader of the key store can derive (another
/// user who may use the TPM cannot advance it); root can, with tpm2-tools, and that must fail
/// closed (nothing of an older state restored) without wiping anything.
@Suite("TPM counter tampering", .enabled(if: SoftwareTPM.available))
struct TPMCounterTests {
    @Test("tpm2_nvincrement on the counter, then sweep: an armed vault is not wiped, no fade item destroyed; the PIN then opens and the state is written again")
    func counterAdvanced() throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        let cli = try CLI()
        _ = try cli.initTPMVault(tpm)
        let kept = try cli.importIDs([cli.file("kept.bin", [1, 2, 3])])[0]
        let fading = try cli.importIDs([cli.file("fading.bin", [4, 5])], extra: ["--fade", "2s"])[0]
        #expect(try cli.run(["skeleton", "enable", "--interval", "1h"], pinStdin: true).code == 0)
        cli.clockAhead = "+3s"  // the fade item's deadline passes (faketime, for every later command)

        // Another user who may use the TPM but cannot read the key store: the counter's auth
        // value is not theirs, so tpm2_nvincrement is refused.
        let status = try #require(try JSONSerialization.jsonObject(with: try cli.run(["tpm", "status", "--json"]).stdout) as? [String: Any])
        let index = try #require(status["nvIndex"] as? String)
        let refused = try tpm.tool("tpm2_nvincrement", ["-C", index, index])
        #expect(refused.code != 0, "tpm2_nvincrement without the counter's auth value worked")
        // Root, who reads the key store: unseals the device-state object (no PIN) with a client of
        // its own, derives the counter's auth value as any reader of docs/FORMAT.md can, advances it.
        let auth = try Self.counterAuth(cli, tpm)
        let bumped = try tpm.tool("tpm2_nvincrement", ["-C", index, "-P", "hex:" + auth, index])
        #expect(bumped.code == 0, "tpm2_nvincrement with the derived auth value: \(bumped.out)")

        let sweep = try cli.run(["sweep"])
        #expect(sweep.code == 0, "\(sweep.stderr)")
        #expect(sweep.stderr.contains("counter is 1 ahead") && sweep.stderr.contains("nothing was destroyed"), "\(sweep.stderr)")
        #expect(FileManager.default.fileExists(atPath: cli.keystore + "/master.n11k"), "the armed vault was wiped")
        #expect(cli.hasKeyRecord(fading), "the fade item was destroyed on an unauthenticated signal")
        #expect(FileManager.default.fileExists(atPath: cli.vault + "/Fade/\(fading).n11"))
        // Its deadline passed: it does not open, whatever the state says.
        #expect(try cli.run(["export", fading, "-o", "-"], pinStdin: true).stdout.isEmpty)

        // The PIN opens at once (no hour's wait) and writes the state again.
        let opened = try cli.run(["export", kept, "-o", "-"], pinStdin: true)
        #expect(opened.stdout == Data([1, 2, 3]), "\(opened.stderr)")
        let after = try cli.run(["sweep"])
        #expect(after.code == 0 && !after.stderr.contains("ahead"), "the state was not written again: \(after.stderr)")
        #expect(try cli.run(["skeleton", "status"]).out.contains("armed") || (try cli.run(["skeleton", "status", "--json"]).out.contains("true")))
        // Now, with the state in step, the expired fade item goes as its schedule says.
        #expect(!cli.hasKeyRecord(fading))
        let log = try cli.run(["log"], pinStdin: true).out
        #expect(log.contains("state counter ahead"), "\(log)")
    }

    @Test("tpm2_nvundefine of the counter (any TPM user can), then sweep and a wrong PIN: nothing wiped, no fade item destroyed; the right PIN opens everything and defines the counter again")
    func counterUndefined() throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        let cli = try CLI()
        _ = try cli.initTPMVault(tpm)
        let kept = try cli.importIDs([cli.file("kept.bin", [1, 2, 3])])[0]
        let fading = try cli.importIDs([cli.file("fading.bin", [4, 5])], extra: ["--fade", "1h"])[0]
        #expect(try cli.run(["skeleton", "enable", "--interval", "1h"], pinStdin: true).code == 0)
        let status = try #require(try JSONSerialization.jsonObject(with: try cli.run(["tpm", "status", "--json"]).stdout) as? [String: Any])
        let index = try #require(status["nvIndex"] as? String)

        // The adversary: a user who may use the TPM (owner hierarchy, empty auth), nothing more.
        let undefined = try tpm.tool("tpm2_nvundefine", ["-C", "o", index])
        #expect(undefined.code == 0, "tpm2_nvundefine: \(undefined.out)")
        #expect(try tpm.tool("tpm2_nvreadpublic", [index]).code != 0, "the counter is still there")

        let sweep = try cli.run(["sweep"])
        #expect(sweep.code == 0, "\(sweep.stderr)")
        #expect(sweep.stderr.contains("TPM counter missing") && sweep.stderr.contains("nothing was destroyed"), "\(sweep.stderr)")
        #expect(FileManager.default.fileExists(atPath: cli.keystore + "/master.n11k"), "the armed vault was wiped")
        #expect(cli.hasKeyRecord(fading), "the fade item was destroyed")
        let wrong = try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data("not the pin 123\n".utf8))
        #expect(wrong.code != 0, "a wrong PIN opened: \(wrong.stderr)")
        #expect(FileManager.default.fileExists(atPath: cli.keystore + "/master.n11k"), "the armed vault was wiped at a wrong PIN")
        #expect(cli.hasKeyRecord(fading) && FileManager.default.fileExists(atPath: cli.vault + "/Fade/\(fading).n11"))

        // The right PIN: everything is there, and the counter exists again.
        let opened = try cli.run(["export", kept, "-o", "-"], pinStdin: true)
        #expect(opened.stdout == Data([1, 2, 3]), "\(opened.stderr)")
        #expect(try cli.run(["export", fading, "-o", "-"], pinStdin: true).stdout == Data([4, 5]))
        #expect(try tpm.tool("tpm2_nvreadpublic", [index]).code == 0, "the counter was not defined again")
        let after = try cli.run(["sweep"])
        #expect(after.code == 0 && !after.stderr.contains("missing"), "the state was not written again: \(after.stderr)")
        #expect(try cli.run(["skeleton", "status", "--json"]).out.contains("true"))
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        let log = try cli.run(["log"], pinStdin: true).out
        #expect(log.contains("TPM counter missing"), "\(log)")
    }

    /// The counter's auth value, computed as root from the key store: the device-state object
    /// (empty auth, no PIN) unsealed through tpm2-tools, then HKDF-Expand "nu11vlt subkey v1 counter auth".
    static func counterAuth(_ cli: CLI, _ tpm: SoftwareTPM) throws -> String {
        try TPMSkeletonAttackTests.object(cli.keystore, index: 3, into: cli.root)
        let secret = try #require(try TPMSkeletonAttackTests.unseal(cli, tpm, policy: [], auth: nil).secret, "the state object did not unseal")
        let script = "import sys\nfrom cryptography.hazmat.primitives import hashes\n"
            + "from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand\n"
            + "print(HKDFExpand(algorithm=hashes.SHA256(), length=32, info=b'nu11vlt subkey v1 counter auth').derive(bytes.fromhex(sys.argv[1])).hex())\n"
        let r = try cli.spawn("/usr/bin/python3", ["-c", script, secret])
        #expect(r.code == 0, "\(r.stderr)")
        return r.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("an older copy of the audit log, put back, is reported by log --verify and stays recorded in the log")
    func logRolledBack() throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        let cli = try CLI()
        _ = try cli.initTPMVault(tpm)
        _ = try cli.importIDs([cli.file("a.bin", [1])])
        let logs = cli.keystore + "/log"
        let saved = cli.root + "/saved-log"
        try FileManager.default.copyItem(atPath: logs, toPath: saved)
        _ = try cli.importIDs([cli.file("b.bin", [2])])
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        // The attacker puts the older log back (every file of the folder, as copied).
        try FileManager.default.removeItem(atPath: logs)
        try FileManager.default.copyItem(atPath: saved, toPath: logs)
        let verify = try cli.run(["log", "--verify"], pinStdin: true)
        expectCleanError(verify, code: 5, mentions: "older copy of the log was put back")
        let listing = try cli.run(["log"], pinStdin: true)
        #expect(listing.code == 0 && listing.out.contains("log rolled back"), "\(listing.out) \(listing.stderr)")
        // Once said (and recorded), the mark follows the log: the next verification passes.
        #expect(try cli.run(["log", "--verify"], pinStdin: true).code == 0)
    }
}
