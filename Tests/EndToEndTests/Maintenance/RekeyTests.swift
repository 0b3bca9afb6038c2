// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Key rotation (issue 18): `rekey`, `pin change`, `keys.rotate_days`, and the other
/// vault's PINs across a rotation.
@Suite("key rotation")
struct RekeyTests {
    /// Items of every kind: a file in an album, a fade file, a note. Returns id → bytes.
    func populate(_ cli: CLI, pin: String, fade: Bool = true) throws -> [String: Data] {
        #expect(try cli.with(pin, ["album", "create", "Trip"]).code == 0)
        var out: [String: Data] = [:]
        let a = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let inAlbum = try cli.with(pin, ["import", cli.file("a-\(pin.count).bin", Array(a)), "--album", "Trip"])
        #expect(inAlbum.code == 0, "\(inAlbum.stderr)")
        out[String(inAlbum.out.prefix(32))] = a
        if fade {
            let fading = try cli.with(pin, ["import", cli.file("f-\(pin.count).txt", Array("fades".utf8)), "--fade", "1h"])
            #expect(fading.code == 0, "\(fading.stderr)")
            out[String(fading.out.prefix(32))] = Data("fades".utf8)
        }
        let note = try cli.spawn("/bin/sh", ["-c", "printf 'note body' | \"$0\" note add --title Memo --pin-fd 3 3<<EOF\n\(pin)\nEOF\n", CLI.binary])
        #expect(note.code == 0, "\(note.stderr)")
        return out
    }

    func expectExports(_ cli: CLI, pin: String, _ items: [String: Data], _ place: String) throws {
        for (id, bytes) in items {
            let r = try cli.with(pin, ["export", id, "-o", "-"])
            #expect(r.code == 0 && r.stdout == bytes, "\(place): \(id) does not export byte-identical: \(r.stderr)")
        }
        let listed = try cli.with(pin, ["list"])
        #expect(listed.code == 0 && listed.out.contains("[Trip]"), "\(place): \(listed.out) \(listed.stderr)")
        let memo = try cli.with(pin, ["note", "list"]).out.split(separator: "\n").first { $0.contains("Memo") }
        let notes = try cli.with(pin, ["note", "show", String((memo ?? "").prefix(32))])
        #expect(notes.out.contains("note body"), "\(place): the note: \(notes.stderr)")
        #expect(try cli.with(pin, ["check"]).code == 0, "\(place): check fails")
    }

    /// A key store made of today's files with `master.n11k` taken from `oldMaster`.
    func keyStoreWithOldMaster(_ cli: CLI, _ oldMaster: Data) throws -> String {
        let copy = cli.root + "/ks-old-\(UUID().uuidString.prefix(6))"
        try FileManager.default.copyItem(atPath: cli.keystore, toPath: copy)
        try oldMaster.write(to: URL(fileURLWithPath: copy + "/master.n11k"))
        return copy
    }

    @Test("rekey: every item exports byte-identical; an old master record with the PIN opens nothing added after")
    func rekey() throws {
        let cli = try CLI()
        try cli.initVault()
        let items = try populate(cli, pin: cli.pin)
        let oldMaster = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        // Counts and paths; the "changed" line (the last backup-relevant change) moves with the rotation.
        func status() throws -> String {
            try cli.run(["status", "--unlock"], pinStdin: true).out.split(separator: "\n").filter { !$0.hasPrefix("changed ") }.joined(separator: "\n")
        }
        let before = try status()
        let r = try cli.run(["rekey", "--json"], pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        let report = try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]
        #expect(report?["keyRecords"] as? Int == 3 && report?["rows"] as? Int == 3 && report?["albums"] as? Int == 1, "\(r.out)")
        try expectExports(cli, pin: cli.pin, items, "after rekey")
        #expect(try status() == before)
        let forwards = (try? FileManager.default.contentsOfDirectory(atPath: cli.keystore + "/forward")) ?? []
        #expect(forwards.isEmpty,
                "the primary's rotation record was left behind")
        let added = try cli.importIDs([cli.file("after.jpg", [9, 9, 9])])[0]
        let old = try keyStoreWithOldMaster(cli, oldMaster)
        let export = try cli.spawn(CLI.binary, ["export", added, "-o", "-", "--keystore", old, "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
        #expect(export.code != 0 && export.stdout.isEmpty, "the old master record opened an item added after the rotation")
        for id in items.keys {
            let r = try cli.spawn(CLI.binary, ["export", id, "-o", "-", "--keystore", old, "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
            #expect(r.stdout.isEmpty, "the old master record still opens \(id)")
        }
    }

    @Test("pin change rotates the keys: the old master record and the old PIN open nothing added after; --keep-keys is refused")
    func pinChange() throws {
        let cli = try CLI()
        try cli.initVault()
        let items = try populate(cli, pin: cli.pin)
        let oldMaster = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        let changed = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(cli.pin)\nnew-pin-42\n".utf8))
        #expect(changed.code == 0 && changed.out.contains("rotated"), "\(changed.out) \(changed.stderr)")
        try expectExports(cli, pin: "new-pin-42", items, "after pin change")
        let added = String(try cli.with("new-pin-42", ["import", cli.file("after.jpg", [4, 4])]).out.prefix(32))
        let old = try keyStoreWithOldMaster(cli, oldMaster)
        let r = try cli.spawn(CLI.binary, ["export", added, "-o", "-", "--keystore", old, "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
        #expect(r.code != 0 && r.stdout.isEmpty, "the old PIN with an old master record opened an item added after the change")
        // --keep-keys is refused (a PIN change is a revocation: always a new key generation).
        let master = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        let kept = try cli.spawn(CLI.binary, ["pin", "change", "--keep-keys", "--pin-stdin", "--new-pin-fd", "0"], input: Data("new-pin-42\nthird-pin-3\n".utf8))
        expectCleanError(kept, code: 64, mentions: "always rotates")
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k")) == master, "a refused --keep-keys changed the key store")
    }

    @Test("the backup vault survives a primary rotation; the duress PIN follows a backup rotation")
    func otherVaults() throws {
        let cli = try CLI()
        try cli.initVault()
        let primary = try populate(cli, pin: cli.pin)
        let backupPIN = "backup-pin-2"
        try cli.setBackup(backupPIN)
        let backup = try populate(cli, pin: backupPIN)
        #expect(try cli.run(["rekey"], pinStdin: true).code == 0)
        try expectExports(cli, pin: backupPIN, backup, "backup after a primary rekey")
        try expectExports(cli, pin: cli.pin, primary, "primary after its rekey")
        let duress = try cli.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(backupPIN)\nduress-pin-3\n".utf8))
        #expect(duress.code == 0, "\(duress.stderr)")
        let rotated = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(backupPIN)\nbackup-pin-9\n".utf8))
        #expect(rotated.code == 0, "\(rotated.stderr)")
        #expect(try cli.with("backup-pin-9", ["rekey"]).code == 0)
        try expectExports(cli, pin: "backup-pin-9", backup, "backup after its own rotations")
        try expectExports(cli, pin: cli.pin, primary, "primary after the backup's rotations")
        // The duress PIN still opens the backup vault (and destroys the primary, silently).
        try expectExports(cli, pin: "duress-pin-3", backup, "duress after the backup's rotations")
        try expectExports(cli, pin: "backup-pin-9", backup, "backup after the duress unlock")
        #expect(try cli.with(cli.pin, ["list"]).code != 0, "the primary PIN still opens after the duress PIN")
    }

    @Test("keys.rotate_days rotates at the first unlock after the period, validated")
    func rotationPolicy() throws {
        let cli = try CLI()
        try cli.initVault()
        let items = try populate(cli, pin: cli.pin, fade: false)  // two days later a fade item is gone
        expectCleanError(try cli.run(["settings", "set", "keys.rotate_days", "4000"], pinStdin: true), code: 64, mentions: "1 … 3650")
        #expect(try cli.run(["settings", "set", "keys.rotate_days", "1"], pinStdin: true).code == 0)
        let master = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k")) == master, "rotated before the period")
        // Two days later (faketime moves the wall and boot clocks together, as a reboot would).
        try #require(FileManager.default.isExecutableFile(atPath: ClockTests.faketime), "faketime is not installed (make test installs it)")
        let r = try cli.spawn(ClockTests.faketime, ["-f", "+2d", CLI.binary, "list", "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
        #expect(r.code == 0, "\(r.stderr)")
        let old = try keyStoreWithOldMaster(cli, master)
        let stale = try cli.spawn(CLI.binary, ["list", "--keystore", old, "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
        #expect(stale.code != 0, "the keys were not rotated after the period")
        try expectExports(cli, pin: cli.pin, items, "after the policy rotation")
    }

    @Test("rekey --content: every item re-encrypted under a fresh key (new IDs), bytes, album, fade and note kept; an old key store opens none")
    func content() throws {
        let cli = try CLI()
        try cli.initVault()
        let items = try populate(cli, pin: cli.pin)
        let oldStore = cli.root + "/ks-before"
        try FileManager.default.copyItem(atPath: cli.keystore, toPath: oldStore)
        let r = try cli.run(["rekey", "--content", "--json"], pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        let report = try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]
        let map = (report?["reencrypted"] as? [[String: String]]) ?? []
        #expect(map.count == 3, "\(r.out)")
        var renamed: [String: Data] = [:]
        for (old, bytes) in items {
            let new = try #require(map.first { $0["old"] == old }?["new"], "\(old) was not re-encrypted")
            #expect(new != old)
            renamed[new] = bytes
            #expect(try cli.run(["export", old, "-o", "-"], pinStdin: true).code != 0, "the old ID \(old) still exports")
        }
        try expectExports(cli, pin: cli.pin, renamed, "after rekey --content")
        let fading = try cli.run(["list", "--json"], pinStdin: true).out
        #expect(fading.contains("fadesAt\" : \"20"), "the fade deadline was lost: \(fading)")
        for id in renamed.keys {
            let viaOld = try cli.spawn(CLI.binary, ["export", id, "-o", "-", "--keystore", oldStore, "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
            #expect(viaOld.stdout.isEmpty, "the old key store opens re-encrypted \(id)")
        }
        let log = try cli.run(["log"], pinStdin: true).out
        #expect(log.contains("rekey content"), "\(log)")
    }
}
