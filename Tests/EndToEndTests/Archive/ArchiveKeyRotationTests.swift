// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 29: a rotation rotates the archive key and the log key too. After `rekey` and
/// `pin change`, an old `master.n11k` (with `device.n11d` and the old PIN) opens neither a
/// secure archive nor the audit log made after; a secure archive made before still imports.
@Suite("rotation rotates the archive and log keys")
struct ArchiveKeyRotationTests {
    /// A copy of the key store as it is now, but with the master record from before.
    func thief(_ cli: CLI, oldMaster: Data) throws -> String {
        let copy = cli.root + "/thief-\(UUID().uuidString.prefix(6))"
        try FileManager.default.copyItem(atPath: cli.keystore, toPath: copy)
        try oldMaster.write(to: URL(fileURLWithPath: copy + "/master.n11k"))
        return copy
    }

    func vaultLogs(_ keystore: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: keystore + "/log").filter { $0.hasSuffix(".n11l") && $0 != "device.n11l" }.sorted()
    }

    @Test("rekey, then pin change: archives made before import, the log keeps its entries; the old master record with the old PIN imports no archive made after and reads no log")
    func rotation() throws {
        let cli = try CLI()
        try cli.initVault()
        let bytes = Array("made before".utf8)
        let id = try cli.importIDs([cli.file("before.txt", bytes)])[0]
        let before = cli.root + "/before.nu11vlt"
        #expect(try cli.exportArchive(before, extra: ["--secure"]).code == 0)
        let oldMaster = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        let logsBefore = try vaultLogs(cli.keystore)
        let eventsBefore = try #require(try JSONSerialization.jsonObject(with: cli.run(["log", "--json"], pinStdin: true).stdout) as? [String: Any])["entries"] as? [[String: Any]]

        #expect(try cli.run(["rekey"], pinStdin: true).code == 0)
        let logsAfter = try vaultLogs(cli.keystore)
        #expect(logsAfter.count == logsBefore.count, "a log was orphaned or lost: \(logsBefore) → \(logsAfter)")
        #expect(logsAfter != logsBefore, "the log kept the name the old archive key gives it")
        let log = try cli.run(["log", "--json", "--verify"], pinStdin: true)
        #expect(log.code == 0, "\(log.stderr)")
        let entries = try #require(try JSONSerialization.jsonObject(with: log.stdout) as? [String: Any])["entries"] as? [[String: Any]] ?? []
        #expect(entries.count > (eventsBefore?.count ?? 0), "the log lost entries in the move")
        #expect(entries.contains { $0["event"] as? String == "log re-keyed" })

        // The archive made before imports (its key was retired under the new one).
        #expect(try cli.run(["delete", id], pinStdin: true).code == 0)
        let back = try cli.run(["archive", "import", before], pinStdin: true)
        #expect(back.code == 0, "an archive made before the rekey no longer imports: \(back.stderr)")
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data(bytes))

        // After: a PIN change rotates them again; an archive made now.
        #expect(try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"],
                              input: Data("\(cli.pin)\nthe-new-pin-8\n".utf8)).code == 0)
        let newPIN = "the-new-pin-8"
        let after = cli.root + "/after.nu11vlt"
        #expect(try cli.with(newPIN, ["archive", "export", "-o", after, "--secure"]).code == 0)
        #expect(try cli.with(newPIN, ["delete", id]).code == 0)
        let again = try cli.with(newPIN, ["archive", "import", before])
        #expect(again.code == 0, "two rotations later, the first archive no longer imports: \(again.stderr)")

        // The thief: today's key store files, the master record from before both rotations, the old PIN.
        let stolen = try thief(cli, oldMaster: oldMaster)
        let imported = try cli.spawn(CLI.binary, ["archive", "import", after, "--keystore", stolen, "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
        #expect(imported.code != 0, "the old master record imported a secure archive made after the rotations")
        #expect(imported.stderr.contains("another key store"), "\(imported.stderr)")
        let read = try cli.spawn(CLI.binary, ["log", "--json", "--keystore", stolen, "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
        #expect(!read.out.contains("log re-keyed") && !read.out.contains("archive import"), "the old master record read the current log: \(read.out)")
    }
}
