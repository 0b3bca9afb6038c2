// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 55: every setting that loosens a protection is authenticated. The adversary reads the
/// key store (the device key lies in it), opens settings.n11c as FORMAT.md §4.5 says, turns each
/// protection off and seals the file again — keeping the tag and the copy it found, or dropping
/// them. The binary must keep every protection the owner set.
@Suite("settings forged with the device key")
struct SettingsForgeryTests {
    /// What the owner sets with the PIN: each stricter than the default or than the forgery.
    static let owner: [String: String] = [
        "deletion.mode": "secure", "export.strip_location": "true", "fade.default": "1h", "keys.rotate_days": "30",
        "lock.idle": "1m", "log.max_kib": "4096", "preview.cache_mib": "16",
    ]
    /// What the forger writes: every protection off.
    static let forged: [String: String] = [
        "backup.allow": "true", "deletion.mode": "standard", "export.strip_location": "false", "fade.default": "3650d",
        "kdf.iterations": "2", "kdf.memory_mib": "19", "keys.rotate_days": "0", "lock.idle": "0", "log.max_kib": "64",
        "preview.cache_mib": "1024",
    ]

    /// The forger's client: opens the file with the device key, replaces `values`, keeps or drops
    /// `auth` and `copy`, seals it again (a fresh nonce).
    static func forge(_ cli: CLI, _ values: [String: String], keepTag: Bool) throws {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: values, options: [.sortedKeys]), as: UTF8.self)
        let script = """
            import json, os, sys
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
            from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
            ks, changes, keep = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == '1'
            device = open(ks + '/device.n11d', 'rb').read()[5:37]
            key = HKDFExpand(hashes.SHA256(), 32, b'nu11vlt subkey v1 settings').derive(device)
            ad = b'nu11vlt settings v1'
            old = open(ks + '/settings.n11c', 'rb').read()
            assert old[:5] == b'N11C\\x01'
            doc = json.loads(ChaCha20Poly1305(key).decrypt(old[5:17], old[17:], ad))
            assert 'auth' in doc and 'copy' in doc, doc
            doc['values'].update(changes)
            if not keep:
                doc.pop('auth'); doc.pop('copy')
            nonce = os.urandom(12)
            open(ks + '/settings.n11c', 'wb').write(b'N11C\\x01' + nonce + ChaCha20Poly1305(key).encrypt(nonce, json.dumps(doc).encode(), ad))
            """
        let r = try cli.spawn("/usr/bin/python3", ["-c", script, cli.keystore, json, keepTag ? "1" : "0"])
        #expect(r.code == 0, "the forging script failed: \(r.stderr)")
        // The forgery is what the file says (read without the PIN): otherwise the test proves nothing.
        for (key, value) in values {
            let get = try cli.run(["settings", "get", key])
            #expect(get.out.trimmingCharacters(in: .whitespacesAndNewlines) == value, "\(key): \(get.out)")
            // Without the PIN nothing can be checked: a value looser than the default is noted.
            let looserThanDefault = !Self.defaults.contains { $0.key == key && $0.value == value }
            #expect(get.stderr.contains("apply only if this vault saved them") == looserThanDefault, "\(key): \(get.stderr)")
        }
    }

    static let defaults: [String: String] = [
        "backup.allow": "false", "fade.default": "1d", "kdf.iterations": "0", "kdf.memory_mib": "0", "keys.rotate_days": "0",
        "lock.idle": "5m", "log.max_kib": "1024", "preview.cache_mib": "64", "export.strip_location": "false",
        "deletion.mode": "standard",
    ]

    static func settings(_ cli: CLI) throws -> (values: [String: String], stderr: String) {
        let r = try cli.run(["settings", "list", "--json"], pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: String]])
        return (Dictionary(uniqueKeysWithValues: rows.compactMap { row in row["key"].flatMap { k in row["value"].map { (k, $0) } } }), r.stderr)
    }

    @Test("every loosening setting forged off (tag and copy kept): the owner's values apply, one notice names them; the behaviour keeps each protection")
    func forgedKeepingTag() throws {
        let cli = try CLI()
        try cli.initVault()
        for (key, value) in Self.owner.sorted(by: { $0.key < $1.key }) {
            #expect(try cli.run(["settings", "set", key, value], pinStdin: true).code == 0)
        }
        let land = try PhotoFixtures.orientedJPEGWithGPS(cli)
        let photo = try cli.importIDs([land])[0]
        try Self.forge(cli, Self.forged, keepTag: true)

        let (values, stderr) = try Self.settings(cli)
        for (key, value) in Self.owner { #expect(values[key] == value, "\(key) = \(values[key] ?? "-"), the owner set \(value)") }
        #expect(values["backup.allow"] == "false" && values["kdf.memory_mib"] == "0" && values["kdf.iterations"] == "0")
        let notices = stderr.split(separator: "\n").filter { $0.contains("not applied") }
        #expect(notices.count == 1, "\(stderr)")
        for key in Self.forged.keys { #expect(notices.first?.contains(key) == true, "the notice does not name \(key): \(stderr)") }

        // export.strip_location: an export without a flag still strips the location.
        let out = cli.root + "/out.jpg"
        #expect(try cli.run(["export", photo, "-o", out], pinStdin: true).code == 0)
        #expect(!(try PhotoFixtures.run(cli, "exiftool", ["-s", "-gps:all", out]).out.contains("GPS")), "the forged strip_location applied")
        // deletion.mode: a delete that names no mode is secure.
        let item = try cli.importIDs([cli.file("x.bin", [1, 2, 3])])[0]
        let deleted = try cli.run(["delete", item, "--json"], pinStdin: true)
        #expect(deleted.out.contains("\"secure\""), "the forged deletion.mode applied: \(deleted.out) \(deleted.stderr)")
        // fade.default: "default" is the owner's hour, not ten years.
        let fading = try cli.importIDs([cli.file("f.bin", [4])], extra: ["--fade", "default"])[0]
        let rows = try cli.listJSON(["--all"])
        let fadesAt = try #require(rows.first { ($0["id"] as? String)?.hasPrefix(fading) == true }?["fadesAt"] as? String, "\(rows)")
        let year = Calendar(identifier: .gregorian).component(.year, from: Date())
        #expect(fadesAt.hasPrefix("\(year)") || fadesAt.hasPrefix("\(year + 1)"), "the forged fade.default applied: fades at \(fadesAt)")
        // backup.allow: the vault folder stays excluded from backups.
        #expect(FileManager.default.fileExists(atPath: cli.vault + "/CACHEDIR.TAG"), "the forged backup.allow applied")
    }

    @Test("every loosening setting forged off with the tag and copy dropped: no value looser than the default applies, with one notice")
    func forgedDroppingTag() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["settings", "set", "deletion.mode", "secure"], pinStdin: true).code == 0)
        try Self.forge(cli, Self.forged, keepTag: false)
        let (values, stderr) = try Self.settings(cli)
        for (key, value) in Self.defaults { #expect(values[key] == value, "\(key) = \(values[key] ?? "-")") }
        let notices = stderr.split(separator: "\n").filter { $0.contains("not applied") }
        #expect(notices.count == 1, "\(stderr)")
        for key in ["backup.allow", "fade.default", "kdf.memory_mib", "lock.idle", "log.max_kib", "preview.cache_mib"] {
            #expect(notices.first?.contains(key) == true, "the notice does not name \(key): \(stderr)")
        }
    }

    @Test("a forged file of the defaults only, tag dropped (issue 55's review): stricter choices reset to the defaults are told at unlock, check fails, check --repair seals the values in use")
    func forgedDefaultsWithoutTag() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["settings", "set", "deletion.mode", "secure"], pinStdin: true).code == 0)
        try Self.forge(cli, ["deletion.mode": "standard"], keepTag: false)
        let (_, stderr) = try Self.settings(cli)
        #expect(stderr.contains("does not carry this vault's tag"), "no notice for an untagged settings file: \(stderr)")
        let check = try cli.run(["check"], pinStdin: true)
        #expect(check.code != 0 && check.out.contains("settings"), "check passed an untagged settings file: \(check.out)")
        #expect(try cli.run(["check", "--repair"], pinStdin: true).code == 0)
        #expect(try cli.run(["check"], pinStdin: true).code == 0)
        #expect(!(try Self.settings(cli)).stderr.contains("does not carry this vault's tag"))
    }

    /// The adversary review of issue 56: a backup-PIN session read the primary's settings (which
    /// it cannot verify) as forged, warned "changed by another program?" in front of whoever
    /// watched, and put CACHEDIR.TAG and nodump on a folder whose owner chose backups — so
    /// restic and borg skipped the vault after any backup-PIN use, and the markers switching on
    /// and off told when a second PIN was used.
    @Test("a backup-PIN session leaves the folder's backup markers and says nothing about the primary's settings")
    func backupSessionLeavesMarkers() throws {
        let cli = try CLI()
        let r = try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2", "--backups", "yes"], pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        try cli.setBackup("backup pin 77")
        #expect(!FileManager.default.fileExists(atPath: cli.vault + "/CACHEDIR.TAG"), "backups were chosen, yet the folder is excluded")
        for args in [["list"], ["import", cli.file("b.txt", [1, 2])], ["status"]] {
            let b = try cli.spawn(CLI.binary, args + ["--pin-stdin"], input: Data("backup pin 77\n".utf8))
            #expect(b.code == 0, "\(args[0]) with the backup PIN: \(b.stderr)")
            #expect(!b.stderr.contains("warning"), "\(args[0]) with the backup PIN warned: \(b.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.vault + "/CACHEDIR.TAG"), "\(args[0]) with the backup PIN excluded the folder from backups")
        }
        let primary = try cli.run(["status"], pinStdin: true)
        #expect(primary.code == 0 && !primary.stderr.contains("warning"), "\(primary.stderr)")
    }
}
