// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Every path that destroys an item honours `deletion.mode = secure` (one `Shredder`): the
/// fade sweep, the duress PIN and the finishing of an interrupted `delete --secure` overwrite
/// the item's file and thumbnail in place before unlinking them. A hard link made beforehand
/// (the witness) still sees the blocks after the unlink: overwritten, or the old bytes.
@Suite("one shredder: every destruction honours the deletion mode")
struct ShredderTests {
    /// A real JPEG, so the import seals a thumbnail too.
    func photo(_ cli: CLI, _ name: String) throws -> String {
        let path = cli.root + "/" + name
        try PhotoFixtures.run(cli, "convert", ["-size", "320x240", "plasma:fractal", path])
        return path
    }

    struct Witness {
        var paths: [String]
        var before: [Data]
        var links: [String]
    }

    /// Links every file of `id` (its content and thumbnail) to a witness beside the vault.
    func witness(_ cli: CLI, _ files: [String], tag: String) throws -> Witness {
        var w = Witness(paths: files, before: [], links: [])
        for (n, path) in files.enumerated() {
            try #require(cli.exists(path), "\(path) is missing")
            w.before.append(try Data(contentsOf: URL(fileURLWithPath: path)))
            let link = cli.root + "/witness-\(tag)-\(n)"
            #expect(Foundation.link(path, link) == 0)
            w.links.append(link)
        }
        return w
    }

    func expectOverwritten(_ cli: CLI, _ w: Witness, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for (n, path) in w.paths.enumerated() {
            #expect(!cli.exists(path), "\(what): \(path) survived", sourceLocation: sourceLocation)
            let after = try Data(contentsOf: URL(fileURLWithPath: w.links[n]))
            #expect(after.count == w.before[n].count && after != w.before[n],
                    "\(what): \(path) was unlinked with its old bytes in place (no overwrite)", sourceLocation: sourceLocation)
        }
    }

    func files(_ cli: CLI, _ id: String, in folder: String) -> [String] {
        [cli.vault + "/\(folder)/\(id).n11", cli.vault + "/Thumbnails/\(id).n11thumb"]
    }

    @Test("fade expiry (the sweep at the start of a command) overwrites under deletion.mode = secure")
    func fadeExpiry() throws {
        try #require(FileManager.default.isExecutableFile(atPath: ClockTests.faketime), "faketime is not installed (make test installs it)")
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["settings", "set", "deletion.mode", "secure"], pinStdin: true).code == 0)
        let id = try cli.importIDs([try photo(cli, "fade.jpg")], extra: ["--fade", "1h"])[0]
        let w = try witness(cli, files(cli, id, in: "Fade"), tag: "fade")
        // Two hours later (faketime moves both clocks, as a real boot later would): no PIN needed.
        let later = try cli.spawn(ClockTests.faketime, ["-f", "+2h", CLI.binary, "sweep"])
        #expect(later.code == 0, "\(later.stderr)")
        #expect(!cli.hasKeyRecord(id), "the key record survived the sweep")
        try expectOverwritten(cli, w, "fade expiry")
    }

    @Test("the duress PIN overwrites the primary vault's items under deletion.mode = secure")
    func duress() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["settings", "set", "deletion.mode", "secure"], pinStdin: true).code == 0)
        let primary = try cli.importIDs([try photo(cli, "p.jpg")])[0]
        let fading = try cli.importIDs([try photo(cli, "pf.jpg")], extra: ["--fade", "1h"])[0]
        try cli.setBackup("backup-pin")
        let set = try cli.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"],
                                input: Data("backup-pin\nduress-pin\n".utf8))
        #expect(set.code == 0, "\(set.stderr)")
        let w = try witness(cli, files(cli, primary, in: "Vault/Photos") + files(cli, fading, in: "Fade"), tag: "duress")
        let forced = try cli.with("duress-pin", ["list"])
        #expect(forced.code == 0, "\(forced.stderr)")
        #expect(!cli.hasKeyRecord(primary) && !cli.hasKeyRecord(fading))
        try expectOverwritten(cli, w, "duress")
    }

    @Test("a delete --secure killed after its commit point is finished by the next command with the overwrite")
    func interruptedSecureDelete() throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let template = try CLI()
        try template.initVault()  // deletion.mode stays standard: only the flag asks for the overwrite
        let id = try template.importIDs([try photo(template, "d.jpg")])[0]
        try FileManager.default.copyItem(atPath: template.vault, toPath: template.root + "/prepared-vault")
        try FileManager.default.copyItem(atPath: template.keystore, toPath: template.root + "/prepared-keystore")
        let command = [CLI.binary, "delete", "--secure", "--pin-stdin", id]
        let countFile = template.root + "/.count"
        let dry = try FaultShim.run(template, command, input: Data((template.pin + "\n").utf8), at: 0, countFile: countFile)
        #expect(dry.code == 0, "\(dry.stderr)")
        let calls = Int(try String(contentsOfFile: countFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        var interrupted = 0
        for at in 1...max(calls, 1) {
            let trial = try CLI()
            try FileManager.default.copyItem(atPath: template.root + "/prepared-vault", toPath: trial.vault)
            try FileManager.default.copyItem(atPath: template.root + "/prepared-keystore", toPath: trial.keystore)
            let w = try witness(trial, files(trial, id, in: "Vault/Photos"), tag: "kill")
            _ = try FaultShim.run(trial, command, input: Data((trial.pin + "\n").utf8), at: at, kill: true)
            let pending = ((try? FileManager.default.contentsOfDirectory(atPath: trial.keystore + "/pending")) ?? [])
                .filter { $0.hasSuffix(".json") }
            let untouched = try zip(w.paths, w.before).allSatisfy { path, before in
                try trial.exists(path) && Data(contentsOf: URL(fileURLWithPath: path)) == before
            }
            // Killed after the marker (the commit point) and before any overwrite.
            guard !pending.isEmpty && untouched else { continue }
            interrupted += 1
            let next = try trial.run(["list"], pinStdin: true)
            #expect(next.code == 0, "call \(at): \(next.stderr)")
            #expect(!trial.hasKeyRecord(id), "call \(at): the key record survived")
            try expectOverwritten(trial, w, "an interrupted delete --secure killed at call \(at) of \(calls)")
        }
        #expect(interrupted > 0, "no call of \(calls) left the delete between its commit point and the overwrite")
    }
}
