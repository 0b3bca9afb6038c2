// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

@Suite("check, tamper, zero network, process hygiene")
struct ReliabilityTests {
    func flip(_ path: String, at offset: Int? = nil) throws -> Data {
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        var bytes = [UInt8](original)
        let i = offset ?? Int.random(in: 0..<bytes.count)
        bytes[i] ^= UInt8(1 << Int.random(in: 0..<8))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return original
    }

    @Test("a flipped bit in every kind of file is detected and reported for the right item; the others still export")
    func tamper() throws {
        let cli = try CLI()
        try cli.initVault()
        let contents: [[UInt8]] = (0..<4).map { i in (0..<(20_000 + i)).map { UInt8(truncatingIfNeeded: $0 &* (i + 3)) } }
        let ids = try cli.importIDs((0..<4).map { cli.file("f\($0).jpg", contents[$0]) })
        let note = try cli.runPinFD(["note", "add", "--title", "n"], stdin: Data("note body".utf8)).out
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let clean = try cli.run(["check"], pinStdin: true)
        #expect(clean.code == 0 && clean.out.contains("0 damaged"), "\(clean.out) \(clean.stderr)")

        func expectOthersExport(except bad: String) throws {
            for (i, id) in ids.enumerated() where id != bad {
                #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data(contents[i]), "\(id) after tampering \(bad)")
            }
        }
        // .n11 content, many random positions (header, salt, commitment, body, tag).
        let file = cli.vault + "/Vault/Photos/\(ids[0]).n11"
        for trial in 0..<12 {
            let size = try Data(contentsOf: URL(fileURLWithPath: file)).count
            let offset = [0, 5, 6, 10, 30, 60, 100, 16_000, size - 1, size - 20].randomElement() ?? trial
            let original = try flip(file, at: min(offset, size - 1))
            let r = try cli.run(["check"], pinStdin: true)
            #expect(r.code == 5 && r.out.contains("DAMAGED  \(ids[0])"), "flip at \(offset) not reported: \(r.out)")
            expectCleanError(try cli.run(["export", ids[0], "-o", "-"], pinStdin: true), code: 5, mentions: ids[0])
            try expectOthersExport(except: ids[0])
            try original.write(to: URL(fileURLWithPath: file))
        }
        // .n11note
        let noteFile = cli.vault + "/Notes/vault_\(note).n11note"
        var original = try flip(noteFile)
        #expect(try cli.run(["check"], pinStdin: true).out.contains("DAMAGED  \(note)"))
        try original.write(to: URL(fileURLWithPath: noteFile))
        // Key record of an item.
        let (record, recordAt) = try #require(cli.keyRecordLocation(ids[1]))
        original = try flip(record, at: recordAt + Int.random(in: 24..<84))
        let r1 = try cli.run(["check"], pinStdin: true)
        #expect(r1.code == 5 && r1.out.contains("DAMAGED  \(ids[1])"), "\(r1.out)")
        try expectOthersExport(except: ids[1])
        try original.write(to: URL(fileURLWithPath: record))
        // The index: a bit inside one item's sealed metadata.
        let index = cli.vault + "/index.sqlite"
        let hex = try cli.spawn("/usr/bin/sqlite3", [index, "SELECT hex(meta) FROM item WHERE id = '\(ids[2])'"]).out
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let blob = [UInt8](hexToData(hex))
        let db = [UInt8](try Data(contentsOf: URL(fileURLWithPath: index)))
        guard let at = firstIndex(of: blob, in: db) else { Issue.record("meta blob not found in the index file"); return }
        original = try flip(index, at: at + 12 + Int.random(in: 0..<(blob.count - 12)))
        let r2 = try cli.run(["check"], pinStdin: true)
        #expect(r2.code == 5 && r2.out.contains("DAMAGED  \(ids[2])"), "\(r2.out)")
        try expectOthersExport(except: ids[2])
        try original.write(to: URL(fileURLWithPath: index))
        #expect(try cli.run(["check"], pinStdin: true).code == 0)
        // Master record (salt or the primary slot): looks exactly like a wrong PIN. The two
        // other slots are random filler here, so a flip there changes nothing that matters.
        original = try flip(cli.keystore + "/master.n11k", at: Int.random(in: 16..<188))
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 3)
        try original.write(to: URL(fileURLWithPath: cli.keystore + "/master.n11k"))
        #expect(try cli.run(["settings", "set", "pin.erase_after", "5"], pinStdin: true).code == 0)
        // Fade schedule / Skeleton state (device state): detected, fails closed.
        _ = try cli.importIDs([cli.file("fade.jpg", [1])], extra: ["--fade", "1h"])
        _ = try flip(cli.keystore + "/state.n11s")
        let r4 = try cli.run(["status"])
        #expect(r4.stderr.contains("missing or altered"), "\(r4.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Fade").isEmpty)
        // Settings: altered (it could turn pin.erase_after off) fails closed — PIN entry waits
        // an hour, the damaged file is set aside, nothing is silently reset.
                _ = try flip(cli.keystore + "/settings.n11c", at: 20)
        let r3 = try cli.run(["status"])
        #expect(r3.code == 0 && r3.stderr.contains("settings file was missing or altered"), "\(r3.stderr)")
        #expect(cli.exists(cli.keystore + "/settings.n11c.damaged"))
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 6, mentions: "try again in 60 minutes")
    }

    @Test("check --repair quarantines a damaged item and removes leftovers, deleting nothing that decrypts")
    func repair() throws {
        let cli = try CLI()
        try cli.initVault()
        let ids = try cli.importIDs([cli.file("a.jpg", Array(repeating: 1, count: 30_000)), cli.file("b.jpg", [2, 3])])
        let temp = cli.vault + "/Vault/Photos/.n11tmp-0123456789abcdef"
        FileManager.default.createFile(atPath: temp, contents: Data([9, 9]))
        // A leftover temp file of an interrupted write is removed at the start of the next command.
        let warned = try cli.run(["check"], pinStdin: true)
        #expect(warned.code == 0 && !FileManager.default.fileExists(atPath: temp), "\(warned.out)")
        _ = try flip(cli.vault + "/Vault/Photos/\(ids[0]).n11", at: 200)
        #expect(try cli.run(["check"], pinStdin: true).code == 5)
        let repaired = try cli.run(["check", "--repair"], pinStdin: true)
        #expect(repaired.code == 0, "\(repaired.out) \(repaired.stderr)")
        #expect(FileManager.default.fileExists(atPath: cli.vault + "/Quarantine/\(ids[0]).n11"))
        #expect(!FileManager.default.fileExists(atPath: temp))
        #expect(try cli.run(["check"], pinStdin: true).code == 0)
        #expect(try cli.run(["export", ids[1], "-o", "-"], pinStdin: true).stdout == Data([2, 3]))
        // A file without an index entry (it may still decrypt) is moved, never deleted.
        let orphan = cli.vault + "/Vault/Photos/\(String(repeating: "ab", count: 16)).n11"
        FileManager.default.createFile(atPath: orphan, contents: Data([1, 2, 3]))
        #expect(try cli.run(["check", "--repair"], pinStdin: true).code == 0)
        #expect(FileManager.default.fileExists(atPath: cli.vault + "/Quarantine/\(String(repeating: "ab", count: 16)).n11"))
    }

    @Test("zero network: no network system call in the main flows (strace)")
    func zeroNetwork() throws {
        let cli = try CLI()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else {
            Issue.record("strace is not installed (make test installs it)")
            return
        }
        let log = cli.root + "/strace"
        func traced(_ args: [String], input: String, environment: [String: String] = [:]) throws {
            let r = try cli.spawn("/usr/bin/strace", ["-f", "-qq", "-e", "trace=network", "-o", log + "-\(args[0])", CLI.binary] + args,
                                  input: Data(input.utf8), environment: environment)
            #expect(r.code == 0, "\(args): \(r.stderr)")
        }
        let file = cli.file("x.jpg", Array(repeating: 7, count: 50_000))
        try traced(["init", "--kdf-memory", "19", "--kdf-iterations", "2", "--pin-stdin"], input: cli.pin + "\n")
        try traced(["import", file, "--pin-stdin"], input: cli.pin + "\n")
        let id = String(try cli.run(["list"], pinStdin: true).out.prefix(32))
        try traced(["export", id, "-o", "-", "--pin-stdin"], input: cli.pin + "\n")
        try traced(["list", "--json", "--pin-stdin"], input: cli.pin + "\n")
        // view starts its viewer with posix_spawn (Foundation's Process opened sockets).
        try traced(["view", "--no-inline", id, "--pin-stdin"], input: cli.pin + "\n", environment: ["NU11VLT_VIEWER": "cat >/dev/null"])
        try traced(["archive", "export", "--portable", "-o", cli.root + "/a.nu11vlt", "--kdf-memory", "19", "--kdf-iterations", "2",
                    "--pin-stdin", "--password-fd", "0"], input: cli.pin + "\nviolet quartz tulip orbit canyon\n")
        try traced(["delete", id, "--pin-stdin"], input: cli.pin + "\n")
        try traced(["sweep"], input: "")
        var calls = 0
        var named = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: cli.root) where name.hasPrefix("strace-") {
            let text = try String(contentsOfFile: cli.root + "/" + name, encoding: .utf8)
            let found = StraceLines.networkCalls(text)  // by the call's name (StraceLines)
            named += 1
            calls += found.count
            #expect(found.isEmpty, "\(name): \(found.prefix(3))")
        }
        #expect(named == 8, "not every flow was traced: \(named)")
        #expect(calls == 0)
    }

    @Test("process hygiene: no core dumps, no secret in /proc cmdline or environ")
    func hygiene() throws {
        let cli = try CLI()
        try cli.initVault()
        // The PIN on stdin and on another descriptor: neither may reach argv or the environment.
        for (label, command) in [("stdin", "exec \"$0\" list --pin-stdin"), ("fd 3", "exec \"$0\" list --pin-fd 3 3<&0")] {
            let stdin = Pipe()
            let process = try Program.start("/bin/sh", ["-c", command, CLI.binary], environment: cli.environment, stdin: stdin)
            // Half the PIN, so the process waits for the rest with part of the secret read.
            stdin.fileHandleForWriting.write(Data(cli.pin.prefix(5).utf8))
            #expect(Wait.untilReading(process.processIdentifier, fd: label == "stdin" ? 0 : 3, executable: CLI.binary), "\(label): nu11vlt never waited for the rest of the PIN")
            let pid = process.processIdentifier
            let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
            let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") } ?? ""
            #expect(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).first == "0", "\(label): \(core)")
            let cmdline = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
            #expect(String(decoding: cmdline, as: UTF8.self).contains("list"), "\(label): not the nu11vlt process")
            for file in ["cmdline", "environ"] {
                let data = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/\(file)"))
                #expect(!data.isEmpty || file == "environ", "\(label): /proc/\(pid)/\(file) is empty")
                #expect(!String(decoding: data, as: UTF8.self).contains(cli.pin.prefix(5)), "\(label): \(file) holds the PIN")
            }
            stdin.fileHandleForWriting.write(Data((cli.pin.dropFirst(5) + "\n").utf8))
            try stdin.fileHandleForWriting.close()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(label)")
        }
    }
}

func hexToData(_ hex: String) -> Data {
    var data = Data()
    var chars = hex.makeIterator()
    while let a = chars.next(), let b = chars.next() {
        if let v = UInt8(String([a, b]), radix: 16) { data.append(v) }
    }
    return data
}

func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard needle.count > 0, haystack.count >= needle.count else { return nil }
    for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
        if Array(haystack[i..<(i + needle.count)]) == needle { return i }
    }
    return nil
}
