// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 56, the siblings of "a change that took effect is reported as done": a file written
/// out of the vault (`export ID -o FILE`, `thumbnail -o FILE`, `archive export`) is linked or
/// renamed into place, then its folder is fsynced. That fsync failing made each exit 74
/// although the file was there, complete: a user who believes it and exports again gets
/// "already exists", or a second copy. Failed exactly there (and at every other call on the
/// output folder), the file exists exactly when the command says done, and is then whole.
extension FaultTests {
    /// The test's output folder, made when the command is built (each trial has its own root).
    /// Named after the root: the harness copies the template's folders (with the dry run's
    /// output) into each trial, and the trial's own folder must start empty.
    static func outFolder(_ cli: CLI) -> String {
        let out = cli.root + "/out-" + (cli.root as NSString).lastPathComponent
        try? FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        return out
    }

    /// A scenario writing one file to `out/NAME`; `whole` checks a file that is there.
    func outputScenario(_ name: String, _ args: @escaping (CLI, String) -> [String], whole: @escaping (CLI, Data) throws -> Bool,
                        prepare: @escaping (CLI) throws -> [String: Data]) -> Scenario {
        Scenario(
            prepare: prepare,
            command: { cli in [CLI.binary] + args(cli, Self.outFolder(cli) + "/" + name) + ["--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let out = Self.outFolder(cli)
                let names = try FileManager.default.contentsOfDirectory(atPath: out)
                #expect(names.allSatisfy { !$0.hasPrefix(".") }, "a temp file was left: \(names)")
                let data = FileManager.default.contents(atPath: out + "/" + name)
                #expect((data != nil) == ok, "\(name): the command said \(ok ? "done" : "failed") but the file is \(data == nil ? "not there" : "there")")
                if let data { #expect(try whole(cli, data), "\(name) is there but not whole") }
                return cli.pin
            })
    }

    /// The calls on the output folder, and the fsync after its link or rename.
    static func outputCalls(_ log: FaultLog) -> [Int] {
        Array(Set(log.calls(under: "out-") + log.syncsAfterRename(under: "out-"))).sorted()
    }

    @Test("export ID -o FILE failed at each call on its output folder: the file is there exactly when done, and whole")
    func exportOneFileEffect() throws {
        let payload = Data((0..<90_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try run("export ID -o FILE", outputScenario("one.bin", { cli, path in
            let id = (try? String(contentsOfFile: cli.root + "/id", encoding: .utf8)) ?? ""
            return ["export", id, "-o", path]
        }, whole: { _, data in data == payload }, prepare: { cli in
            let id = try cli.importIDs([cli.file("one.bin", Array(payload))])[0]
            try Data(id.utf8).write(to: URL(fileURLWithPath: cli.root + "/id"))
            return [id: payload]
        }), pick: Self.outputCalls)
    }

    @Test("thumbnail -o FILE failed at each call on its output folder: the file is there exactly when done, and a JPEG")
    func thumbnailEffect() throws {
        try run("thumbnail -o FILE", outputScenario("tile.jpg", { cli, path in
            let id = (try? String(contentsOfFile: cli.root + "/id", encoding: .utf8)) ?? ""
            return ["thumbnail", id, "-o", path]
        }, whole: { _, data in data.starts(with: [0xFF, 0xD8, 0xFF]) && data.suffix(2) == Data([0xFF, 0xD9]) }, prepare: { cli in
            FileManager.default.createFile(atPath: cli.root + "/photo.jpg", contents: Self.payload)
            let id = try cli.importIDs([cli.root + "/photo.jpg"])[0]
            try Data(id.utf8).write(to: URL(fileURLWithPath: cli.root + "/id"))
            return [id: Self.payload]
        }), pick: Self.outputCalls)
    }

    @Test("archive export failed at each call on its output folder: the archive is there exactly when done, and imports whole")
    func archiveExportEffect() throws {
        try run("archive export", outputScenario("copy.nu11vlt", { _, path in ["archive", "export", "--secure", "-o", path] },
            whole: { cli, _ in
                let r = try cli.run(["archive", "inspect", Self.outFolder(cli) + "/copy.nu11vlt"])
                return r.code == 0 && r.out.contains("items      1\n")
            }, prepare: { cli in
                [try cli.importIDs([cli.file("a.bin", [4, 5, 6])])[0]: Data([4, 5, 6])]
            }), pick: Self.outputCalls)
    }
}
