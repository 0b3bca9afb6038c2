// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 57: the backup exclusion checked by the tools themselves, on a file system that has
/// attributes (ext4; tmpfs has none). What the project marks (docs/THREAT-MODEL.md, "Backups";
/// `BackupExclusion`): the key store always, and the vault folder while backups are off, each
/// with a CACHEDIR.TAG (honoured by `tar --exclude-caches`, restic and borg with
/// `--exclude-caches`; the restic and borg runs are in BackupCommandsTests) and `nodump`
/// (what `lsattr` shows as `d`). A tag with a wrong signature, or nodump never set, fails here.
@Suite("backup markers, read by tar and lsattr on ext4")
struct BackupMarkersTests {
    /// A folder on a disk file system with attributes (never tmpfs), removed by the caller.
    static func diskFolder(_ cli: CLI) throws -> String? {
        for base in ["/var/tmp", Repo.path(".build-h"), Repo.path(".build")] {
            let type = try cli.spawn("/usr/bin/stat", ["-f", "-c", "%T", base])
            guard type.code == 0, type.out.hasPrefix("ext") else { continue }
            let path = base + "/n11-markers-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return path
        }
        return nil
    }

    @Test("tar --exclude-caches of the folders' parent keeps no key-store file (and, backups off, no vault file); lsattr shows nodump on both; after backup enable the vault folder is in the tar and loses nodump")
    func tarAndLsattr() throws {
        let cli = try CLI()
        guard let parent = try Self.diskFolder(cli) else {
            Issue.record("no ext4 folder to test nodump on (tmpfs has no attributes)")
            return
        }
        defer { try? FileManager.default.removeItem(atPath: parent) }
        cli.environment["NU11VLT_VAULT"] = parent + "/vault"
        cli.environment["NU11VLT_KEYSTORE"] = parent + "/keystore"
        try cli.initVault()
        _ = try cli.importIDs([cli.file("kept.bin", [1, 2, 3])])
        let vault = parent + "/vault", keystore = parent + "/keystore"

        func tarList() throws -> [String] {
            let r = try cli.spawn("/usr/bin/tar", ["--exclude-caches", "-cf", cli.root + "/t.tar", "-C", parent, "."])
            #expect(r.code == 0, "tar: \(r.stderr)")
            let listed = try cli.spawn("/usr/bin/tar", ["-tf", cli.root + "/t.tar"])
            return listed.out.split(separator: "\n").map { String($0.hasPrefix("./") ? $0.dropFirst(2) : $0[...]) }
        }
        func nodump(_ folder: String) throws -> Bool {
            let r = try cli.spawn("/usr/bin/lsattr", ["-d", folder])
            #expect(r.code == 0, "lsattr: \(r.stderr)")
            return r.out.split(separator: " ").first?.contains("d") == true
        }
        /// What the tar holds of `folder`, beyond the folder and its tag.
        func held(_ list: [String], _ folder: String) -> [String] {
            list.filter { $0.hasPrefix(folder + "/") && $0 != folder + "/" && $0 != folder + "/CACHEDIR.TAG" }
        }

        // Without --exclude-caches tar takes everything: the check below proves something.
        let plain = try cli.spawn("/usr/bin/tar", ["-cf", cli.root + "/p.tar", "-C", parent, "."])
        #expect(plain.code == 0)
        #expect(try cli.spawn("/usr/bin/tar", ["-tf", cli.root + "/p.tar"]).out.contains("keystore/master.n11k"), "the control took no key store")

        var list = try tarList()
        #expect(held(list, "keystore").isEmpty, "tar --exclude-caches stored the key store (is CACHEDIR.TAG's signature right?): \(held(list, "keystore"))")
        #expect(held(list, "vault").isEmpty, "backups are off, yet tar --exclude-caches stored the vault folder: \(held(list, "vault"))")
        #expect(try nodump(keystore), "the key store does not carry nodump")
        #expect(try nodump(vault), "the vault folder (backups off) does not carry nodump")

        #expect(try cli.run(["backup", "enable"], pinStdin: true).code == 0)
        list = try tarList()
        #expect(list.contains("vault/index.sqlite"), "backups on, yet tar left out the vault folder")
        #expect(held(list, "keystore").isEmpty, "after backup enable tar stored the key store: \(held(list, "keystore"))")
        #expect(try !nodump(vault), "backups on, yet the vault folder still carries nodump")
        #expect(try nodump(keystore), "backup enable took nodump off the key store")

        #expect(try cli.run(["backup", "disable"], pinStdin: true).code == 0)
        #expect(held(try tarList(), "vault").isEmpty, "backups off again, yet tar stored the vault folder")
        #expect(try nodump(vault))
    }
}
