// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 59: importing an age file is all or nothing under a full disk too. A share of two
/// items, sent to the vault's own recipient, is imported with ENOSPC at a spread of the
/// calls that write into the vault: either both items are in, or neither, and `check` finds
/// no leftover.
extension FaultTests {
    @Test("import FILE.age, disk full (ENOSPC) at spread points: both items or none")
    func shareImportFull() throws {
        try run("import FILE.age (ENOSPC)", Scenario(
            prepare: { cli in
                let ids = try cli.importIDs([cli.file("one.jpg", Array(Self.payload)), cli.file("two.bin", [7, 7, 7])])
                let recipient = try cli.run(["identity", "--post-quantum"], pinStdin: true).out.trimmingCharacters(in: .whitespacesAndNewlines)
                let made = try cli.run(["share", "--to", recipient, "-o", cli.root + "/share.age"] + ids, pinStdin: true)
                #expect(made.code == 0, "\(made.stderr)")
                #expect(try cli.run(["delete"] + ids, pinStdin: true).code == 0)
                return [try cli.importIDs([cli.file("kept.txt", [1, 2, 3])])[0]: Data([1, 2, 3])]
            },
            command: { cli in [CLI.binary, "import", "--pin-stdin", cli.root + "/share.age"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let names = Set(try listed(cli).compactMap { $0["name"] as? String })
                let expected: Set<String> = ok ? ["kept.txt", "one.jpg", "two.bin"] : ["kept.txt"]
                #expect(names == expected, "import said \(ok ? "done" : "failed") but the vault holds \(names)")
                return cli.pin
            }), errno: ENOSPC, pick: { log in
                // Writes, syncs and renames into the vault folder: a dozen spread over them.
                let ops = ["write", "pwrite", "fsync", "rename", "fdatasync"]
                let writes = log.calls.filter { call in call.path.hasPrefix("vault") && ops.contains { call.op.hasPrefix($0) } }.map(\.n)
                let step = max(1, writes.count / 12)
                return stride(from: 0, to: writes.count, by: step).map { writes[$0] }
            })
    }
}
