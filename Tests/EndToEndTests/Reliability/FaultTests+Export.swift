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
