// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Every child of nu11vlt (the image helper, a viewer, an editor) starts with its own
/// descriptors only — never the --pin-fd descriptor — and without a controlling terminal,
/// so it can neither read the PIN nor type into the user's shell (TIOCSTI).
@Suite("Children inherit nothing")
struct ChildTests {
    /// /proc/PID/stat's tty_nr (0: no controlling terminal).
    static func tty(_ stat: String) -> Int? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 4 ? Int(fields[4]) : nil
    }

    func finish(_ p: Process) {
        for _ in 0..<600 where p.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
    }

    @Test("the viewer and the editor get 0, 1, 2 (and the viewer its memfd as 3), no --pin-fd, no controlling terminal")
    func viewerAndEditor() throws {
        let cli = try CLI()
        try cli.initVault()
        try Data((cli.pin + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/pin"))
        let original = cli.file("doc.bin", Array("viewer bytes".utf8))
        let id = try cli.importIDs([original])[0]
        FileManager.default.createFile(atPath: cli.root + "/body", contents: Data("note body".utf8))
        let r = cli.root
        let inspect = { (who: String) in
            "ls -l /proc/$$/fd/ > \(r)/\(who)-fds; cat /proc/$$/stat > \(r)/\(who)-stat; readlink /proc/$$/fd/3 > \(r)/\(who)-fd3;"
        }
        let view = try cli.underTerminal("exec \(CLI.binary) view --no-inline \(id) --pin-fd 3 3<\(r)/pin",
                                     environment: ["NU11VLT_VIEWER": inspect("viewer") + " cmp \(original)"])
        finish(view)
        #expect(view.terminationStatus == 0, "view at a terminal failed")
        // Under umask 000, the editor's plaintext file must still be 0600 in a 0700 folder.
        let mode = "stat -c '%a' \"$1\" \"$(dirname \"$1\")\" > \(r)/editor-mode;"
        let edit = try cli.underTerminal("umask 000; exec \(CLI.binary) note add --title t --pin-fd 3 3<\(r)/pin > \(r)/note-id",
                                     environment: ["EDITOR": inspect("editor") + mode + " cp \(r)/body"])
        finish(edit)
        #expect(edit.terminationStatus == 0, "note add at a terminal failed")
        for who in ["viewer", "editor"] {
            // "N -> target" per descriptor. dash keeps a copy of the terminal (fd 10) while it
            // redirects: a descriptor beyond 0-2 (3: the viewer's memfd) must be the terminal.
            var targets: [Int: String] = [:]
            for line in try String(contentsOfFile: "\(r)/\(who)-fds", encoding: .utf8).split(separator: "\n") {
                let parts = line.components(separatedBy: " -> ")
                guard parts.count == 2, let fd = parts[0].split(separator: " ").last.flatMap({ Int($0) }) else { continue }
                targets[fd] = parts[1]
            }
            let terminal = try #require(targets[0], "\(who): no stdin: \(targets)")
            #expect(terminal.hasPrefix("/dev/pts/"), "\(who)'s stdin is not the terminal: \(terminal)")
            // (the editor's nu11vlt writes the note's ID to a file: its stdout, and so dash's copy)
            for (fd, target) in targets where fd > 2 && !(who == "viewer" && fd == 3) {
                #expect(target == terminal || target == "\(r)/note-id", "\(who) inherited descriptor \(fd) → \(target)")
            }
            #expect(!targets.values.contains { $0.hasSuffix("/pin") || $0.contains(cli.keystore) || $0.contains(cli.vault) },
                    "\(who) inherited the PIN's descriptor or a vault file: \(targets)")
            let stat = try String(contentsOfFile: "\(r)/\(who)-stat", encoding: .utf8)
            #expect(Self.tty(stat) == 0, "\(who) has a controlling terminal: \(stat)")
        }
        #expect(try String(contentsOfFile: "\(r)/editor-mode", encoding: .utf8) == "600\n700\n",
                "the editor's file and folder modes (umask 000): \((try? String(contentsOfFile: "\(r)/editor-mode", encoding: .utf8)) ?? "none")")
        let fd3 = try String(contentsOfFile: "\(r)/viewer-fd3", encoding: .utf8)
        #expect(fd3.hasPrefix("/memfd:nu11vlt-view"), "the viewer's descriptor 3 is not its memfd: \(fd3)")
        let note = try String(contentsOfFile: "\(r)/note-id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli.run(["note", "show", note], pinStdin: true).out == "note body")
    }

    @Test("the image helper gets 0, 1, 2 only, no controlling terminal and an empty environment, while nu11vlt has a terminal")
    func imageHelper() throws {
        let cli = try CLI()
        try cli.initVault()
        try Data((cli.pin + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/pin"))
        // One photo made (a 1600x1200 plasma costs ImageMagick about a second), then 39 copies
        // told apart by bytes after its end marker, which decoders ignore: 40 distinct photos
        // whose import keeps a helper busy long enough to be seen.
        let first = cli.root + "/p0.jpg"
        try PhotoFixtures.run(cli, "convert", ["-size", "1600x1200", "plasma:fractal", "-quality", "90", first])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: first))
        var photos = [first]
        for i in 1..<40 {
            let path = cli.root + "/p\(i).jpg"
            try (bytes + Data("copy \(i)".utf8)).write(to: URL(fileURLWithPath: path))
            photos.append(path)
        }
        let p = try cli.underTerminal("exec \(CLI.binary) import \(photos.joined(separator: " ")) --pin-fd 3 3<\(cli.root)/pin",
                                  environment: ["SECRET_LOOKING_VARIABLE": "must-not-reach-the-helper"])
        defer { finish(p) }
        var seen: (fds: [String], stat: String, parentStat: String, environ: Data)?
        for _ in 0..<1200 where seen == nil && p.isRunning {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
                guard let comm = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8), comm.hasPrefix("nu11vlt-image"),
                      let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")"), let ppid = stat[stat.index(after: close)...].split(separator: " ").dropFirst().first,
                      let parent = FileManager.default.contents(atPath: "/proc/\(ppid)/cmdline"),
                      String(decoding: parent, as: UTF8.self).contains(cli.root),
                      // Once locked down (after libvips's start, which opens its modules).
                      let status = try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8),
                      status.contains("\nSeccomp:\t2"),
                      let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(entry)/fd"),
                      let parentStat = try? String(contentsOfFile: "/proc/\(ppid)/stat", encoding: .utf8) else { continue }
                seen = (fds.sorted(), stat, parentStat, FileManager.default.contents(atPath: "/proc/\(entry)/environ") ?? Data([1]))
            }
            if seen == nil { Thread.sleep(forTimeInterval: 0.01) }
        }
        let found = try #require(seen, "the image helper was never seen running")
        #expect(found.fds == ["0", "1", "2"], "the helper inherited descriptors: \(found.fds)")
        #expect(Self.tty(found.parentStat) != 0, "nu11vlt itself had no terminal: the test proves nothing")
        #expect(Self.tty(found.stat) == 0, "the helper has a controlling terminal: \(found.stat)")
        #expect(found.environ.isEmpty, "the helper's environment is not empty: \(String(decoding: found.environ, as: UTF8.self))")
    }

    @Test("nu11vlt reaps every image helper it started before it exits (none outlives it; their CPU counts as its own)")
    func helpersReaped() throws {
        let cli = try CLI()
        try cli.initVault()
        let photo = cli.root + "/p.jpg"
        try PhotoFixtures.run(cli, "convert", ["-size", "640x480", "plasma:fractal", "-quality", "85", photo])
        let log = cli.root + "/trace"
        let r = try cli.spawn("/usr/bin/strace", ["-f", "-qq", "-e", "trace=execve,wait4,waitid", "-o", log, CLI.binary, "import", "--pin-stdin", photo],
                              input: Data((cli.pin + "\n").utf8))
        #expect(r.code == 0, "\(r.stderr)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let helpers = Set(lines.filter { $0.contains("execve(") && $0.contains("nu11vlt-image-helper\"") && $0.hasSuffix("= 0") }
            .compactMap { Int($0.split(separator: " ").first ?? "") })
        #expect(!helpers.isEmpty, "no image helper was started: the test proves nothing")
        let reaped = Set(lines.filter { $0.contains("wait4(") || $0.contains("waitid(") }
            .compactMap { line in line.split(separator: "=").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } })
        #expect(helpers.isSubset(of: reaped), "helpers never waited for: \(helpers.subtracting(reaped).sorted())")
    }
}
