// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The independent review's data-loss and loosening cases (issue 11), end to end.
@Suite("trust: pairing, KDF cost, wipe, leftovers, policies")
struct TrustTests {
    func files(under path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).sorted()
    }

    @Test("a vault and a key store not made together are refused before anything is written; check --repair quarantines key records")
    func pairing() throws {
        let a = try CLI()
        try a.initVault()
        let aID = try a.importIDs([a.file("a.jpg", [1, 2, 3])])[0]
        let b = try CLI()
        try b.initVault()
        _ = try b.importIDs([b.file("b.jpg", [4])])
        let aKeys = files(under: a.keystore)
        let bFiles = files(under: b.vault)
        let crossed = ["--vault", b.vault, "--keystore", a.keystore]
        for args in [["list"], ["import", a.file("x.jpg", [9])], ["check", "--repair"], ["status"], ["sweep"]] {
            let r = try a.run(args + crossed, pinStdin: !["status", "sweep"].contains(args[0]))
            expectCleanError(r, code: 64, mentions: "do not belong together")
            #expect(r.stderr.contains(b.vault) && r.stderr.contains(a.keystore), "\(args): \(r.stderr)")
        }
        expectCleanError(try a.run(["wipe", "--yes"] + crossed), code: 64, mentions: "do not belong together")
        #expect(files(under: a.keystore) == aKeys, "the key store changed")
        #expect(files(under: b.vault) == bFiles, "the vault changed")
        #expect(try a.run(["export", aID, "-o", "-"], pinStdin: true).stdout == Data([1, 2, 3]))
        // A key record without an item is moved aside, never destroyed, and can be put back.
        // (Put as a loose record into items/, the layout before key packs: adopted into a pack.)
        let stray = a.keystore + "/items/" + String(repeating: "cd", count: 16) + ".key"
        var strayRecord = try #require(a.keyRecordBytes(aID))
        strayRecord.replaceSubrange(8..<24, with: [UInt8](repeating: 0xcd, count: 16))
        try FileManager.default.createDirectory(atPath: a.keystore + "/items", withIntermediateDirectories: true)
        try Data(strayRecord).write(to: URL(fileURLWithPath: stray))
        let repaired = try a.run(["check", "--repair"], pinStdin: true)
        #expect(repaired.code == 0 && repaired.out.contains("to restore"), "\(repaired.out)")
        #expect(a.exists(a.keystore + "/quarantine/" + String(repeating: "cd", count: 16) + ".key") && !a.exists(stray))
    }

    @Test("a KDF cost change re-seals the backup and duress PINs it is given, keeps the Skeleton Switch armed, and refuses without them")
    func kdfCostChange() throws {
        let cli = try CLI()
        try cli.initVault()
        let backup = "backup-pin-2"
        try cli.setBackup(backup)
        let backupItem = try cli.with(backup, ["import", cli.file("b.jpg", [7])])
        #expect(backupItem.code == 0)
        #expect(try cli.run(["skeleton", "enable", "--interval", "7d"], pinStdin: true).code == 0)
        #expect(try cli.run(["settings", "set", "kdf.memory_mib", "20"], pinStdin: true).code == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        // A script that does not give the other PINs is refused; nothing changes.
        let refused = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"],
                                    input: Data("\(cli.pin)\nnew-primary-1\n".utf8))
        expectCleanError(refused, code: 64, mentions: "other-pins-fd")
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k")) == before)
        // Given the backup PIN, every slot is re-sealed at the new cost.
        let changed = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0", "--other-pins-fd", "0"],
                                    input: Data("\(cli.pin)\nnew-primary-1\n\(backup)\n\n".utf8))
        #expect(changed.code == 0, "\(changed.stderr)")
        let master = [UInt8](try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k")))
        #expect(Array(master[12..<16]) == [0, 0, 0x50, 0], "cost not applied")
        #expect(master[6] == 1, "the KDF cost change disarmed the Skeleton Switch")
        #expect(try cli.run(["skeleton", "status"]).out.contains("armed"))
        #expect(try cli.with("new-primary-1", ["list"]).code == 0)
        let b = try cli.with(backup, ["list"])
        #expect(b.code == 0 && b.out.contains(String(backupItem.out.prefix(32))), "the backup vault was lost: \(b.stderr)")
    }

    @Test("a Skeleton interval under an hour needs a confirmation or --short-interval")
    func shortInterval() throws {
        let cli = try CLI()
        try cli.initVault()
        expectCleanError(try cli.run(["skeleton", "enable", "--interval", "5s"], pinStdin: true), code: 64, mentions: "nothing was armed")
        #expect(try cli.run(["skeleton", "status"]).out.contains("off"))
        #expect(try cli.run(["skeleton", "enable", "--interval", "59m", "--short-interval"], pinStdin: true).code == 0)
    }

    @Test("wipe never follows a planted symlink and goes on past errors; folders are never created through a symlink")
    func wipeAndSymlinks() throws {
        let cli = try CLI()
        try cli.initVault()
        _ = try cli.importIDs([cli.file("a.jpg", [1])])
        let outside = cli.file("outside.txt", Array("precious".utf8))
        #expect(symlink(outside, cli.vault + "/Vault/Photos/planted.n11") == 0)
        #expect(symlink(outside, cli.keystore + "/keys/planted.n11p") == 0)
        try FileManager.default.createDirectory(atPath: cli.keystore + "/items", withIntermediateDirectories: true)
        #expect(symlink(outside, cli.keystore + "/items/planted.key") == 0)
        let r = try cli.run(["wipe", "--secure", "--yes"])
        #expect(r.code == 0, "\(r.stderr)")
        #expect(try String(contentsOfFile: outside, encoding: .utf8) == "precious", "wipe wrote through a symlink")
        #expect(!cli.exists(cli.vault) && !cli.exists(cli.keystore))
        // A symlink where a vault folder should be is refused, not followed.
        let other = try CLI()
        try other.initVault()
        let elsewhere = other.root + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.removeItem(atPath: other.vault + "/Vault/Photos")
        #expect(symlink(elsewhere, other.vault + "/Vault/Photos") == 0)
        expectCleanError(try other.run(["import", other.file("b.jpg", [2])], pinStdin: true), code: 74, mentions: "symlink")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    @Test("temp files of every kind left by a killed command are removed at the start of the next one")
    func leftovers() throws {
        let cli = try CLI()
        try cli.initVault()
        let planted = [cli.vault + "/Vault/Photos/.n11tmp-aaaa", cli.vault + "/.n11tmp-bbbb", cli.keystore + "/keys/.n11tmp-cccc",
                       cli.keystore + "/.n11tmp-dddd"]
        try FileManager.default.createDirectory(atPath: cli.keystore + "/pending", withIntermediateDirectories: true)
        for p in planted + [cli.keystore + "/pending/.n11tmp-eeee"] { FileManager.default.createFile(atPath: p, contents: Data([1])) }
        #expect(try cli.run(["status"]).code == 0)
        for p in planted + [cli.keystore + "/pending/.n11tmp-eeee"] { #expect(!cli.exists(p), "\(p) left") }
        // The next command skips folders unchanged since their clean sweep (a stat, not a
        // listing); one that changed since — a new leftover — is listed again.
        #expect(try cli.run(["status"]).code == 0)
        for p in planted { FileManager.default.createFile(atPath: p, contents: Data([2])) }
        #expect(try cli.run(["status"]).code == 0)
        for p in planted { #expect(!cli.exists(p), "\(p) left after a clean sweep was recorded") }
    }

    @Test("Ctrl-C during an import removes what was not committed and says so in one line")
    func interruptImport() throws {
        let cli = try CLI()
        try cli.initVault()
        let input = Pipe()
        let errors = Pipe()
        let process = try Program.start("/bin/sh", ["-c", "exec \"$0\" import - --name big.bin --pin-fd 3 3<<'EOF'\n\(cli.pin)\nEOF\n", CLI.binary], environment: cli.environment, stdin: input, stderr: errors)
        let chunk = Data(repeating: 0x5a, count: 1 << 20)
        for _ in 0..<8 { input.fileHandleForWriting.write(chunk) }
        // The temp file exists while the import waits for more input.
        var sawTemp = false
        for _ in 0..<100 where !sawTemp {
            sawTemp = ((try? FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Vault/Photos")) ?? []).contains { $0.hasPrefix(".n11tmp-") }
            if !sawTemp { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(sawTemp, "the import never started writing")
        process.interrupt()
        for _ in 0..<100 where process.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        try? input.fileHandleForWriting.close()  // if the signal was not handled, let it finish (and fail below)
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT)
        #expect(stderr.split(separator: "\n").count == 1 && stderr.contains("interrupted"), "\(stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Vault/Photos")
        #expect(left.isEmpty, "left behind: \(left)")
        #expect(try cli.run(["list"], pinStdin: true).out.isEmpty)
        #expect(try cli.run(["check"], pinStdin: true).code == 0)
    }

    @Test("an error message on a full disk (stderr on /dev/full) never traps: the exit code is the error's")
    func errorOnFullDisk() throws {
        let cli = try CLI()
        let r = try cli.spawn("/bin/sh", ["-c", "\"$0\" list --vault /nonexistent/v --keystore /nonexistent/k 2>/dev/full", CLI.binary])
        #expect(r.code == 4, "exit \(r.code)")
    }

    @Test("a damaged master record stops every command instead of reading as 'Skeleton Switch not armed'")
    func damagedMasterFailsClosed() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["skeleton", "enable", "--interval", "7d"], pinStdin: true).code == 0)
        var master = [UInt8](try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k")))
        master[0] ^= 0xff
        try Data(master).write(to: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        expectCleanError(try cli.run(["sweep"]), code: 5, mentions: "master record")
        expectCleanError(try cli.run(["skeleton", "status"]), code: 5, mentions: "master record")
    }

    @Test("a wrong PIN is counted before it is tried: killing the process during Argon2id still counts")
    func countedBeforeTrying() throws {
        let cli = try CLI()
        let made = try cli.run(["init", "--kdf-memory", "512", "--kdf-iterations", "4"], pinStdin: true)
        #expect(made.code == 0, "\(made.stderr)")
        for _ in 0..<5 {
            let input = Pipe()
            let process = try Program.start(CLI.binary, ["list", "--pin-stdin"], environment: cli.environment, stdin: input)
            input.fileHandleForWriting.write(Data("a-guess\n".utf8))
            // In Argon2id (512 MiB, 4 passes): its memory is filling.
            #expect(Wait.untilResident(process.processIdentifier, mebibytes: 160), "nu11vlt never reached Argon2id")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 6, mentions: "try again")
    }

    @Test("with the backup PIN, set-duress answers the same whatever the new PIN matches, and throttles")
    func duressOracle() throws {
        let cli = try CLI()
        try cli.initVault()
        let primaryItem = try cli.importIDs([cli.file("p.jpg", [1])])[0]
        try cli.setBackup("backup-pin-2")
        func setDuress(_ candidate: String) throws -> CLI.Outcome {
            try cli.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"], input: Data("backup-pin-2\n\(candidate)\n".utf8))
        }
        let hit = try setDuress(cli.pin)
        let miss = try setDuress("not-a-pin-9")
        #expect(hit.code == miss.code && hit.out == miss.out && hit.stderr == miss.stderr, "\(hit) vs \(miss)")
        // The primary PIN still opens the primary vault (nothing was overwritten).
        #expect(try cli.run(["list"], pinStdin: true).out.contains(primaryItem))
        // Candidates are throttled.
        var outcomes: [CLI.Outcome] = []
        for n in 0..<6 { outcomes.append(try setDuress("guess-\(n)-x")) }
        #expect(outcomes.contains { $0.code == 6 }, "no throttling: \(outcomes.map(\.code))")
    }

    @Test("the sweep condemns only what the sealed fade schedule names: an index row edited to Fade is not destroyed")
    func sweepTrustsOnlyTheSchedule() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("keep.jpg", [4, 4])])[0]
        let sql = try cli.spawn("/usr/bin/sqlite3", [cli.vault + "/index.sqlite", "UPDATE item SET domain = 2 WHERE id = '\(id)'"])
        #expect(sql.code == 0, "\(sql.stderr)")
        #expect(try cli.run(["sweep"]).code == 0)
        #expect(cli.hasKeyRecord(id) && cli.exists(cli.vault + "/Vault/Photos/\(id).n11"))
        _ = try cli.spawn("/usr/bin/sqlite3", [cli.vault + "/index.sqlite", "UPDATE item SET domain = 1 WHERE id = '\(id)'"])
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data([4, 4]))
    }

    @Test("names with control characters are escaped in human output")
    func escapedNames() throws {
        let cli = try CLI()
        try cli.initVault()
        let imported = try cli.runPinFD(["import", "-", "--name", "evil\u{1B}[31mred\nline2.jpg"], stdin: Data([1]))
        #expect(imported.code == 0, "\(imported.stderr)")
        #expect(!imported.out.contains("\u{1B}") && imported.out.split(separator: "\n").count == 1)
        let listed = try cli.run(["list"], pinStdin: true)
        #expect(!listed.out.contains("\u{1B}") && listed.out.split(separator: "\n").count == 1, "\(listed.out)")
        #expect(listed.out.contains("\\x1b[31mred\\x0aline2.jpg"))
        #expect(!listed.out.split(separator: "\n").contains { $0.hasSuffix(" ") }, "trailing spaces")
    }

    @Test("a file name that is not UTF-8 fails loudly, in a folder (-r) or named directly; nothing is skipped silently")
    func nonUTF8Names() throws {
        let cli = try CLI()
        try cli.initVault()
        let folder = cli.root + "/photos"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = cli.file("photos/good.jpg", [1])
        let made = try cli.spawn("/bin/sh", ["-c", "printf x > \"$0/$(printf 'caf\\351.jpg')\"", folder])
        #expect(made.code == 0, "\(made.stderr)")
        let r = try cli.run(["import", "-r", folder], pinStdin: true)
        expectCleanError(r, code: 64, mentions: "caf\\xe9.jpg")
        #expect(r.stderr.contains("nothing was imported"))
        #expect(try cli.run(["list"], pinStdin: true).out.isEmpty, "something was imported")
        let direct = try cli.spawn("/bin/sh", ["-c", "printf '%s\\n' \"$1\" | \"$0\" import \"$(printf '%s/caf\\351.jpg' \"$2\")\" --pin-stdin",
                                               CLI.binary, cli.pin, folder])
        expectCleanError(direct, code: 64, mentions: "not UTF-8")
    }

    @Test("titles and album names can stay out of argv (/proc/PID/cmdline)")
    func namesOutOfArgv() throws {
        let cli = try CLI()
        try cli.initVault()
        let title = "Secret-Title-\(UUID().uuidString.prefix(8))"
        let input = Pipe()
        let output = Pipe()
        let process = try Program.start("/bin/sh", ["-c", "exec \"$0\" note add --title-fd 4 --pin-fd 3 3<<EOF 4<<EOT\n\(cli.pin)\nEOF\n\(title)\nEOT\n", CLI.binary], environment: cli.environment, stdin: input, stdout: output)
        #expect(Wait.untilReading(process.processIdentifier, fd: 0, executable: CLI.binary), "nu11vlt never waited for the body on stdin")
        let cmdline = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(process.processIdentifier)/cmdline"))) ?? Data()
        #expect(!cmdline.isEmpty, "could not read the command line")
        #expect(!String(decoding: cmdline, as: UTF8.self).contains(title), "the title is in argv")
        input.fileHandleForWriting.write(Data("body".utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try cli.run(["note", "list"], pinStdin: true).out.contains(title))
        let album = try cli.spawn("/bin/sh", ["-c", "printf 'Hidden Album\\n' | \"$0\" album create --name-fd 0 --pin-fd 3 3<<EOF\n\(cli.pin)\nEOF\n", CLI.binary])
        #expect(album.code == 0, "\(album.stderr)")
        #expect(try cli.run(["album", "list"], pinStdin: true).out.contains("Hidden Album"))
    }

    @Test("album membership is authenticated: a row moved to another album in the index is reported, never exported with it")
    func albumBinding() throws {
        let cli = try CLI()
        try cli.initVault()
        for name in ["Home", "Other"] { #expect(try cli.run(["album", "create", name], pinStdin: true).code == 0) }
        let id = try cli.importIDs([cli.file("h.jpg", [1])], extra: ["--album", "Home"])[0]
        _ = try cli.importIDs([cli.file("o.jpg", [2])], extra: ["--album", "Other"])
        #expect(try cli.run(["album", "move", "--to", "Other", id], pinStdin: true).code == 0, "a real move re-seals")
        #expect(try cli.run(["album", "move", "--to", "Home", id], pinStdin: true).code == 0)
        #expect(try cli.run(["check"], pinStdin: true).code == 0)
        let index = cli.vault + "/index.sqlite"
        let sql = try cli.spawn("/usr/bin/sqlite3", [index, "UPDATE item SET album = (SELECT album FROM item WHERE id != '\(id)') WHERE id = '\(id)'"])
        #expect(sql.code == 0, "\(sql.stderr)")
        let check = try cli.run(["check"], pinStdin: true)
        #expect(check.code == 5 && check.out.contains("DAMAGED  \(id)"), "\(check.out)")
        let export = try cli.spawn(CLI.binary, ["archive", "export", "--secure", "--album", "Other", "-o", cli.root + "/o.nu11vlt", "--pin-stdin"],
                                   input: Data((cli.pin + "\n").utf8))
        #expect(export.code != 0 && !cli.exists(cli.root + "/o.nu11vlt"), "exported with a forged album: \(export.stderr)")
    }

    @Test("sealed names do not reveal their length; a PIN typed decomposed opens a vault made with it composed")
    func paddingAndNFC() throws {
        let cli = try CLI(pin: "caf\u{E9} cr\u{E8}me")
        try cli.initVault()
        _ = try cli.importIDs([cli.file("a", [1]), cli.file(String(repeating: "n", count: 150), [2])])
        for name in ["A", String(repeating: "Long album name", count: 3)] {
            #expect(try cli.run(["album", "create", name], pinStdin: true).code == 0)
        }
        let index = cli.vault + "/index.sqlite"
        let metas = try cli.spawn("/usr/bin/sqlite3", [index, "SELECT DISTINCT length(meta) FROM item"]).out
        #expect(metas.split(separator: "\n").count == 1, "metadata sizes differ: \(metas)")
        let names = try cli.spawn("/usr/bin/sqlite3", [index, "SELECT DISTINCT length(name) FROM album"]).out
        #expect(names.split(separator: "\n").count == 1, "album name sizes differ: \(names)")
        let decomposed = try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data("cafe\u{301} cre\u{300}me\n".utf8))
        #expect(decomposed.code == 0, "\(decomposed.stderr)")
    }

    @Test("reading works where writing cannot: list, export, check on a read-only vault and on a full disk", .enabled(if: Mounts.available, "needs permission to mount a tmpfs"))
    func readOnlyAndFull() throws {
        for situation in ["read-only", "full"] {
            let cli = try CLI()
            let disk = cli.root + "/disk"
            try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
            let mount = try cli.spawn("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", disk])
            try #require(mount.code == 0, "cannot mount a tmpfs here: \(mount.stderr)")
            defer { _ = try? cli.spawn("/bin/umount", ["-l", disk]) }
            var env = ["NU11VLT_VAULT": disk + "/vault"]
            if situation == "full" { env["NU11VLT_KEYSTORE"] = disk + "/keystore" }
            #expect(try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true, environment: env).code == 0)
            let imported = try cli.run(["import", cli.file("a.jpg", [3, 1, 4])], pinStdin: true, environment: env)
            let id = String(imported.out.prefix(32))
            if situation == "read-only" {
                #expect(try cli.spawn("/bin/mount", ["-o", "remount,ro", disk]).code == 0)
            } else {
                _ = try cli.spawn("/bin/sh", ["-c", "dd if=/dev/zero of=\"$0/filler\" bs=64k 2>/dev/null; true", disk])
            }
            let listed = try cli.run(["list"], pinStdin: true, environment: env)
            #expect(listed.code == 0 && listed.out.contains(id), "\(situation): list: \(listed.stderr)")
            #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true, environment: env).stdout == Data([3, 1, 4]), "\(situation): export")
            let check = try cli.run(["check"], pinStdin: true, environment: env)
            #expect(check.code == 0, "\(situation): check: \(check.out) \(check.stderr)")
            expectCleanError(try cli.run(["import", cli.file("b.jpg", [5])], pinStdin: true, environment: env), code: 74)
        }
    }

    @Test("a read-only copy whose WAL still holds frames lists its newest items", .enabled(if: Mounts.available, "needs permission to mount a tmpfs"))
    func readOnlyWithWALFrames() throws {
        let cli = try CLI()
        let disk = cli.root + "/ro"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        try #require(try cli.spawn("/bin/mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", disk]).code == 0)
        defer { _ = try? cli.spawn("/bin/umount", ["-l", disk]) }
        try cli.initVault()
        let first = try cli.importIDs([cli.file("a.jpg", [1])])[0]
        // A reader keeps the index open, so the next import's frames stay in the WAL (the last
        // connection to close checkpoints them): a copy taken now has them only there.
        let index = cli.vault + "/index.sqlite"
        let holder = try Program.start("/usr/bin/python3", ["-c", """
            import os, sqlite3, sys, time
            c = sqlite3.connect(sys.argv[1])
            c.execute("SELECT count(*) FROM item").fetchall()
            open(sys.argv[2], "w").close()
            while not os.path.exists(sys.argv[3]):
                time.sleep(0.05)
            """, index, cli.root + "/holding", cli.root + "/release"])
        defer { FileManager.default.createFile(atPath: cli.root + "/release", contents: nil); holder.waitUntilExit() }
        for _ in 0..<200 where !cli.exists(cli.root + "/holding") { Thread.sleep(forTimeInterval: 0.05) }
        let newest = try cli.importIDs([cli.file("b.jpg", [2])])[0]
        let wal = (try? FileManager.default.attributesOfItem(atPath: index + "-wal")[.size] as? Int) ?? 0
        try #require(wal > 0, "the WAL holds no frames: the case is not set up")
        #expect(try cli.spawn("/bin/cp", ["-a", cli.vault, disk + "/vault"]).code == 0)
        #expect(try cli.spawn("/bin/mount", ["-o", "remount,ro", disk]).code == 0)
        let listed = try cli.run(["list"], pinStdin: true, environment: ["NU11VLT_VAULT": disk + "/vault"])
        #expect(listed.code == 0, "list on the read-only copy: \(listed.stderr)")
        #expect(listed.out.contains(first) && listed.out.contains(newest), "the read-only listing lost the items in the WAL: \(listed.out)")
        #expect(try cli.run(["export", newest, "-o", "-"], pinStdin: true, environment: ["NU11VLT_VAULT": disk + "/vault"]).stdout == Data([2]))
    }
}
