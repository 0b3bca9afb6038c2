// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

extension CLI {
    func exportArchive(_ file: String, extra: [String] = [], password: String = "violet quartz tulip orbit canyon") throws -> CLI.Outcome {
        try spawn(CLI.binary, ["archive", "export", "-o", file, "--pin-stdin"] + extra
                    + (extra.contains("--secure") ? [] : ["--password-fd", "0", "--kdf-memory", "19", "--kdf-iterations", "2"]),
                  input: Data("\(pin)\n\(password)\n".utf8))
    }

    func importArchive(_ file: String, password: String = "violet quartz tulip orbit canyon") throws -> CLI.Outcome {
        try spawn(CLI.binary, ["archive", "import", file, "--pin-stdin", "--password-fd", "0"],
                  input: Data("\(pin)\n\(password)\n".utf8))
    }

    func python(_ script: String, _ args: [String] = [], input: Data = Data()) throws -> CLI.Outcome {
        try spawn("/usr/bin/python3", ["-c", script] + args, input: input)
    }
}

@Suite("archives")
struct ArchiveTests {
    /// 200 items: files in three albums and in Photos, notes, fade items.
    func populated() throws -> (CLI, [String: [UInt8]]) {
        let cli = try CLI()
        try cli.initVault()
        var originals: [String: [UInt8]] = [:]
        for album in ["Alps", "Beach", "City"] {
            #expect(try cli.run(["album", "create", album], pinStdin: true).code == 0)
            var paths: [String] = []
            for i in 0..<40 {
                let name = "\(album)-\(i).jpg"
                let bytes = (0..<(i * 997 % 40_000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }
                originals[name] = bytes
                paths.append(cli.file(name, bytes))
            }
            _ = try cli.importIDs(paths, extra: ["--album", album])
        }
        var loose: [String] = []
        for i in 0..<30 {
            let name = "loose-\(i).png"
            originals[name] = Array("photo \(i) ".utf8) + Array(repeating: UInt8(i), count: i * 1000)
            loose.append(cli.file(name, originals[name] ?? []))
        }
        loose.append(cli.file("big.bin", Array(repeating: 0x5A, count: 3 * 16384 + 1)))
        originals["big.bin"] = Array(repeating: 0x5A, count: 3 * 16384 + 1)
        _ = try cli.importIDs(loose)
        var fades: [String] = []
        for i in 0..<19 {
            let name = "fade-\(i).jpg"
            originals[name] = Array("fading \(i)".utf8)
            fades.append(cli.file(name, originals[name] ?? []))
        }
        _ = try cli.importIDs(fades, extra: ["--fade", "1h"])
        for i in 0..<30 {
            let r = try cli.runPinFD(["note", "add", "--title", "note-\(i)"], stdin: Data("body of note \(i)".utf8))
            #expect(r.code == 0)
            originals["note-\(i).txt"] = Array("body of note \(i)".utf8)
        }
        return (cli, originals)
    }

    func listing(_ cli: CLI) throws -> [String: [String: Any]] {
        var out: [String: [String: Any]] = [:]
        for entry in try cli.listJSON(["--limit", "1000"]) {
            if let name = entry["name"] as? String { out[name] = entry }
        }
        return out
    }

    @Test("200 items survive a portable round trip into another vault; Python decrypts the same archive")
    func portableRoundTrip() throws {
        let (source, originals) = try populated()
        let file = source.root + "/all.nu11vlt"
        // Fade items stay out of a portable archive unless asked for, with a warning.
        let withoutFade = source.root + "/nofade.nu11vlt"
        #expect(try source.exportArchive(withoutFade, extra: ["--portable"]).code == 0)
        #expect(try source.run(["archive", "inspect", withoutFade]).out.contains("items      181"))
        let export = try source.exportArchive(file, extra: ["--portable", "--include-fade"])
        #expect(export.code == 0, "\(export.stderr)")
        #expect(export.stderr.contains("deadlines cannot be enforced"), "\(export.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)).count > 0)
        #expect(try source.spawn("/usr/bin/find", [file, "-perm", "600"]).out.contains("all.nu11vlt"))
        // Standard tools list it.
        let unzip = try source.spawn("/usr/bin/unzip", ["-l", file])
        #expect(unzip.code == 0 && unzip.out.contains("manifest.c2sp") && unzip.out.contains("202 files"))
        let pyList = try source.python("import zipfile,sys; print(len(zipfile.ZipFile(sys.argv[1]).namelist()))", [file])
        #expect(pyList.out == "202\n")
        let inspect = try source.run(["archive", "inspect", file])
        #expect(inspect.out.contains("portable") && inspect.out.contains("items      200"))

        // Another machine: a fresh vault and key store.
        let target = try CLI(pin: "other machine pin")
        try target.initVault()
        let imported = try target.importArchive(file)
        #expect(imported.code == 0, "\(imported.stderr)")
        let before = try listing(source)
        let after = try listing(target)
        #expect(before.count == 170 && after.count == 170, "\(before.count) / \(after.count) files")
        for (name, entry) in before {
            guard let other = after[name] else { Issue.record("\(name) missing after import"); continue }
            #expect(other["size"] as? Int == entry["size"] as? Int && other["album"] as? String == entry["album"] as? String, "\(name)")
            #expect(other["fadesAt"] as? String == entry["fadesAt"] as? String, "\(name): fade deadline changed")
            guard let id = other["id"] as? String else { continue }
            let bytes = try target.run(["export", id, "-o", "-"], pinStdin: true).stdout
            #expect(bytes == Data(originals[name] ?? []), "\(name) differs")
        }
        let notes = try target.run(["note", "list", "--json"], pinStdin: true).out
        #expect((0..<30).allSatisfy { notes.contains("\"note-\($0)\"") })
        #expect(try target.run(["album", "list"], pinStdin: true).out.split(separator: "\n").count == 3)

        // The independent decrypter, written from docs/FORMAT.md, recovers every item.
        let tool = Repo.path("tools/nu11vlt_decrypt.py")
        let out = source.root + "/py-out"
        let py = try source.spawn("/usr/bin/python3", [tool, file, out], input: Data("violet quartz tulip orbit canyon\n".utf8))
        #expect(py.code == 0, "\(py.stderr)")
        #expect(py.out.split(separator: "\n").count == 200)
        for (name, bytes) in originals {
            #expect(FileManager.default.contents(atPath: out + "/" + name) == Data(bytes), "python: \(name)")
        }
        let wrongPy = try source.spawn("/usr/bin/python3", [tool, file, out + "2"], input: Data("nope\n".utf8))
        #expect(wrongPy.code != 0)
    }

    @Test("a secure archive imports on its own key store and is refused by another")
    func secureArchive() throws {
        let cli = try CLI()
        try cli.initVault()
        let bytes = (0..<30_000).map { UInt8(truncatingIfNeeded: $0 * 13) }
        let id = try cli.importIDs([cli.file("s.jpg", bytes)])[0]
        let file = cli.root + "/s.nu11vlt"
        let export = try cli.exportArchive(file, extra: ["--secure"])
        #expect(export.code == 0, "\(export.stderr)")
        #expect(try cli.run(["archive", "inspect", file]).out.contains("secure"))
        #expect(try cli.run(["delete", id], pinStdin: true).code == 0)
        let back = try cli.run(["archive", "import", file], pinStdin: true)
        #expect(back.code == 0, "\(back.stderr)")
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data(bytes), "same ID, same bytes")
        let other = try CLI()
        try other.initVault()
        expectCleanError(try other.run(["archive", "import", file], pinStdin: true), code: 8, mentions: "another key store")
        #expect(try other.listJSON().isEmpty)
    }

    @Test("malicious and damaged archives are rejected with nothing written")
    func hostile() throws {
        let cli = try CLI()
        try cli.initVault()
        _ = try cli.importIDs([cli.file("a.jpg", Array(repeating: 1, count: 40_000)), cli.file("b.jpg", [2])])
        #expect(try cli.run(["album", "create", "Album"], pinStdin: true).code == 0)
        let good = cli.root + "/good.nu11vlt"
        #expect(try cli.exportArchive(good, extra: ["--portable"]).code == 0)
        let target = try CLI()
        try target.initVault()
        let craft = """
            import sys, zipfile, json
            src, dst, how = sys.argv[1], sys.argv[2], sys.argv[3]
            zin = zipfile.ZipFile(src)
            names = zin.namelist()
            item = [n for n in names if n.startswith('items/')][0]
            zout = zipfile.ZipFile(dst, 'w')
            for n in names:
                data = zin.read(n)
                if n == 'nu11vlt-archive.json':
                    h = json.loads(data)
                    if how == 'kdf': h['kdf']['memoryKiB'] = 8 * 1024 * 1024
                    if how == 'version': h['version'] = 2
                    data = json.dumps(h).encode()
                    if how == 'bigheader': data = data + b' ' * 70000
                zout.writestr(n, data)
            if how == 'traversal': zout.writestr('../../evil.c2sp', b'x')
            if how == 'absolute': zout.writestr('/tmp/evil.c2sp', b'x')
            if how == 'duplicate': zout.writestr(item, zin.read(item))
            if how == 'symlink':
                info = zipfile.ZipInfo('items/' + '0' * 32 + '.c2sp')
                info.external_attr = (0o120777 << 16)
                info.create_system = 3
                zout.writestr(info, '/etc/passwd')
            if how == 'bomb':
                zout.writestr(zipfile.ZipInfo('items/' + 'f' * 32 + '.c2sp'), b'\\0' * (50 << 20), compress_type=zipfile.ZIP_DEFLATED)
            zout.close()
            """
        var cases: [(String, String, Int32)] = []
        // Neutral file names: the message must come from the rule, not echo the file's name.
        for (n, how) in ["traversal", "absolute", "duplicate", "symlink", "bomb", "kdf", "version", "bigheader"].enumerated() {
            let path = cli.root + "/case-\(n).nu11vlt"
            let r = try cli.python(craft, [good, path, how])
            #expect(r.code == 0, "crafting \(how): \(r.stderr)")
            cases.append((how, path, how == "kdf" || how == "version" ? 7 : 5))
        }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: good)))
        let truncated = cli.root + "/truncated.nu11vlt"
        try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: truncated))
        cases.append(("truncated", truncated, 5))
        var flipped = bytes
        flipped[bytes.count / 3] ^= 0x04
        let flippedPath = cli.root + "/flipped.nu11vlt"
        try Data(flipped).write(to: URL(fileURLWithPath: flippedPath))
        cases.append(("flipped", flippedPath, 5))
        let expected = ["traversal": "tries path traversal", "absolute": "has an absolute path", "duplicate": "twice", "symlink": "symlink",
                        "bomb": "zip bomb", "kdf": "cap", "version": "version 2", "bigheader": "size limit"]
        for (how, path, code) in cases {
            let r = try target.importArchive(path)
            expectCleanError(r, code: code, mentions: expected[how])
            #expect(try target.listJSON().isEmpty, "\(how): something was imported")
            let leftovers = try target.spawn("/usr/bin/find", [target.vault, "-name", ".n11tmp-*"])
            #expect(leftovers.out.isEmpty, "\(how): temp files left")
            #expect(try FileManager.default.contentsOfDirectory(atPath: target.vault + "/Vault/Albums").isEmpty, "\(how): album left")
            #expect(try target.allKeyRecords().isEmpty, "\(how): key left")
            #expect(!target.exists(target.keystore + "/items"), "\(how): a loose key record left")
        }
        expectCleanError(try target.importArchive(good, password: "wrong"), code: 3, mentions: "password")
        #expect(try target.listJSON().isEmpty)
        #expect(try target.importArchive(good).code == 0)
        #expect(try target.listJSON().count == 2)
    }
}
