// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// A folder import of two commit groups: the first group's syncs, renames and index
/// transaction run on another thread while the second is encrypted (the overlapped commit).
/// Failed at 24 calls spread over the whole command (it makes about 1,500; each trial imports
/// 260 files, so every call in turn would take most of an hour), the vault holds
/// whole groups only: none, the first, or (when the command said done) all. A full disk
/// stops the import at the file that did not fit, with every file before it committed: the
/// vault then holds the files in order up to some file, never one after a gap.
extension FaultTests {
    static let groupFiles = 260  // a group closes at 256 files

    static func groupPayload(_ n: Int) -> Data { Data("item \(n) of a two-group import\n".utf8) + Data(repeating: UInt8(n % 251), count: 200) }

    /// `dir` made with the 260 files f0000.txt … f0259.txt.
    static func makeGroupFolder(_ dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for n in 0..<groupFiles {
            FileManager.default.createFile(atPath: dir + String(format: "/f%04d.txt", n), contents: groupPayload(n))
        }
    }

    func twoGroupScenario(diskFull: Bool) -> Scenario {
        Scenario(
            prepare: { cli in
                try Self.makeGroupFolder(cli.root + "/many")
                return [try cli.importIDs([cli.file("old.bin", [1, 2, 3])])[0]: Data([1, 2, 3])]
            },
            command: { cli in [CLI.binary, "import", "-r", "--pin-stdin", cli.root + "/many"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let new = try listed(cli, ["list", "--limit", "100000"]).filter { ($0["name"] as? String)?.hasPrefix("f") == true }
                let names = Set(new.compactMap { $0["name"] as? String })
                let prefix = Set((0..<names.count).map { String(format: "f%04d.txt", $0) })
                if ok {
                    #expect(new.count == Self.groupFiles, "import said done but \(new.count) of \(Self.groupFiles) items exist")
                } else if diskFull {
                    #expect(names == prefix, "a full disk left \(names.count) items that are not the first files in order")
                } else {
                    #expect(names.isEmpty || (names.count == 256 && names == prefix),
                            "a failed import left \(names.count) items, not a whole first group")
                }
                // A few of what landed, byte for byte.
                for entry in new.shuffled().prefix(3) {
                    guard let id = entry["id"] as? String, let name = entry["name"] as? String,
                          let n = Int(name.dropFirst().prefix(4)) else { continue }
                    try exports(cli, [id: Self.groupPayload(n)], pin: cli.pin, "imported \(name)")
                }
                let temps = try cli.spawn("/usr/bin/find", [cli.vault, cli.keystore, "-name", ".n11tmp-*"])
                if ok { #expect(temps.out.isEmpty, "temp files left after success: \(temps.out.prefix(200))") }
                return cli.pin
            })
    }

    @Test("import of a folder in two commit groups, the first committing while the second is staged")
    func importTwoGroups() throws { try run("import -r (two groups)", twoGroupScenario(diskFull: false), sample: 24) }

    @Test("the same, disk full (ENOSPC)")
    func importTwoGroupsFull() throws { try run("import -r (two groups, ENOSPC)", twoGroupScenario(diskFull: true), errno: ENOSPC, sample: 30) }

    @Test("two commit groups without a fault: every item printed once, in the order given, and listed")
    func importTwoGroupsOrder() throws {
        let cli = try CLI()
        try cli.initVault()
        let dir = cli.root + "/many"
        try Self.makeGroupFolder(dir)
        let r = try cli.run(["import", "-r", dir], pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        let lines = r.out.split(separator: "\n")
        let printed = lines.compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init) }
        #expect(printed == (0..<Self.groupFiles).map { String(format: "f%04d.txt", $0) }, "printed \(lines.count) lines")
        #expect(try listed(cli, ["list", "--limit", "1000"]).count == Self.groupFiles)
        let pending = (try? FileManager.default.contentsOfDirectory(atPath: cli.keystore + "/pending")) ?? []
        #expect(pending.isEmpty, "journal markers left: \(pending)")
    }
}
