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

    /// 1.5 MiB of bytes that repeat nowhere: an item large enough for the share's range path
    /// (items of 1 MiB and more are decrypted by the age workers straight into their slots).
    static let shareBytes: Data = {
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        return Data((0..<(3 << 19)).map { _ in x = x &* 6364136223846793005 &+ 1442695040888963407; return UInt8(truncatingIfNeeded: x >> 33) })
    }()

    @Test("share -o FILE: every file-system call failed in turn — a failure leaves no output and no temp file, a success opens with age -d to the item")
    func shareOutput() throws {
        nonisolated(unsafe) var item = ""
        nonisolated(unsafe) var recipient = ""
        try run("share -o FILE", Scenario(
            prepare: { cli in
                let key = try cli.spawn("/usr/bin/age-keygen", ["-o", cli.root + "/age.key"])
                recipient = key.stderr.components(separatedBy: "Public key: ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                #expect(recipient.hasPrefix("age1"), "age-keygen: \(key.stderr)")
                item = try cli.importIDs([cli.file("big.bin", Array(Self.shareBytes))])[0]
                return [item: Self.shareBytes]
            },
            command: { cli in [CLI.binary, "share", "--pin-stdin", "--to", recipient, "-o", cli.root + "/fresh-share.age", item] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let out = cli.root + "/fresh-share.age"
                let left = (try FileManager.default.contentsOfDirectory(atPath: cli.root)).filter { $0.hasPrefix(".n11tmp") || $0.hasPrefix(".fresh-share") }
                #expect(left.isEmpty, "share left temp files: \(left)")
                if ok {
                    let opened = try cli.spawn("/bin/sh", ["-c", "age -d -i \"$0/age.key\" \"$0/fresh-share.age\" | tar -xOf -", cli.root])
                    #expect(opened.stdout == Self.shareBytes, "share said done but its file does not open to the item: \(opened.stderr)")
                } else {
                    #expect(!FileManager.default.fileExists(atPath: out), "share failed but left its output")
                }
                return cli.pin
            }))
    }

    @Test("share -o FILE killed (SIGKILL) at every file-system call: nothing is left in the output folder unless the share is whole (its temp file has no name until then)")
    func shareKilled() throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let cli = try CLI()
        try cli.initVault()
        let item = try cli.importIDs([cli.file("big.bin", Array(Self.shareBytes))])[0]
        let key = try cli.spawn("/usr/bin/age-keygen", ["-o", cli.root + "/age.key"])
        let recipient = key.stderr.components(separatedBy: "Public key: ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let out = cli.root + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let command = [CLI.binary, "share", "--pin-stdin", "--to", recipient, "-o", out + "/s.age", item]
        let input = Data((cli.pin + "\n").utf8)
        let dry = try FaultShim.run(cli, command, input: input, at: 0, countFile: cli.root + "/.count", log: cli.root + "/.log")
        #expect(dry.code == 0, "share without faults: \(dry.stderr)")
        let calls = FaultLog(text: (try? String(contentsOfFile: cli.root + "/.log", encoding: .utf8)) ?? "", root: cli.root).calls(under: "out")
        #expect(calls.count >= 3, "only \(calls.count) calls on the output folder")
        for at in calls {
            try FileManager.default.removeItem(atPath: out)
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            _ = try FaultShim.run(cli, command, input: input, at: at, kill: true)
            let left = try FileManager.default.contentsOfDirectory(atPath: out)
            if left == ["s.age"] {
                let opened = try cli.spawn("/bin/sh", ["-c", "age -d -i \"$0/age.key\" \"$0/out/s.age\" | tar -xOf -", cli.root])
                #expect(opened.stdout == Self.shareBytes, "killed at call \(at): a share file that does not open to the item")
            } else {
                #expect(left.isEmpty, "killed at call \(at): the output folder holds \(left)")
            }
        }
    }
}
