// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// A failing disk, then a crash. The commit point of an import is the index's transaction; its
/// WAL sync failing leaves the transaction's frames in the WAL file, commit frame and all, where
/// the next process to open the index would find them. Whatever happens next, an item is whole
/// (listed, its key record there, exported byte-identical) or absent — never a row whose key
/// record was shredded because the command believed its commit had failed. Each WAL sync of the
/// command is failed in turn (`NU11_FAULT_WAL_SYNC`); for a one-file import, each one that makes
/// it fail is then failed again with a SIGKILL at every later file-system call
/// (`NU11_FAULT_KILL_AT`). (A folder import's commit thread racing its next group is what made
/// the command shred a group whose rows the next process found; FaultTests+Groups fails every
/// call of it in turn, and this test fails its WAL syncs.)
extension FaultTests {
    @Test("a commit whose WAL sync fails, alone and then killed at every later call: every item whole or absent, check passes")
    func walSyncFailsThenCrash() throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let template = try CLI()
        try template.initVault()
        let old = try template.importIDs([template.file("old.bin", [1, 2, 3])])[0]
        FileManager.default.createFile(atPath: template.root + "/new.bin", contents: Self.groupPayload(9))
        try Self.makeGroupFolder(template.root + "/many", count: 5)
        let commands: [(String, [String], kills: Bool)] = [
            ("import", ["import", "--pin-stdin", "new.bin"], true),
            ("import -r --commit-every 2", ["import", "-r", "--commit-every", "2", "--pin-stdin", "many"], false),
        ]
        var commitSyncs = 0
        for (name, args, kills) in commands {
            for sync in 1...12 {
                let probe = try trial(template, args, sync: sync, killAt: nil)
                guard let failedAt = probe.failedAt else { break }  // the command has fewer WAL syncs
                try verifyWhole(probe.cli, old: old, "\(name), WAL sync \(sync) failed (exit \(probe.code))")
                guard probe.code != 0 else { continue }  // a sync the command survives is no commit point
                commitSyncs += 1
                for killAt in (failedAt + 1)...(probe.calls + 1) where kills {
                    let t = try trial(template, args, sync: sync, killAt: killAt)
                    try verifyWhole(t.cli, old: old, "\(name), WAL sync \(sync) failed, killed at call \(killAt) of \(probe.calls)")
                }
            }
        }
        #expect(commitSyncs >= 2, "only \(commitSyncs) commit points found: the shim no longer sees SQLite's WAL syncs")
    }

    /// One run of `args` in a copy of the template's vault, the `sync`-th WAL sync failing.
    func trial(_ template: CLI, _ args: [String], sync: Int, killAt: Int?) throws -> (cli: CLI, code: Int32, failedAt: Int?, calls: Int) {
        let cli = try CLI()
        for part in ["vault", "keystore", "new.bin", "many"] {
            try FileManager.default.copyItem(atPath: template.root + "/" + part, toPath: cli.root + "/" + part)
        }
        var env = ["LD_PRELOAD": FaultShim.library ?? "", "NU11_FAULT_PREFIX": cli.root + "/", "NU11_FAULT_WAL_SYNC": "\(sync)",
                   "NU11_FAULT_FAILED_AT": cli.root + "/.failed", "NU11_FAULT_COUNT": cli.root + "/.count"]
        if let killAt { env["NU11_FAULT_KILL_AT"] = "\(killAt)" }
        let r = try cli.spawn(CLI.binary, args.map { ["new.bin", "many"].contains($0) ? cli.root + "/" + $0 : $0 },
                              input: Data((cli.pin + "\n").utf8), environment: env)
        if killAt == nil, r.code != 0 {
            let errors = r.stderr.split(separator: "\n").filter { $0.hasPrefix("nu11vlt: error: ") }
            #expect(errors.count == 1 && errors[0].contains("hint:"), "WAL sync \(sync): \(r.stderr)")
        }
        func number(_ file: String) -> Int? {
            (try? String(contentsOfFile: cli.root + "/" + file, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        return (cli, r.code, number(".failed"), number(".count") ?? 0)
    }

    /// `check` passes; the old item and every listed new one export byte-identical.
    func verifyWhole(_ cli: CLI, old: String, _ place: String) throws {
        let check = try cli.run(["check"], pinStdin: true)
        #expect(check.code == 0, "\(place): \(check.out) \(check.stderr)")
        let items = try listed(cli)
        var expected: [String: Data] = [:]
        for item in items {
            guard let id = item["id"] as? String, let name = item["name"] as? String else { continue }
            if id == old { expected[id] = Data([1, 2, 3]) }
            else if name == "new.bin" { expected[id] = Self.groupPayload(9) }
            else if let n = Int(name.dropFirst().prefix(4)), name.hasPrefix("f") { expected[id] = Self.groupPayload(n) }
        }
        #expect(expected[old] != nil && expected.count == items.count, "\(place): listed \(items.map { $0["name"] ?? "?" })")
        let out = cli.root + "/landed"
        let r = try cli.run(["export"] + expected.keys.sorted() + ["-o", out], pinStdin: true)
        #expect(r.code == 0, "\(place): the listed items do not export: \(r.stderr)")
        for item in items {
            guard let id = item["id"] as? String, let name = item["name"] as? String, let bytes = expected[id] else { continue }
            let file = expected.count == 1 ? out : out + "/" + name  // one item: -o names the file
            #expect(FileManager.default.contents(atPath: file) == bytes, "\(place): \(name) exports changed")
        }
    }
}
