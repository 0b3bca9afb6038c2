// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

@Suite("nu11vlt end to end")
struct CommandTests {
    static let commands: [[String]] = [
        [], ["init"], ["status"], ["import"], ["list"], ["export"], ["view"], ["delete"],
        ["album"], ["album", "create"], ["album", "rename"], ["album", "list"], ["album", "delete"], ["album", "move"],
        ["pin"], ["pin", "change"], ["shell"], ["unlock"], ["lock"],
    ]

    @Test("--help works on every command")
    func help() throws {
        let cli = try CLI()
        for command in Self.commands {
            let r = try cli.run(command + ["--help"])
            #expect(r.code == 0, "\(command) --help: \(r.stderr)")
            #expect(r.out.contains("USAGE:"), "\(command) --help has no usage")
        }
        // One version: the VERSION file, `--version` and the AppStream release agree.
        let version = try String(contentsOfFile: GUITests.repo + "/VERSION", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version == "0.2.0")
        #expect(try cli.run(["--version"]).out.trimmingCharacters(in: .whitespacesAndNewlines) == version)
        let metainfo = try String(contentsOfFile: GUITests.repo + "/data/org.nu11vlt.Nu11VLT.metainfo.xml", encoding: .utf8)
        let newest = metainfo.firstMatch(of: try Regex("<release version=\"([^\"]*)\""))?.output[1].substring.map(String.init)
        #expect(newest == version, "the metainfo's newest release is \(newest ?? "missing"), not \(version)")
        // The version is written nowhere else in the sources: they take it from the build's stamp.
        let grep = try cli.spawn("/bin/grep", ["-rlF", "\"" + version + "\"", GUITests.repo + "/Sources"])
        #expect(grep.out.isEmpty, "a version literal in: \(grep.out)")
        #expect(try cli.run(["--help"]).out.contains("Nu11VLT \(version), GPL-3.0-or-later"))
        #expect(metainfo.contains("<project_license>GPL-3.0-or-later</project_license>"))
        #expect(try String(contentsOfFile: GUITests.repo + "/NEWS.md", encoding: .utf8).contains("## \(version)"))
    }

    @Test("the whole flow: init, status, import (files, folder, stdin), list, export, albums, delete, pin change")
    func flow() throws {
        let cli = try CLI()
        #expect(try cli.run(["status"]).out.contains("not initialised"))
        try cli.initVault()
        expectCleanError(try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true), code: 64,
                         mentions: "already exists")
        let status = try cli.run(["status"])
        #expect(status.code == 0 && status.out.contains(cli.vault) && status.out.contains(cli.keystore)
                && status.out.contains("2 passes, 19 MiB"))
        #expect(!status.out.contains("items"), "counts need the PIN")

        // Sizes at every chunk boundary, and 100 MiB.
        var originals: [String: [UInt8]] = [:]
        var paths: [String] = []
        for size in [0, 1, 16383, 16384, 16385] {
            let bytes = (0..<size).map { _ in UInt8.random(in: 0...255) }
            originals["s\(size).bin"] = bytes
            paths.append(cli.file("s\(size).bin", bytes))
        }
        var big = [UInt8](repeating: 0, count: 100 << 20)
        for i in stride(from: 0, to: big.count, by: 4096) { big[i] = UInt8(truncatingIfNeeded: i >> 12) }
        paths.append(cli.file("big.bin", big))
        originals["big.bin"] = big
        let ids = try cli.importIDs(paths)
        #expect(ids.count == 6)
        for (id, path) in zip(ids, paths) {
            let name = (path as NSString).lastPathComponent
            let out = cli.root + "/out-" + name
            let r = try cli.run(["export", id, "-o", out], pinStdin: true)
            #expect(r.code == 0, "export \(name): \(r.stderr)")
            #expect(FileManager.default.contents(atPath: out) == Data(originals[name] ?? []), "\(name) differs")
        }
        let stdoutExport = try cli.run(["export", ids[4], "-o", "-"], pinStdin: true)
        #expect(stdoutExport.stdout == Data(originals["s16385.bin"] ?? []))
        expectCleanError(try cli.run(["export", ids[0], "-o", cli.root + "/out-s0.bin"], pinStdin: true), code: 64,
                         mentions: "already exists")

        // A folder (recursively) and stdin, with the PIN on fd 3.
        try FileManager.default.createDirectory(atPath: cli.root + "/dir/sub", withIntermediateDirectories: true)
        _ = cli.file("dir/a.png", [1, 2, 3])
        _ = cli.file("dir/sub/b.png", [4, 5])
        #expect(try cli.importIDs([cli.root + "/dir"], extra: ["-r"]).count == 2)
        let piped = try cli.runPinFD(["import", "--name", "piped.txt", "-"], stdin: Data("from stdin".utf8))
        #expect(piped.code == 0, "stdin import: \(piped.stderr)")
        let pipedID = String(piped.out.prefix(32))
        #expect(try cli.run(["export", pipedID, "-o", "-"], pinStdin: true).out == "from stdin")

        // list --json carries id, name, size, album, created; paging works.
        let all = try cli.listJSON(["--limit", "1000"])
        #expect(all.count == 9)
        for entry in all {
            for key in ["id", "name", "size", "created"] { #expect(entry[key] != nil, "list --json lacks \(key)") }
            #expect(entry["album"] is String || entry["album"] is NSNull || !entry.keys.contains("album"),
                    "album is neither a name nor null: \(String(describing: entry["album"]))")
            #expect((entry["id"] as? String)?.count == 32 && (entry["size"] as? Int) != nil, "\(entry)")
        }
        let firstPage = try cli.run(["list", "--limit", "4"], pinStdin: true)
        #expect(firstPage.out.split(separator: "\n").count == 4 && firstPage.stderr.contains("--after"))

        // Albums.
        #expect(try cli.run(["album", "create", "Trips"], pinStdin: true).code == 0)
        #expect(try cli.run(["album", "move", "--to", "Trips", ids[1], ids[2]], pinStdin: true).code == 0)
        #expect(try cli.listJSON(["--album", "Trips"]).compactMap { $0["id"] as? String }.sorted() == [ids[1], ids[2]].sorted())
        #expect(try cli.listJSON(["--album", "Trips"]).allSatisfy { $0["album"] as? String == "Trips" })
        #expect(try cli.run(["album", "rename", "Trips", "Voyages"], pinStdin: true).code == 0)
        let albums = try cli.run(["album", "list", "--json"], pinStdin: true)
        #expect(albums.out.contains("\"Voyages\"") && albums.out.contains("\"items\" : 2"))
        let folder = try FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Vault/Albums")
        #expect(folder.count == 1)
        expectCleanError(try cli.run(["album", "delete", "Voyages"], pinStdin: true), code: 64, mentions: "--items")
        #expect(try cli.run(["album", "delete", "Voyages", "--items", "photos"], pinStdin: true).code == 0)
        #expect(try cli.listJSON(["--limit", "1000"]).count == 9)
        #expect(try cli.run(["album", "create", "Doomed"], pinStdin: true).code == 0)
        #expect(try cli.run(["album", "move", "--to", "Doomed", ids[1]], pinStdin: true).code == 0)
        #expect(try cli.run(["album", "delete", "Doomed", "--items", "delete"], pinStdin: true).code == 0)
        #expect(try cli.listJSON(["--limit", "1000"]).count == 8)

        // Delete: key record, file and row gone.
        let del = try cli.run(["delete", ids[0]], pinStdin: true)
        #expect(del.code == 0)
        #expect(!cli.hasKeyRecord(ids[0]))
        expectCleanError(try cli.run(["export", ids[0], "-o", "-"], pinStdin: true), code: 4, mentions: ids[0])

        // Status after unlock.
        let unlocked = try cli.run(["status", "--json"], pinStdin: true)
        #expect(unlocked.out.contains("\"items\" : 7") && unlocked.out.contains("\"albums\" : 0"))

        // PIN change: current on stdin, new on the next line of the same descriptor. It rotates
        // the vault's keys: the key records are re-wrapped (the content is not touched).
        let before = try #require(cli.keyRecordBytes(ids[3]))
        let contentPath = try #require(FileManager.default.enumerator(atPath: cli.vault)?.allObjects
            .compactMap { $0 as? String }.first { $0.hasSuffix("\(ids[3]).n11") }.map { cli.vault + "/" + $0 })
        let content = try Data(contentsOf: URL(fileURLWithPath: contentPath))
        let change = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"],
                                   input: Data("\(cli.pin)\nbrand new pin\n".utf8))
        #expect(change.code == 0, "pin change: \(change.stderr)")
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 3, mentions: "wrong")
        let withNew = try cli.runPinFD(["export", ids[3], "-o", "-"], pin: "brand new pin")
        #expect(withNew.stdout == Data(originals["s16384.bin"] ?? []))
        #expect(try #require(cli.keyRecordBytes(ids[3])) != before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: contentPath)) == content, "pin change re-encrypted content")
    }
}
