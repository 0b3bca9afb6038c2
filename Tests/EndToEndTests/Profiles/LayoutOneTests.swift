// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// A key store from before key packs (layout 1: `items/<ID>.key`, FORMAT.md §4.3) where the
/// adoption cannot write: the records are read where they are, writes fail in one line, and
/// once the disk can be written the next command adopts them.
@Suite("layout-1 key stores that cannot be written")
struct LayoutOneTests {
    @Test("a layout-1 key store on a read-only or a full disk: list, export and check read its loose records; import fails in one line; writable again, the next command adopts them and a delete shreds", .enabled(if: Mounts.available, "needs permission to mount a tmpfs"))
    func unwritableLayoutOne() throws {
        for situation in ["read-only", "full"] {
            let cli = try CLI()
            let disk = cli.root + "/disk"
            try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
            try #require(try cli.spawn("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", disk]).code == 0)
            defer { _ = try? cli.spawn("/bin/umount", ["-l", disk]) }
            let store = disk + "/keystore"
            let env = ["NU11VLT_VAULT": disk + "/vault", "NU11VLT_KEYSTORE": store]
            #expect(try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true, environment: env).code == 0)
            var bytes: [String: Data] = [:]
            for (n, name) in ["a.jpg", "b.jpg"].enumerated() {
                let content = Data((0..<(3000 + n)).map { UInt8(truncatingIfNeeded: $0 * (n + 3)) })
                let r = try cli.run(["import", cli.file(name, Array(content))], pinStdin: true, environment: env)
                #expect(r.code == 0, "\(situation): import: \(r.stderr)")
                bytes[String(r.out.prefix(32))] = content
            }
            let ids = try cli.convertToLayoutOne(store)
            #expect(Set(ids) == Set(bytes.keys), "\(situation): the records found: \(ids)")
            if situation == "read-only" {
                #expect(try cli.spawn("/bin/mount", ["-o", "remount,ro", disk]).code == 0)
            } else {
                _ = try cli.spawn("/bin/sh", ["-c", "dd if=/dev/zero of=\"$0/filler\" bs=4k 2>/dev/null; true", disk])
            }
            let listed = try cli.run(["list"], pinStdin: true, environment: env)
            #expect(listed.code == 0 && bytes.keys.allSatisfy { listed.out.contains($0) }, "\(situation): list: \(listed.out) \(listed.stderr)")
            #expect(listed.stderr.contains("read where they are"), "\(situation): no warning: \(listed.stderr)")
            for (id, content) in bytes {
                #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true, environment: env).stdout == content, "\(situation): export \(id)")
            }
            let check = try cli.run(["check"], pinStdin: true, environment: env)
            #expect(check.code == 0, "\(situation): check: \(check.out) \(check.stderr)")
            expectCleanError(try cli.run(["import", cli.file("c.jpg", [5])], pinStdin: true, environment: env), code: 74)
            #expect(cli.exists(store + "/items"), "\(situation): the loose records went while the disk could not be written")

            if situation == "read-only" {
                #expect(try cli.spawn("/bin/mount", ["-o", "remount,rw", disk]).code == 0)
            } else {
                try FileManager.default.removeItem(atPath: disk + "/filler")
            }
            let again = try cli.run(["list"], pinStdin: true, environment: env)
            #expect(again.code == 0 && !again.stderr.contains("read where they are"), "\(situation): \(again.stderr)")
            #expect(!cli.exists(store + "/items"), "\(situation): not adopted once writable")
            #expect(Set(try cli.allKeyRecords(in: store).keys) == Set(bytes.keys), "\(situation): the packs after adoption")
            let (doomed, kept) = (ids[0], ids[1])
            #expect(try cli.run(["delete", doomed], pinStdin: true, environment: env).code == 0)
            #expect(try cli.allKeyRecords(in: store)[doomed] == nil, "\(situation): the deleted item's record survives")
            #expect(try cli.run(["export", kept, "-o", "-"], pinStdin: true, environment: env).stdout == bytes[kept], "\(situation): export after")
        }
    }
}
