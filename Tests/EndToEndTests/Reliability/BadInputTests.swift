// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

@Suite("nu11vlt bad input and hardening")
struct BadInputTests {
    @Test("each bad input: one line, a hint, the right exit code, nothing half-written")
    func badInputs() throws {
        let cli = try CLI()
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 4, mentions: "no vault")
        try cli.initVault()
        let good = cli.file("good.jpg", Array(repeating: 7, count: 50_000))
        let other = cli.file("other.jpg", Array(repeating: 8, count: 20))
        let ids = try cli.importIDs([good, other])

        let wrong = try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data("not the pin\n".utf8))
        expectCleanError(wrong, code: 3, mentions: "wrong")
        expectCleanError(try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data()), code: 64, mentions: "no PIN")
        expectCleanError(try cli.run(["import", cli.root + "/missing.jpg"], pinStdin: true), code: 4, mentions: "missing.jpg")
        expectCleanError(try cli.run(["import", "/dev/null"], pinStdin: true), code: 64, mentions: "not a regular file")
        #expect(mkfifo(cli.root + "/fifo", 0o600) == 0)
        expectCleanError(try cli.run(["import", cli.root + "/fifo"], pinStdin: true), code: 64, mentions: "fifo")
        try FileManager.default.createDirectory(atPath: cli.root + "/folder", withIntermediateDirectories: true)
        expectCleanError(try cli.run(["import", cli.root + "/folder"], pinStdin: true), code: 64, mentions: "-r")
        // A bad path among good ones: checked before anything is imported.
        expectCleanError(try cli.run(["import", good, cli.root + "/missing.jpg"], pinStdin: true), code: 4)
        #expect(try cli.listJSON().count == 2, "nothing half-imported")
        expectCleanError(try cli.run(["export", "00000000000000000000000000000000", "-o", "-"], pinStdin: true),
                         code: 4, mentions: "no item")
        expectCleanError(try cli.run(["export", "xyz", "-o", "-"], pinStdin: true), code: 64, mentions: "not an ID")
        expectCleanError(try cli.run(["import", "--album", "Nope", good], pinStdin: true), code: 4, mentions: "Nope")
        expectCleanError(try cli.run(["list", "--album", "Nope"], pinStdin: true), code: 4, mentions: "Nope")
        expectCleanError(try cli.run(["album", "rename", "Nope", "X"], pinStdin: true), code: 4)
        // `--limit 0` means all (issue 17); a negative page size is refused.
        expectCleanError(try cli.run(["list", "--limit", "-1"], pinStdin: true), code: 64)
        expectCleanError(try cli.run(["import"], pinStdin: true), code: 64)
        expectCleanError(try cli.run(["init", "--kdf-memory", "8"], pinStdin: true), code: 64, mentions: "19")
        expectCleanError(try cli.run(["frobnicate"]), code: 64)
        expectCleanError(try cli.run(["list", "--pin-fd", "9"]), code: 74, mentions: "descriptor")

        // A tampered item is named, and every other item still exports.
        let file = cli.vault + "/Vault/Photos/\(ids[0]).n11"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        bytes[30_000] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let out = cli.root + "/tampered-out"
        expectCleanError(try cli.run(["export", ids[0], "-o", out], pinStdin: true), code: 5, mentions: ids[0])
        #expect(!FileManager.default.fileExists(atPath: out), "no partial plaintext written")
        #expect(try cli.run(["export", ids[1], "-o", "-"], pinStdin: true).stdout == Data(repeating: 8, count: 20))
    }

    @Test("no marker from names or contents in the vault, key store, /tmp or /dev/shm; view leaves nothing")
    func noPlaintext() throws {
        let cli = try CLI()
        try cli.initVault()
        let marker = "N11MARK" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let nameMarker = "NAME" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let src = cli.root + "/src"
        try FileManager.default.createDirectory(atPath: src, withIntermediateDirectories: true)
        let path = src + "/\(nameMarker).png"
        let content = Data((String(repeating: "x", count: 20_000) + marker + String(repeating: "y", count: 30_000)).utf8)
        FileManager.default.createFile(atPath: path, contents: content)
        let id = try cli.importIDs([path])[0]
        #expect(try cli.run(["album", "create", "Album-\(nameMarker)"], pinStdin: true).code == 0)
        #expect(try cli.run(["album", "move", "--to", "Album-\(nameMarker)", id], pinStdin: true).code == 0)
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == content)
        // view: the viewer gets a RAM file with the right bytes, which is gone afterwards.
        let viewed = try cli.run(["view", "--no-inline", id], pinStdin: true,
                                 environment: ["NU11VLT_VIEWER": "cmp \(path)"])
        #expect(viewed.code == 0, "view: \(viewed.stderr)")
        let spool = try FileManager.default.contentsOfDirectory(atPath: cli.root + "/run/nu11vlt")
        #expect(spool.isEmpty, "plaintext left: \(spool)")
        // Through xdg-open's path (no NU11VLT_VIEWER): a 0600 file in the private folder, gone afterwards.
        try FileManager.default.createDirectory(atPath: cli.root + "/bin", withIntermediateDirectories: true)
        let opener = cli.root + "/bin/xdg-open"
        try "#!/bin/sh\nstat -c '%a %n' \"$1\" > \"$SEEN\"; exec cmp \"$ORIGINAL\" \"$1\"\n".write(toFile: opener, atomically: true, encoding: .utf8)
        #expect(chmod(opener, 0o755) == 0)
        let viaFile = try cli.run(["view", "--no-inline", id], pinStdin: true,
                                  environment: ["PATH": cli.root + "/bin:/usr/bin:/bin", "SEEN": cli.root + "/seen", "ORIGINAL": path])
        #expect(viaFile.code == 0, "view via xdg-open: \(viaFile.stderr)")
        let seen = try String(contentsOfFile: cli.root + "/seen", encoding: .utf8)
        #expect(seen.hasPrefix("600 " + cli.root + "/run/nu11vlt/"), "\(seen)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.root + "/run/nu11vlt").isEmpty)
        // Notes written and edited, and an archive exported and imported, leave nothing either.
        let noteID = try cli.runPinFD(["note", "add", "--title", "T-\(nameMarker)"], stdin: Data("first \(marker)".utf8))
            .out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli.runPinFD(["note", "edit", noteID], stdin: Data("edited \(marker)".utf8)).code == 0)
        let archive = cli.root + "/m.nu11vlt"
        #expect(try cli.exportArchive(archive, extra: ["--portable"]).code == 0)
        let other = try CLI()
        try other.initVault()
        #expect(try other.importArchive(archive).code == 0)
        #expect(try other.run(["note", "list"], pinStdin: true).out.contains(nameMarker))
        try FileManager.default.removeItem(atPath: src)
        for marker in [marker, nameMarker] {
            let scan = try cli.spawn("/bin/sh", ["-c", "grep -rlaF \"$0\" \"$1\" \"$2\" \"$3\" \"$4\" /tmp /dev/shm 2>/dev/null; true",
                                                 marker, cli.vault, cli.keystore, other.vault, other.keystore])
            #expect(scan.out.isEmpty, "marker found in: \(scan.out)")
        }
    }

    /// Under umask 000 a file created 0600 is 0600 already; under 0277 it is 0400 and every
    /// writer must set the mode itself (the key packs only do when it is needed).
    @Test("the index file: WAL and auto_vacuum as sqlite3 sees them; files 0600 and folders 0700 under umask 000 and 0277",
          arguments: ["000", "0277"])
    func indexAndModes(umask: String) throws {
        let cli = try CLI()
        let r = try cli.spawn("/bin/sh", ["-c", "umask \(umask); printf 'pin-1234\\n' | exec \"$0\" init --kdf-memory 19 --kdf-iterations 2 --pin-stdin",
                                          CLI.binary])
        #expect(r.code == 0, "\(r.stderr)")
        let imported = try cli.spawn("/bin/sh", ["-c", "umask \(umask); printf 'pin-1234\\n' | exec \"$0\" import --pin-stdin \"$1\"",
                                                 CLI.binary, cli.file("x.jpg", [1, 2, 3])])
        #expect(imported.code == 0, "\(imported.stderr)")
        let sqlite = try cli.spawn("/usr/bin/sqlite3", [cli.vault + "/index.sqlite", "PRAGMA journal_mode; PRAGMA auto_vacuum;"])
        #expect(sqlite.out == "wal\n1\n", "sqlite3 says: \(sqlite.out) \(sqlite.stderr)")
        let modes = try cli.spawn("/usr/bin/find", [cli.vault, cli.keystore, "-printf", "%y %m %p\n"])
        for line in modes.out.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2)
            let expected = parts[0] == "d" ? "700" : "600"
            #expect(String(parts[1]) == expected, "wrong mode: \(line)")
        }
    }

    @Test("two concurrent imports both succeed; every item lists and exports")
    func concurrentImports() throws {
        let cli = try CLI()
        try cli.initVault()
        var sets: [[String]] = [[], []]
        for set in 0..<2 {
            for i in 0..<8 { sets[set].append(cli.file("c\(set)-\(i).bin", Array(repeating: UInt8(set * 10 + i), count: 30_000 + i))) }
        }
        let processes = try sets.map { paths -> (Process, String) in
            let outPath = cli.root + "/.concurrent-\(UUID().uuidString)"
            let p = try Program.start("/bin/sh", ["-c", "pin=\"$0\" bin=\"$1\" out=\"$2\"; shift 2; printf '%s\\n' \"$pin\" | \"$bin\" import --pin-stdin \"$@\" > \"$out\" 2>&1",
                           cli.pin, CLI.binary, outPath] + paths, environment: cli.environment)
            return (p, outPath)
        }
        for (p, out) in processes {
            p.waitUntilExit()
            #expect(p.terminationStatus == 0, "concurrent import failed: \((try? String(contentsOfFile: out, encoding: .utf8)) ?? "")")
        }
        let items = try cli.listJSON(["--limit", "100"])
        #expect(items.count == 16)
        for item in items {
            guard let id = item["id"] as? String, let name = item["name"] as? String else { continue }
            let r = try cli.run(["export", id, "-o", "-"], pinStdin: true)
            #expect(r.stdout == FileManager.default.contents(atPath: cli.root + "/" + name), "\(name) differs")
        }
    }

    /// A vault on a 2 MiB tmpfs (the key store stays on the test's disk); `body` gets the
    /// environment that points at it. Unmounted afterwards.
    func onSmallDisk(_ cli: CLI, _ body: (_ small: String, _ env: [String: String]) throws -> Void) throws {
        let small = cli.root + "/small"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        let mount = try cli.spawn("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", small])
        // No silent pass: without a tmpfs there is no full disk to test, and that is a failure.
        try #require(mount.code == 0, "cannot mount a tmpfs here: \(mount.stderr)")
        defer { _ = try? cli.spawn("/bin/umount", [small]) }
        let env = ["NU11VLT_VAULT": small + "/vault"]
        let initR = try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true, environment: env)
        #expect(initR.code == 0, "\(initR.stderr)")
        try body(small, env)
    }

    @Test("a full disk: a clear error, no partial item", .enabled(if: Mounts.available, "needs permission to mount a tmpfs"))
    func fullDisk() throws {
        let cli = try CLI()
        try onSmallDisk(cli) { small, env in
            let ok = try cli.run(["import", cli.file("fits.bin", Array(repeating: 1, count: 10_000))], pinStdin: true, environment: env)
            #expect(ok.code == 0)
            let big = cli.file("huge.bin", Array(repeating: 2, count: 4 << 20))
            expectCleanError(try cli.run(["import", big], pinStdin: true, environment: env), code: 74, mentions: "disk")
            let listed = try cli.run(["list", "--json"], pinStdin: true, environment: env)
            #expect(listed.out.contains("fits.bin") && !listed.out.contains("huge.bin"))
            let leftovers = try cli.spawn("/usr/bin/find", [small + "/vault", "-name", ".n11tmp-*"])
            #expect(leftovers.out.isEmpty, "temp files left: \(leftovers.out)")
            let photos = try FileManager.default.contentsOfDirectory(atPath: small + "/vault/Vault/Photos")
            #expect(photos.count == 1, "partial item left: \(photos)")
            let check = try cli.run(["check"], pinStdin: true, environment: env)
            #expect(check.code == 0, "check after a full disk: \(check.out) \(check.stderr)")
        }
    }

    @Test("a folder import on a full disk keeps every file that fit, names the first that did not, counts both, names no internal path",
          .enabled(if: Mounts.available, "needs permission to mount a tmpfs"))
    func fullDiskFolder() throws {
        let cli = try CLI()
        try onSmallDisk(cli) { _, env in
            let folder = cli.root + "/photos"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            var fits: [String: Data] = [:]
            for i in 1...6 {
                let bytes = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* i) })
                FileManager.default.createFile(atPath: folder + "/0\(i)-fits.bin", contents: bytes)
                fits["0\(i)-fits.bin"] = bytes
            }
            FileManager.default.createFile(atPath: folder + "/07-huge.bin", contents: Data(repeating: 7, count: 4 << 20))
            for i in 8...9 { FileManager.default.createFile(atPath: folder + "/0\(i)-after.bin", contents: Data([UInt8(i)])) }
            let r = try cli.run(["import", "-r", folder], pinStdin: true, environment: env)
            expectCleanError(r, code: 74, mentions: "07-huge.bin did not fit")
            #expect(r.stderr.contains("6 file(s) imported, 3 not imported"), "\(r.stderr)")
            #expect(!r.stderr.contains(".n11") && !r.stderr.contains("/vault/"), "the message names an internal path: \(r.stderr)")
            #expect(r.out.split(separator: "\n").count == 6, "the imported files were not listed: \(r.out)")
            let listed = try cli.run(["list", "--json"], pinStdin: true, environment: env).out
            for (name, _) in fits { #expect(listed.contains(name), "\(name) was rolled back") }
            #expect(!listed.contains("huge") && !listed.contains("after"))
            for line in r.out.split(separator: "\n") {
                let id = String(line.prefix(32)), name = String(line.dropFirst(34))
                #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true, environment: env).stdout == fits[name], "\(name) differs")
            }
            let check = try cli.run(["check"], pinStdin: true, environment: env)
            #expect(check.code == 0, "check after a full disk: \(check.out) \(check.stderr)")
        }
    }

    @Test("an item's file replaced by a FIFO (a writer of the vault folder): export, share and check answer in one line naming it, never wait on the pipe")
    func fifoInAnItemsPlace() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("a.bin", Array(repeating: 5, count: 5000))])[0]
        let path = cli.vault + "/Vault/Photos/\(id).n11"
        try #require(FileManager.default.fileExists(atPath: path))
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o600) == 0)
        let recipient = try cli.run(["identity"], pinStdin: true).out.split(separator: "\n").first { $0.hasPrefix("age1") }.map(String.init) ?? ""
        for args in [["export", id, "-o", "-"], ["share", "--to", recipient, "-o", cli.root + "/s.age", id], ["check"]] {
            let r = try cli.spawn("/usr/bin/timeout", ["20", CLI.binary] + args + ["--pin-stdin"], input: Data((cli.pin + "\n").utf8))
            #expect(r.code != 124, "\(args[0]) waited on the FIFO")
            #expect(r.code != 0, "\(args[0]) succeeded with a FIFO for the item's file")
            if args[0] != "check" {
                #expect(r.stderr.contains("not a regular file") && r.stderr.contains("hint:"), "\(args[0]): \(r.stderr)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: cli.root + "/s.age"), "share left an output")
    }
}
