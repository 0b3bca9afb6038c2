// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 30: backups with the tools people already use. Debian's restic backs up the vault
/// folder (its exclusion removed by `backup enable`, the key store's kept); both folders are
/// destroyed; restic restores the folder and `nu11vlt recover` with the phrase brings every
/// item back — except one deleted before the snapshot, which cannot be decrypted from it.
@Suite("backups with restic")
struct BackupTests {
    func restic(_ cli: CLI, _ args: [String]) throws -> CLI.Outcome {
        let r = try cli.spawn("/usr/bin/restic", ["-r", cli.root + "/restic-repo", "--no-cache", "-q"] + args,
                              environment: ["RESTIC_PASSWORD": "restic test repository"])
        #expect(r.code == 0, "restic \(args.first ?? ""): \(r.stderr)")
        return r
    }

    @Test("backup enable, restic backup, both folders destroyed, restic restore, recover: every item byte-identical; a deleted item is gone from the later snapshot")
    func resticRoundTrip() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let status0 = try cli.run(["backup", "status"])
        #expect(status0.out.contains("vault folder excluded"), "\(status0.out)")

        let enable = try cli.run(["backup", "enable"], pinStdin: true)
        #expect(enable.code == 0, "\(enable.stderr)")
        for part in ["brings back", "stays in the snapshots made before", "forget --prune", "Never back up the key store"] {
            #expect(enable.out.contains(part), "backup enable does not say \(part): \(enable.out)")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.vault + "/CACHEDIR.TAG"))
        #expect(FileManager.default.fileExists(atPath: cli.keystore + "/CACHEDIR.TAG"), "the key store lost its exclusion")
        let status = try cli.run(["status"])
        #expect(status.out.contains("vault folder backup-friendly; key store excluded") && status.out.contains("changed    20"), "\(status.out)")
        #expect(status.out.contains("recovery   the vault folder carries recovery data"), "\(status.out)")

        var originals: [String: Data] = [:]
        let names = ["keep-1.bin", "keep-2.bin", "deleted.bin"]
        for (i, name) in names.enumerated() {
            let bytes = (0..<(20_000 * (i + 1))).map { UInt8(truncatingIfNeeded: $0 &* (i + 3)) }
            let id = try cli.importIDs([cli.file(name, bytes)])[0]
            originals[name] = Data(bytes)
            originals[id] = Data(bytes)
        }
        let ids = try cli.listJSON().reduce(into: [String: String]()) { $0[$1["name"] as? String ?? ""] = $1["id"] as? String }
        let deleted = try #require(ids["deleted.bin"])
        #expect(try cli.runPinFD(["note", "add", "--title", "kept note"], stdin: Data("a note in the backup".utf8)).code == 0)

        _ = try restic(cli, ["init"])
        _ = try restic(cli, ["backup", "--exclude-caches", "--tag", "one", cli.vault, cli.keystore])
        let listed = try restic(cli, ["ls", "latest"]).out
        #expect(listed.contains("/index.sqlite") && listed.contains("/recovery.n11r") && listed.contains("\(deleted).n11"), "\(listed)")
        #expect(!listed.contains("master.n11k") && !listed.contains("device.n11d") && !listed.contains(".key\n") && !listed.contains(".n11p\n"),
                "restic backed up the key store: \(listed)")

        #expect(try cli.run(["delete", deleted], pinStdin: true).code == 0)
        _ = try restic(cli, ["backup", "--exclude-caches", "--tag", "two", cli.vault, cli.keystore])

        // The disk dies: both folders are gone.
        try FileManager.default.removeItem(atPath: cli.vault)
        try FileManager.default.removeItem(atPath: cli.keystore)

        let target = cli.root + "/restored-two"
        _ = try restic(cli, ["restore", "latest", "--tag", "two", "--target", target])
        let vault = target + cli.vault
        let keystore = cli.root + "/new-keystore"
        let r = try cli.recover(phrase: phrase, newPIN: "after the disk died", extra: ["--vault", vault, "--keystore", keystore])
        #expect(r.code == 0, "\(r.stderr)")
        let open = ["--vault", vault, "--keystore", keystore]
        let list = try cli.with("after the disk died", ["list"] + open).out
        for name in ["keep-1.bin", "keep-2.bin"] {
            let id = try #require(ids[name])
            #expect(try cli.with("after the disk died", ["export", id, "-o", "-"] + open).stdout == originals[name], "\(name) differs")
        }
        #expect(try cli.with("after the disk died", ["note", "list"] + open).out.contains("kept note"))
        #expect(!list.contains("deleted.bin") && !list.contains(deleted), "the deleted item came back: \(list)")
        // Nothing of it is left to decrypt: no file, no recovery seal.
        let files = cli.allFiles(vault).map { ($0 as NSString).lastPathComponent }
        #expect(!files.contains { $0.hasPrefix(deleted) }, "the deleted item's file is in the later snapshot")
        #expect(try cli.sqlite(vault + "/index.sqlite", "SELECT count(*) FROM recovery WHERE id = '\(deleted)'") == "0")
        #expect(try cli.sqlite(vault + "/index.sqlite", "SELECT count(*) FROM item WHERE id = '\(deleted)'") == "0")

        // The snapshot made before the deletion still holds it — as `backup enable` says.
        let older = cli.root + "/restored-one"
        _ = try restic(cli, ["restore", "latest", "--tag", "one", "--target", older])
        #expect(cli.allFiles(older + cli.vault).contains { $0.hasSuffix("\(deleted).n11") })
    }
}
