// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 58's "small ones" and its one date convention, each as a user meets it: a common
/// PIN, a negative --limit, a date in words, the exit codes, the time zone of every listing,
/// wrong PINs since the last unlock, a typo in the recovery phrase, a read-only vault folder.
@Suite("a day with the CLI: the small ones")
struct DayToDayTests {
    @Test("a PIN a thief tries first is refused at init and at pin change; nothing is created or changed")
    func commonPINs() throws {
        for pin in ["1234", "0000", "2580", "654321", "password", "7890"] {
            let cli = try CLI(pin: pin)
            let r = try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true)
            expectCleanError(r, code: 64, mentions: "first a thief tries")
            #expect(!FileManager.default.fileExists(atPath: cli.keystore + "/master.n11k"), "\(pin): a key store was made")
        }
        // A weak PIN that is not among them is still allowed, with the warning.
        let fair = try CLI(pin: "7306")
        let ok = try fair.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true)
        #expect(ok.code == 0 && ok.stderr.contains("warning: this PIN is weak"), "\(ok.stderr)")
        let change = try fair.spawn("/bin/sh", ["-c", "exec \"$0\" pin change --pin-stdin --new-pin-fd 3 3<<'EOF'\n1111\nEOF\n", CLI.binary],
                                    input: Data("7306\n".utf8))
        expectCleanError(change, code: 64, mentions: "first a thief tries")
        #expect(try fair.run(["status"], pinStdin: true).code == 0, "the old PIN no longer opens after a refused change")
    }

    @Test("a negative --limit, a date in words, the exit codes in --help")
    func smallUsage() throws {
        let cli = try CLI()
        try cli.initVault()
        let old = cli.file("old.txt", [1])
        #expect(try cli.spawn("/usr/bin/touch", ["-d", "2001-02-03 04:05", old]).code == 0)
        _ = try cli.importIDs([old])
        expectCleanError(try cli.run(["list", "--limit", "-3"], pinStdin: true), code: 64, mentions: "--limit takes 0 or more, not -3")
        let words = try cli.run(["list", "--taken-from", "lastweek"], pinStdin: true)
        expectCleanError(words, code: 64, mentions: "2024-07-31")
        #expect(words.stderr.contains("today or yesterday"), "\(words.stderr)")
        let recent = try cli.run(["list", "--taken-from", "yesterday"], pinStdin: true)
        #expect(recent.code == 0 && !recent.out.contains("old.txt"), "2001's item listed as taken since yesterday: \(recent.out) \(recent.stderr)")
        let before = try cli.run(["list", "--taken-to", "yesterday"], pinStdin: true)
        #expect(before.code == 0 && before.out.contains("old.txt"), "\(before.out) \(before.stderr)")
        let help = try cli.run(["--help"])
        for code in ["3 wrong PIN", "8 bound to another key store", "9 the TPM"] {
            #expect(help.out.replacingOccurrences(of: "\n", with: " ").contains(code), "--help lacks exit code \(code)")
        }
    }

    @Test("one time convention: listings in local time, --sort taken shows the date it sorts by, JSON with the offset")
    func dates() throws {
        let cli = try CLI()
        try cli.initVault()
        let old = cli.file("old.txt", [1])
        #expect(try cli.spawn("/usr/bin/touch", ["-d", "2001-02-03 04:05 UTC", old]).code == 0)
        _ = try cli.importIDs([old])
        let kolkata = ["TZ": "Asia/Kolkata"]
        let taken = try cli.run(["list", "--sort", "taken"], pinStdin: true, environment: kolkata)
        #expect(taken.out.contains("2001-02-03 09:35"), "--sort taken does not show the capture date in local time: \(taken.out)")
        let imported = try cli.run(["list"], pinStdin: true, environment: kolkata)
        #expect(!imported.out.contains("2001-02-03"), "list (import order) shows the capture date: \(imported.out)")
        let json = try cli.run(["list", "--json"], pinStdin: true, environment: kolkata)
        #expect(json.out.contains("\"2001-02-03T09:35:00+05:30\""), "JSON times are not local with the offset: \(json.out)")
        let note = try cli.spawn("/bin/sh", ["-c", "exec \"$0\" note add --title x --pin-fd 3 3<<'EOF'\n\(cli.pin)\nEOF\n", CLI.binary],
                                 input: Data("body\n".utf8))
        #expect(note.code == 0, "\(note.stderr)")
        let notes = try cli.run(["note", "list"], pinStdin: true, environment: kolkata)
        let local = DateFormatter()
        local.timeZone = TimeZone(identifier: "Asia/Kolkata")
        local.dateFormat = "yyyy-MM-dd HH:mm"
        let line = notes.out.split(separator: "\n").first.map(String.init) ?? ""
        #expect(!line.contains("T") || !line.contains("Z"), "note list prints UTC: \(line)")
        let now = Date()
        #expect([now, now - 60].contains { line.contains(local.string(from: $0)) }, "note list not in local time: \(line)")
    }

    @Test("wrong PINs since the last unlock are said at the next unlock, once")
    func wrongPINsSaid() throws {
        let cli = try CLI()
        try cli.initVault()
        for _ in 0..<2 {
            #expect(try cli.run(["status", "--pin-stdin"], stdin: Data("not the pin\n".utf8)).code == 3)
        }
        let next = try cli.run(["status"], pinStdin: true)
        #expect(next.code == 0 && next.stderr.contains("2 wrong PINs were typed since the last unlock"), "\(next.stderr)")
        let after = try cli.run(["status"], pinStdin: true)
        #expect(!after.stderr.contains("wrong PIN"), "said again: \(after.stderr)")
    }

    @Test("a recovery phrase with one slip names its group; a malformed one says what is wrong, never the TPM")
    func phraseTypos() throws {
        let cli = try CLI()
        let made = try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true)
        let phrase = try #require(made.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.count == 39 && $0.split(separator: "-").count == 8 })
        _ = try cli.importIDs([cli.file("a.txt", [1, 2])])
        var groups = phrase.split(separator: "-").map { Array($0) }
        let alphabet = Array("cbdefghijklnrtuv")
        func attempt(_ text: String) throws -> CLI.Outcome {
            try cli.spawn("/bin/sh", ["-c", "exec \"$0\" recover --keystore \"$1\" --pin-stdin --phrase-fd 3 3<<'EOF'\n\(text)\nEOF\n",
                                      CLI.binary, cli.root + "/rebuilt"], input: Data("a new pin 5512\n".utf8))
        }
        // One letter changed in group 4.
        var changed = groups
        changed[3][1] = alphabet.first { $0 != groups[3][1] } ?? "c"
        let one = try attempt(changed.map { String($0) }.joined(separator: "-"))
        expectCleanError(one, code: 3, mentions: "typo in group 4")
        // Two neighbours swapped in group 6 (when they differ).
        if let i = (0..<3).first(where: { groups[5][$0] != groups[5][$0 + 1] }) {
            groups[5].swapAt(i, i + 1)
            expectCleanError(try attempt(groups.map { String($0) }.joined(separator: "-")), code: 3, mentions: "typo in group 6")
        }
        let stray = try attempt(String(phrase.prefix(10)) + "m" + String(phrase.dropFirst(11)))
        expectCleanError(stray, code: 64, mentions: "that is not a recovery phrase: group 3 has 'm'")
        let short = try attempt(String(phrase.prefix(14)))
        expectCleanError(short, code: 64, mentions: "it has 12 letters, a recovery phrase has 32")
        #expect(!(one.stderr + stray.stderr + short.stderr).contains("TPM"), "a vault without a TPM hears about one")
        #expect(!FileManager.default.fileExists(atPath: cli.root + "/rebuilt/master.n11k"))
    }

    @Test("view without xdg-open says what to install or set; a viewer not on PATH is named")
    func noViewer() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("a.txt", [1, 2])])[0]
        let empty = cli.root + "/emptybin"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let none = try cli.run(["view", id], pinStdin: true, environment: ["PATH": empty])
        expectCleanError(none, code: 4, mentions: "xdg-open is not installed")
        #expect(none.stderr.contains("xdg-utils") && none.stderr.contains("NU11VLT_VIEWER"), "\(none.stderr)")
        let missing = try cli.run(["view", id], pinStdin: true, environment: ["NU11VLT_VIEWER": "no-such-viewer-58"])
        expectCleanError(missing, code: 4, mentions: "the viewer 'no-such-viewer-58' was not found")
    }

    @Test("an import into a read-only vault folder names the file and the folder, not a temp file")
    func readOnlyVault() throws {
        let cli = try CLI()
        try cli.initVault()
        _ = try cli.importIDs([cli.file("first.txt", [1])])
        let ro = cli.root + "/ro"
        try FileManager.default.createDirectory(atPath: ro, withIntermediateDirectories: true)
        // A read-only bind mount: root ignores file modes, not a read-only mount.
        guard try cli.spawn("/bin/mount", ["--bind", cli.vault, ro]).code == 0 else {
            Issue.record("cannot bind-mount (the test runs as root, as make test does)")
            return
        }
        defer { _ = try? cli.spawn("/bin/umount", [ro]) }
        #expect(try cli.spawn("/bin/mount", ["-o", "remount,bind,ro", ro]).code == 0)
        let photo = cli.file("holiday.txt", [1, 2, 3])
        let r = try cli.run(["import", "--vault", ro, photo], pinStdin: true)
        #expect(r.code != 0)
        #expect(r.stderr.contains("holiday.txt was not imported") && r.stderr.contains("cannot create a file in this folder"), "\(r.stderr)")
        #expect(!r.stderr.contains(".n11tmp"), "a temp file's name: \(r.stderr)")
    }
}
