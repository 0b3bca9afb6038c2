// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// The audit log (issue 18), end to end: what it records, what `--verify` catches, what it
/// never holds, and what a duress unlock leaves in it.
@Suite("audit log")
struct LogTests {
    /// The log file's records (length-prefixed after a 24-byte header), for tampering.
    struct LogFile {
        var header: [UInt8]
        var records: [[UInt8]]
        init(_ path: String) throws {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            header = Array(bytes[0..<24])
            records = []
            var at = 24
            while at + 4 <= bytes.count {
                let n = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
                records.append(Array(bytes[at..<(at + 4 + n)]))
                at += 4 + n
            }
        }
        func type(_ i: Int) -> UInt8 { records[i][4] }
        func seq(_ i: Int) -> Int { records[i][5..<13].reduce(0) { $0 << 8 | Int($1) } }
        func write(_ path: String) throws { try Data(header + records.joined()).write(to: URL(fileURLWithPath: path)) }
    }

    /// The vault's log: of the two (the other is the decoy that stands for a backup vault's
    /// log, written once at init), the one written last. Both are the same size (issue 29:
    /// the size tells nothing).
    func vaultLog(_ keystore: String) throws -> String {
        let paths = try FileManager.default.contentsOfDirectory(atPath: keystore + "/log")
            .filter { $0.hasSuffix(".n11l") && $0 != "device.n11l" }.map { keystore + "/log/" + $0 }
        #expect(paths.count == 2, "expected the vault's log and a decoy: \(paths)")
        func size(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0 }
        #expect(Set(paths.map(size)).count == 1, "the vault's log and the decoy differ in size")
        func modified(_ path: String) -> Date { ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast }
        return try #require(paths.max { modified($0) < modified($1) })
    }

    func events(_ cli: CLI, pin: String, _ extra: [String] = []) throws -> [[String: Any]] {
        let r = try cli.with(pin, ["log", "--json"] + extra)
        #expect(r.code == 0, "log: \(r.stderr)")
        return ((try? JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
    }

    /// A vault with a few of every kind of event.
    func busyVault(marker: String) throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["album", "create", marker + "-album"], pinStdin: true).code == 0)
        let ids = try cli.importIDs([cli.file(marker + "-name.jpg", Array((marker + " content").utf8)),
                                     cli.file("b.jpg", [1, 2])], extra: ["--album", marker + "-album"])
        let note = try cli.spawn("/bin/sh", ["-c", "printf '%s body' \"$1\" | \"$0\" note add --title \"$1-title\" --pin-fd 3 3<<EOF\n\(cli.pin)\nEOF\n",
                                             CLI.binary, marker])
        #expect(note.code == 0, "\(note.stderr)")
        #expect(try cli.run(["export", ids[0], "-o", "-"], pinStdin: true).code == 0)
        #expect(try cli.run(["delete", ids[1]], pinStdin: true).code == 0)
        #expect(try cli.with("not-the-pin", ["list"]).code != 0)
        #expect(try cli.run(["rekey"], pinStdin: true).code == 0)
        return cli
    }

    @Test("a healthy log verifies and records each event, wrong PINs folded in from before the unlock; no name or content in it")
    func healthy() throws {
        let marker = "LOGMARK" + UUID().uuidString.prefix(8)
        let cli = try busyVault(marker: marker)
        let verified = try cli.run(["log", "--verify"], pinStdin: true)
        #expect(verified.code == 0 && verified.out.contains("log verified"), "\(verified.out) \(verified.stderr)")
        let names = try events(cli, pin: cli.pin).compactMap { $0["event"] as? String }
        for expected in ["init", "unlock", "import", "note add", "export", "delete", "wrong PIN", "rekey"] {
            #expect(names.contains(expected), "no \(expected) in \(names)")
        }
        let wrong = try events(cli, pin: cli.pin).first { $0["event"] as? String == "wrong PIN" }
        #expect((wrong?["detail"] as? String)?.hasPrefix("before unlock") == true, "\(String(describing: wrong))")
        let scan = try cli.spawn("/bin/grep", ["-rlaF", marker, cli.keystore + "/log"])
        #expect(scan.out.isEmpty && scan.code == 1, "a name or content reached the log: \(scan.out)")
        // Decrypted, too: no entry carries a file name, a note's title, an album name or content.
        let decrypted = try cli.run(["log", "--json"], pinStdin: true)
        #expect(decrypted.code == 0 && !decrypted.out.isEmpty)
        #expect(!decrypted.out.contains(marker), "a decrypted log entry names an item: \(decrypted.out.split(separator: "\n").filter { $0.contains(marker) })")
        let since = try events(cli, pin: cli.pin, ["--since", "1h"])
        #expect(since.count >= names.count, "--since 1h dropped recent entries")
        expectCleanError(try cli.run(["log", "--since", "soon"], pinStdin: true), code: 64, mentions: "duration")
    }

    @Test("a device journal that starts over (removed, then new wrong PINs) is folded whole: later wrong PINs reach the log")
    func restartedJournal() throws {
        let cli = try CLI()
        try cli.initVault()
        let journal = cli.keystore + "/log/device.n11l"
        func wrongPINs() throws -> Int { try events(cli, pin: cli.pin).filter { $0["event"] as? String == "wrong PIN" }.count }
        for _ in 0..<2 { #expect(try cli.with("not-the-pin-1", ["list"]).code != 0) }
        #expect(try wrongPINs() == 2)  // folded at this unlock: the mark is now at the journal's last entry
        try FileManager.default.removeItem(atPath: journal)
        #expect(try cli.with("not-the-pin-2", ["list"]).code != 0)
        #expect(cli.exists(journal), "the wrong PIN was not journalled")
        #expect(try wrongPINs() == 3, "a wrong PIN in the restarted journal never reached the log")
    }

    @Test("--verify names the entry after a flipped bit, a deleted entry, two swapped entries, a truncated tail")
    func tampering() throws {
        let base = try busyVault(marker: "T")
        let path = try vaultLog(base.keystore)
        let pristine = try Data(contentsOf: URL(fileURLWithPath: path))
        let log = try LogFile(path)
        let entries = (0..<log.records.count).filter { log.type($0) == 2 }
        try #require(entries.count >= 8, "too few entries: \(entries.count)")
        let k = entries[3]
        let seq = log.seq(k)
        var flipped = log
        flipped.records[k][flipped.records[k].count - 20] ^= 0x04
        var deleted = log
        deleted.records.remove(at: k)
        var swapped = log
        swapped.records.swapAt(k, k + 1)
        var truncated = log
        truncated.records.removeLast(3)
        let cases: [(String, LogFile, String)] = [
            ("flipped bit", flipped, "entry \(seq) does not authenticate"),
            ("deleted entry", deleted, "entry \(seq) was removed"),
            ("swapped entries", swapped, "entries \(seq) and \(seq + 1) are out of order"),
            ("truncated tail", truncated, "ends after entry \(log.seq(log.records.count - 4)) without its head"),
        ]
        for (what, file, mention) in cases {
            try file.write(path)
            let r = try base.run(["log", "--verify"], pinStdin: true)
            expectCleanError(r, code: 5, mentions: mention)
            // The damaged log is kept as evidence, and keeps failing until it is removed.
            let again = try base.run(["log", "--verify"], pinStdin: true)
            #expect(again.code == 5, "\(what): the second --verify passed")
            for name in try FileManager.default.contentsOfDirectory(atPath: base.keystore + "/log") where name.contains(".damaged-") {
                try FileManager.default.removeItem(atPath: base.keystore + "/log/" + name)
            }
            try pristine.write(to: URL(fileURLWithPath: path))
            #expect(try base.run(["log", "--verify"], pinStdin: true).code == 0, "\(what): the pristine log no longer verifies")
        }
    }

    @Test("the backup PIN sees only its vault's log; after a duress unlock it has the shape a backup unlock gives, and the primary log is gone")
    func duressShape() throws {
        let cli = try CLI()
        try cli.initVault()
        let primaryID = try cli.importIDs([cli.file("p.jpg", [3])])[0]
        try cli.setBackup("backup-pin-2")
        #expect(try cli.with("backup-pin-2", ["import", cli.file("b.jpg", [4])]).code == 0)
        #expect(try cli.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"],
                              input: Data("backup-pin-2\nduress-pin-3\n".utf8)).code == 0)
        let backupLog = try events(cli, pin: "backup-pin-2")
        let backupEvents = backupLog.compactMap { $0["event"] as? String }
        let backupItems = backupLog.flatMap { ($0["items"] as? [String]) ?? [] }
        #expect(backupEvents.first == "init" && !backupEvents.contains("backup PIN set") && !backupItems.contains(primaryID),
                "the backup PIN sees the primary's log: \(backupEvents)")
        // Two copies of the same state: one opened with the backup PIN, one with the duress PIN.
        func copy(_ label: String) throws -> [String] {
            let dir = cli.root + "/" + label
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for part in ["vault", "keystore"] { try FileManager.default.copyItem(atPath: cli.root + "/" + part, toPath: dir + "/" + part) }
            return ["--vault", dir + "/vault", "--keystore", dir + "/keystore"]
        }
        let asBackup = try copy("as-backup")
        let asDuress = try copy("as-duress")
        #expect(try cli.with("backup-pin-2", ["list"] + asBackup).code == 0)
        #expect(try cli.with("duress-pin-3", ["list"] + asDuress).code == 0)
        let logsBackup = try FileManager.default.contentsOfDirectory(atPath: cli.root + "/as-backup/keystore/log").filter { $0 != "device.n11l" }
        let logsDuress = try FileManager.default.contentsOfDirectory(atPath: cli.root + "/as-duress/keystore/log").filter { $0 != "device.n11l" }
        // The duress PIN shreds the primary's log and leaves a decoy in its place (two logs,
        // whether or not a backup vault exists).
        #expect(logsBackup.count == 2 && logsDuress.count == 2, "backup: \(logsBackup), duress: \(logsDuress)")
        let kept = Set(logsBackup).intersection(logsDuress)
        #expect(kept.count == 1, "the primary log survived the duress PIN: backup: \(logsBackup), duress: \(logsDuress)")
        let backupLogName = try #require(kept.first)
        let sizeA = try FileManager.default.attributesOfItem(atPath: cli.root + "/as-backup/keystore/log/" + backupLogName)[.size] as? Int
        let sizeB = try FileManager.default.attributesOfItem(atPath: cli.root + "/as-duress/keystore/log/" + backupLogName)[.size] as? Int
        #expect(sizeA == sizeB && sizeA != nil, "the backup log differs in size: \(String(describing: sizeA)) vs \(String(describing: sizeB))")
        let shapeA = try events(cli, pin: "backup-pin-2", asBackup).map { "\($0["event"] ?? "")/\($0["count"] ?? "-")" }
        let shapeB = try events(cli, pin: "backup-pin-2", asDuress).map { "\($0["event"] ?? "")/\($0["count"] ?? "-")" }
        #expect(shapeA == shapeB, "a duress unlock is told apart: \(shapeA) vs \(shapeB)")
    }
}
