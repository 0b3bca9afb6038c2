// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// `export -o DIR` writes the user's files (and the audit log): failed at every file-system
/// call, the folder holds only complete exports beside what was there, never a temp file, and
/// the file that was there already is untouched.
extension FaultTests {
    /// Each run's own target folder, holding the user's a.bin: made when the command is built,
    /// since the harness copies the template's folders (with the dry run's exports) to each trial.
    static func exportTarget(_ cli: CLI) -> String {
        let out = cli.root + "/out-" + (cli.root as NSString).lastPathComponent
        if !FileManager.default.fileExists(atPath: out) {
            try? FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: out + "/a.bin", contents: Data([9]))
        }
        return out
    }

    @Test("export --all -o DIR") func exportIntoFolder() throws {
        let payloads: [Data] = [Data([1, 2, 3]), Data([4, 5]), Data(repeating: 6, count: 70_000)]
        try run("export --all -o DIR", Scenario(
            prepare: { cli in
                try FileManager.default.createDirectory(atPath: cli.root + "/b", withIntermediateDirectories: true)
                let ids = try cli.importIDs([cli.file("a.bin", Array(payloads[0])), cli.file("b/a.bin", Array(payloads[1])),
                                             cli.file("big.bin", Array(payloads[2]))])
                return Dictionary(uniqueKeysWithValues: zip(ids, payloads))
            },
            command: { cli in [CLI.binary, "export", "--all", "-o", Self.exportTarget(cli), "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let out = Self.exportTarget(cli)
                let names = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
                #expect(FileManager.default.contents(atPath: out + "/a.bin") == Data([9]), "the file already there was changed")
                #expect(names.allSatisfy { !$0.hasPrefix(".n11tmp-") }, "a temp file was left: \(names)")
                let written = names.filter { $0 != "a.bin" }
                for name in written {
                    let data = FileManager.default.contents(atPath: out + "/" + name)
                    #expect(data.map { payloads.contains($0) } == true, "\(name) is not a complete export")
                }
                if ok { #expect(written == ["a (2).bin", "a (3).bin", "big.bin"], "export said done but wrote \(written)") }
                return cli.pin
            }))
    }
}

/// Issue 56: a killed `export --all` left a hidden temp file holding a decrypted item in the
/// output folder, and the next export did not remove it. Killed at each call on the output
/// folder (a few of them: the temp file's creation, its writes, its sync, its link or rename),
/// the folder holds no plaintext but complete exports under their own names; an export run
/// again into that folder then leaves exactly the exports, and removes a temp file an older
/// version left there.
extension FaultTests {
    /// Bytes no two payloads share, so a fragment of one is found in any file.
    static func exportPayload(_ n: Int) -> Data {
        var bytes = [UInt8]()
        var x = UInt32(n * 7919 + 17)
        for _ in 0..<(60_000 + n * 1000) {
            x = x &* 1_664_525 &+ 1_013_904_223
            bytes.append(UInt8(truncatingIfNeeded: x >> 24))
        }
        return Data(bytes)
    }

    /// Whether `file` holds a 64-byte run of any payload without being exactly one of them.
    static func holdsPlaintextFragment(_ file: Data, _ payloads: [Data]) -> Bool {
        guard !payloads.contains(file) else { return false }
        for payload in payloads {
            for start in stride(from: 0, to: payload.count - 64, by: 4096) where file.range(of: payload[start..<(start + 64)]) != nil {
                return true
            }
        }
        return false
    }

    @Test("export --all killed at the calls on its output folder: no plaintext left behind, and the next export cleans up")
    func exportKilled() throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let cli = try CLI()
        try cli.initVault()
        let payloads = (0..<3).map(Self.exportPayload)
        _ = try cli.importIDs((0..<3).map { cli.file("p\($0).bin", Array(payloads[$0])) })
        let command = { (out: String) in [CLI.binary, "export", "--all", "-o", out, "--pin-stdin"] }
        let input = Data((cli.pin + "\n").utf8)
        // Each run starts from the vault as it is now, so its calls are numbered as in the dry run.
        let files = FileManager.default
        for part in ["vault", "keystore"] { try files.copyItem(atPath: cli.root + "/" + part, toPath: cli.root + "/snap-" + part) }
        func restore() throws {
            for part in ["vault", "keystore"] {
                try files.removeItem(atPath: cli.root + "/" + part)
                try files.copyItem(atPath: cli.root + "/snap-" + part, toPath: cli.root + "/" + part)
            }
        }
        let dryOut = cli.root + "/out-dry"
        try FileManager.default.createDirectory(atPath: dryOut, withIntermediateDirectories: true)
        let log = cli.root + "/.log"
        let dry = try FaultShim.run(cli, command(dryOut), input: input, at: 0, log: log)
        #expect(dry.code == 0, "export without faults: \(dry.stderr)")
        let calls = FaultLog(text: (try? String(contentsOfFile: log, encoding: .utf8)) ?? "", root: cli.root).calls(under: "out-dry")
        #expect(calls.count >= 8, "only \(calls.count) calls on the output folder")
        // The first item's calls, and a few of the later ones'.
        let picked = Array(calls.prefix(6)) + stride(from: 6, to: calls.count, by: 5).map { calls[$0] }
        for at in picked {
            let out = cli.root + "/out-\(at)"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            try restore()
            let r = try FaultShim.run(cli, command(out), input: input, at: at, kill: true)
            #expect(r.code != 0, "call \(at): the export was not killed")
            for name in try FileManager.default.contentsOfDirectory(atPath: out) {
                let data = FileManager.default.contents(atPath: out + "/" + name) ?? Data()
                #expect(!Self.holdsPlaintextFragment(data, payloads), "killed at call \(at): \(name) holds part of an item's plaintext")
                #expect(!name.hasPrefix(".") || data.isEmpty, "killed at call \(at): a hidden file \(name) was left")
            }
            // As an older version left it: a temp file with a whole decrypted item.
            FileManager.default.createFile(atPath: out + "/.n11tmp-00112233aabbccdd", contents: payloads[1])
            let again = try cli.run(["export", "--all", "-o", out], pinStdin: true)
            #expect(again.code == 0, "call \(at): the export run again: \(again.stderr)")
            let names = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
            #expect(names.allSatisfy { !$0.hasPrefix(".") }, "call \(at): hidden files after the export ran again: \(names)")
            for name in names {
                let data = FileManager.default.contents(atPath: out + "/" + name) ?? Data()
                #expect(payloads.contains(data), "call \(at): \(name) is not a complete export")
            }
        }
    }
}
