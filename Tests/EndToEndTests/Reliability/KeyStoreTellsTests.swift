// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 29: the key store tells nothing it need not. Whoever holds the backup PIN (and
/// watches the key store's files) must not learn whether a guess is another PIN.
@Suite("the key store tells nothing")
struct KeyStoreTellsTests {
    @Test("pin set-duress writes the master record the same way whether the guess is free or the primary PIN")
    func duressOracle() throws {
        let cli = try CLI()
        try cli.initVault()
        try cli.setBackup("backup-pin")
        let master = cli.keystore + "/master.n11k"
        var answers: [(code: Int32, out: String, err: String)] = []
        for candidate in [cli.pin, "a fresh duress pin", "backup-pin"] {
            // A primary unlock resets the growing wait between duress attempts.
            #expect(try cli.run(["status", "--unlock"], pinStdin: true).code == 0)
            let before = try Data(contentsOf: URL(fileURLWithPath: master))
            let r = try cli.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"],
                                  input: Data("backup-pin\n\(candidate)\n".utf8))
            let after = try Data(contentsOf: URL(fileURLWithPath: master))
            #expect(after != before, "guessing \(candidate == cli.pin ? "the primary PIN" : candidate) left master.n11k unchanged: the file tells")
            #expect(after.count == before.count)
            answers.append((r.code, r.out, r.stderr))
        }
        #expect(answers.allSatisfy { $0.code == answers[0].code && $0.out == answers[0].out && $0.err == answers[0].err },
                "the answers differ: \(answers)")
        // The primary and backup PINs still open their vaults.
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        #expect(try cli.with("backup-pin", ["list"]).code == 0)
    }

    @Test("the vault logs are all the same size: a decoy, an unused backup vault's log and a busy one do not tell apart")
    func logSizes() throws {
        func sizes(_ cli: CLI) throws -> [Int] {
            try FileManager.default.contentsOfDirectory(atPath: cli.keystore + "/log")
                .filter { $0.hasSuffix(".n11l") && $0 != "device.n11l" }
                .map { try FileManager.default.attributesOfItem(atPath: cli.keystore + "/log/" + $0)[.size] as? Int ?? -1 }
        }
        // No backup PIN: the primary's log and a decoy.
        let plain = try CLI()
        try plain.initVault()
        for i in 0..<3 { _ = try plain.importIDs([plain.file("p\(i).txt", [UInt8(i)])]) }
        // A backup vault, unused.
        let unused = try CLI()
        try unused.initVault()
        try unused.setBackup("backup-pin")
        // A backup vault in use: many entries in its log.
        let busy = try CLI()
        try busy.initVault()
        try busy.setBackup("backup-pin")
        for i in 0..<12 {
            #expect(try busy.with("backup-pin", ["import", busy.file("b\(i).txt", [UInt8(i), 1])]).code == 0)
        }
        let all = try sizes(plain) + sizes(unused) + sizes(busy)
        #expect(all.count == 6)
        #expect(Set(all).count == 1, "the logs' sizes tell which vault is used: \(all)")
        // Each still opens and verifies for its own PIN.
        #expect(try busy.with("backup-pin", ["log", "--verify"]).code == 0)
        #expect(try busy.run(["log", "--verify"], pinStdin: true).code == 0)
    }

    @Test("forward/ looks the same after any rotation: a backup vault's rekey and pin change leave it empty like the primary's; the duress PIN still opens the backup vault as it is now")
    func forwardShape() throws {
        func forward(_ cli: CLI) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: cli.keystore + "/forward")) ?? []).sorted()
        }
        let cli = try CLI()
        try cli.initVault()
        let primaryItem = try cli.importIDs([cli.file("p.txt", Array("primary".utf8))])[0]
        try cli.setBackup("backup-pin")
        #expect(try cli.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"],
                              input: Data("backup-pin\nduress-pin\n".utf8)).code == 0)
        let escrow = cli.keystore + "/escrow.n11e"
        #expect(FileManager.default.fileExists(atPath: escrow))
        #expect(try cli.with("backup-pin", ["import", cli.file("b.txt", Array("backup".utf8))]).code == 0)
        // The backup vault rotates (rekey, then a PIN change): nothing stays in forward/.
        #expect(try cli.with("backup-pin", ["rekey"]).code == 0)
        #expect(forward(cli).isEmpty, "a backup rekey left \(forward(cli))")
        #expect(try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"],
                              input: Data("backup-pin\nbackup-pin-2\n".utf8)).code == 0)
        #expect(forward(cli).isEmpty, "a backup PIN change left \(forward(cli))")
        let added = try #require(try cli.with("backup-pin-2", ["import", cli.file("c.txt", Array("after".utf8))]).out
            .split(separator: "\n").first.map { String($0.prefix(32)) })
        // The primary rotates: the same.
        #expect(try cli.run(["rekey"], pinStdin: true).code == 0)
        #expect(forward(cli).isEmpty)
        // A key store without a duress PIN has the file too, of the same size.
        let other = try CLI()
        try other.initVault()
        let size = { (path: String) in (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int ?? -1 }
        #expect(size(other.keystore + "/escrow.n11e") == size(escrow) && size(escrow) > 0)
        // The duress PIN opens the backup vault as it is after both rotations, and destroys the primary.
        let duress = try cli.with("duress-pin", ["export", added, "-o", "-"])
        #expect(duress.stdout == Data("after".utf8), "the duress PIN did not reach the rotated backup keys: \(duress.stderr)")
        #expect(try cli.run(["export", primaryItem, "-o", "-"], pinStdin: true).code != 0, "the duress PIN left the primary vault")
    }

    /// A settings file sealed the way any reader of the key store can (device key only).
    static func forgeSettings(_ cli: CLI, _ values: [String: String]) throws {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: ["version": 2, "values": values], options: [.sortedKeys]), as: UTF8.self)
        let script = """
            import os, sys
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
            from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
            ks, js = sys.argv[1], sys.argv[2].encode()
            device = open(ks + '/device.n11d', 'rb').read()[5:37]
            key = HKDFExpand(hashes.SHA256(), 32, b'nu11vlt subkey v1 settings').derive(device)
            nonce = os.urandom(12)
            open(ks + '/settings.n11c', 'wb').write(b'N11C\\x01' + nonce + ChaCha20Poly1305(key).encrypt(nonce, js, b'nu11vlt settings v1'))
            """
        let r = try cli.spawn("/usr/bin/python3", ["-c", script, cli.keystore, json])
        #expect(r.code == 0, "the forging script failed: \(r.stderr)")
        #expect(try cli.run(["settings", "get", "kdf.memory_mib"]).out.trimmingCharacters(in: .whitespacesAndNewlines) == (values["kdf.memory_mib"] ?? "0"),
                "the forgery is not what nu11vlt reads: the test proves nothing")
    }

    @Test("settings that loosen a protection, forged with the device key, are refused with a notice; set with the PIN they apply")
    func forgedSettings() throws {
        let cli = try CLI()
        let r = try cli.run(["init", "--kdf-memory", "64", "--kdf-iterations", "4"], pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        try Self.forgeSettings(cli, ["kdf.memory_mib": "19", "kdf.iterations": "2", "backup.allow": "true"])
        let change = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(cli.pin)\nanother pin 12\n".utf8))
        #expect(change.code == 0, "\(change.stderr)")
        #expect(change.stderr.contains("not applied") && change.stderr.contains("kdf.memory_mib"), "no notice: \(change.stderr)")
        let status = try cli.run(["status"]).out
        #expect(status.contains("Argon2id   4 passes, 64 MiB"), "the forged KDF cost was applied: \(status)")
        #expect(FileManager.default.fileExists(atPath: cli.vault + "/CACHEDIR.TAG"), "the forged backup.allow removed the exclusion")
        // Set with the PIN, the same values apply (a cost change asks for the other PINs: none here).
        let set = try cli.spawn(CLI.binary, ["settings", "set", "backup.allow", "true", "--pin-stdin"], input: Data("another pin 12\n".utf8))
        #expect(set.code == 0, "\(set.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.vault + "/CACHEDIR.TAG"))
        let quiet = try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data("another pin 12\n".utf8))
        #expect(!quiet.stderr.contains("not applied"), "\(quiet.stderr)")
    }
}
