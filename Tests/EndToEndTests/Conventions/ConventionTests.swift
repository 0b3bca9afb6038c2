// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 17 (part): discovery and safety rails.
@Suite("CLI conventions")
struct ConventionTests {
    @Test("a mistyped command gets “did you mean”, `help nosuch` fails with 64, and neither asks for a PIN")
    func discovery() throws {
        let cli = try CLI()
        for (args, mentions) in [(["imprt", "x.jpg"], "did you mean `import`?"), (["lst"], "did you mean `list`?"),
                                 (["help", "nosuch"], "unknown help topic 'nosuch'"), (["zzzzzz"], "nu11vlt help")] {
            let r = try cli.run(args)
            expectCleanError(r, code: 64, mentions: mentions)
            #expect(!r.stderr.contains("PIN"))
        }
        #expect(try cli.run(["help", "import"]).code == 0)
    }

    @Test("export refuses a terminal, a missing folder and an existing file before the PIN prompt; into a folder it never replaces")
    func exportRails() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("a.bin", [1, 2, 3])])[0]
        // No PIN on stdin: each refusal must come before the prompt.
        expectCleanError(try cli.run(["export", id, "-o", cli.root + "/missing/a.bin"]), code: 64, mentions: "does not exist")
        expectCleanError(try cli.run(["export", id, "-o", cli.root + "/a.bin"]), code: 64, mentions: "--force")
        // A terminal on stdout (script(1) gives it a pty).
        let script = try #require(PhotoFixtures.tool("script"))
        let tty = try cli.spawn(script, ["-qec", "\(CLI.binary) export \(id) -o -", "/dev/null"])
        #expect(tty.code == 64 && tty.out.contains("refusing to write"), "export to a terminal: \(tty.out)")
        #expect(try cli.run(["export", id, "-o", cli.root + "/a.bin", "--force"], pinStdin: true).code == 0)
        // -o a folder: the item goes into it under its name, and a file of that name stays as it is.
        try Data([9]).write(to: URL(fileURLWithPath: cli.root + "/a.bin"))
        #expect(try cli.run(["export", id, "-o", cli.root], pinStdin: true).code == 0)
        #expect(FileManager.default.contents(atPath: cli.root + "/a.bin") == Data([9]))
        #expect(FileManager.default.contents(atPath: cli.root + "/a (2).bin") == Data([1, 2, 3]))
    }

    @Test("`fade set ID off` makes a fade item permanent again; a permanent item has nothing to cancel")
    func fadeOff() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("f.bin", [9, 9])], extra: ["--fade", "1h"])[0]
        let r = try cli.run(["fade", "set", id, "off"], pinStdin: true)
        #expect(r.code == 0, "fade set off: \(r.stderr)")
        let items = try cli.listJSON()
        #expect(items.count == 1 && items[0]["fadesAt"] is NSNull && items[0]["domain"] as? String == "vault", "\(items)")
        let kept = try #require(items[0]["id"] as? String)
        #expect(try cli.run(["export", kept, "-o", "-"], pinStdin: true).stdout == Data([9, 9]))
        expectCleanError(try cli.run(["fade", "set", kept, "off"], pinStdin: true), code: 64, mentions: "does not fade")
        #expect(try cli.run(["check"], pinStdin: true).code == 0)
    }

    @Test("-r skips .DS_Store, Thumbs.db and .thumbnails folders and says what it skipped")
    func recursiveSkips() throws {
        let cli = try CLI()
        try cli.initVault()
        let dir = cli.root + "/camera"
        try FileManager.default.createDirectory(atPath: dir + "/.thumbnails", withIntermediateDirectories: true)
        _ = cli.file("camera/IMG_1.jpg", [1])
        _ = cli.file("camera/.DS_Store", [2])
        _ = cli.file("camera/Thumbs.db", [3])
        _ = cli.file("camera/.thumbnails/IMG_1.png", [4])
        let r = try cli.run(["import", "-r", dir], pinStdin: true)
        #expect(r.code == 0)
        #expect(r.stderr.contains("skipped 3 system file(s)"), "\(r.stderr)")
        #expect(try cli.listJSON().compactMap { $0["name"] as? String } == ["IMG_1.jpg"])
    }

    @Test("completion scripts load in bash and fish, complete commands, and complete paths for import, -o and --vault")
    func completions() throws {
        let cli = try CLI()
        for shell in ["bash", "zsh", "fish"] {
            let r = try cli.run(["--generate-completion-script", shell])
            #expect(r.code == 0 && r.out.count > 1000, "\(shell) completion: \(r.stderr)")
            try r.stdout.write(to: URL(fileURLWithPath: cli.root + "/c.\(shell)"))
        }
        let bash = try cli.spawn("/bin/bash", ["-c", "source \(cli.root)/c.bash && complete -p nu11vlt && declare -f _nu11vlt_import"])
        #expect(bash.code == 0 && bash.out.contains("-F _nu11vlt nu11vlt"), "bash: \(bash.out) \(bash.stderr)")
        #expect(bash.out.contains("__nu11vlt_add_completions -f"), "import does not complete file paths: \(bash.out)")
        let fishPath = try #require(PhotoFixtures.tool("fish"), "fish is not installed (scripts/ensure-deps.sh installs it)")
        _ = cli.file("holiday.jpg", [1])
        let fish = try cli.spawn(fishPath, ["-c", "source \(cli.root)/c.fish; complete -C 'nu11vlt imp'; complete -C 'nu11vlt import holi'; complete -C 'nu11vlt export -o holi'"])
        #expect(fish.code == 0 && fish.out.contains("import\t"), "fish: \(fish.out) \(fish.stderr)")
        #expect(fish.out.components(separatedBy: "holiday.jpg").count - 1 == 2, "fish does not complete paths: \(fish.out)")
    }

    @Test("the man page generated from the command definitions (make test and make install make it) renders with man -l")
    func manPage() throws {
        let root = Repo.root
        let page = root.appendingPathComponent(".build/plugins/GenerateManual/outputs/nu11vlt/nu11vlt.1").path
        try #require(FileManager.default.fileExists(atPath: page), "no generated man page at \(page): run the tests with `make test`")
        let cli = try CLI()
        let r = try cli.spawn("/bin/sh", ["-c", "MANWIDTH=100 MANPAGER=cat man -l \"$0\"", page])
        #expect(r.code == 0, "man -l failed: \(r.stderr)")
        let text = r.out.replacingOccurrences(of: ".\u{8}", with: "", options: .regularExpression)
        let version = try String(contentsOfFile: root.path + "/VERSION", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        for part in ["NAME", "SYNOPSIS", "nu11vlt", "import", "rekey", "log", "--json", "Nu11VLT \(version)"] {
            #expect(text.contains(part), "the rendered page lacks \(part)")
        }
        // The app's own page (written by hand) renders without warnings.
        let app = try cli.spawn("/bin/sh", ["-c", "MANWIDTH=100 MANPAGER=cat man --warnings -l \"$0\" 2>&1 >/dev/null", root.path + "/data/man/nu11vlt-app.1"])
        #expect(app.code == 0 && app.out.isEmpty, "man -l nu11vlt-app.1: \(app.out)")
    }

    @Test("error messages: a non-archive, empty stdin, --name without -")
    func messages() throws {
        let cli = try CLI()
        try cli.initVault()
        let photo = cli.file("photo.jpg", [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3])
        expectCleanError(try cli.run(["archive", "inspect", photo]), code: 64, mentions: "is not a Nu11VLT archive")
        let empty = try cli.runPinFD(["import", "--name", "x.txt", "-"], stdin: Data())
        expectCleanError(empty, code: 64, mentions: "standard input was empty")
        #expect(try cli.listJSON().isEmpty, "an empty item was stored")
        expectCleanError(try cli.run(["import", "--name", "other.jpg", photo], pinStdin: true), code: 64, mentions: "--name")
        #expect(try cli.listJSON().isEmpty)
    }

    @Test("progress: one redrawn line on a terminal (items, bytes), cleared before a warning; nothing with --quiet or off a terminal")
    func progress() throws {
        let cli = try CLI()
        try cli.initVault()
        let files = (0..<3).map { cli.file("p\($0).bin", [UInt8](repeating: UInt8($0), count: 3 << 20)) } + [cli.file("fake.jpg", [1, 2])]
        try Data((cli.pin + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/pin"))
        let script = try #require(PhotoFixtures.tool("script"))
        func onTerminal(_ extra: String) throws -> String {
            let command = "\(CLI.binary) import --pin-fd 3 \(extra) \(files.joined(separator: " ")) 3<\(cli.root)/pin"
            let r = try cli.spawn(script, ["-qec", command, "/dev/null"])
            #expect(r.code == 0, "\(r.out)")
            return r.out
        }
        let shown = try onTerminal("")
        #expect(shown.contains("\r\u{1B}[Kimporting "), "no progress line: \(shown.debugDescription)")
        #expect(shown.contains("of 9.0 MiB"), "no byte counts: \(shown.debugDescription)")
        #expect(shown.contains("\r\u{1B}[Knu11vlt: warning: fake.jpg"), "the warning glued onto the progress line: \(shown.debugDescription)")
        let quiet = try onTerminal("--quiet")
        #expect(!quiet.contains("importing "), "--quiet still drew progress")
        let piped = try cli.run(["import"] + files, pinStdin: true)
        #expect(piped.code == 0 && !piped.stderr.contains("importing") && !piped.stderr.contains("\r"), "progress off a terminal: \(piped.stderr)")
    }

    @Test("a file that vanishes mid-import is reported, the rest is imported, and the exit says how many")
    func vanished() throws {
        let cli = try CLI()
        try cli.initVault()
        let files = (0..<3).map { cli.file("v\($0).bin", [UInt8($0)]) }
        // nu11vlt checks the paths, then waits for the PIN on stdin: the file goes meanwhile.
        let input = Pipe(), errors = Pipe()
        let process = try Program.start(CLI.binary, ["import", "--pin-stdin"] + files, environment: cli.environment, stdin: input, stderr: errors)
        #expect(Wait.untilReading(process.processIdentifier, fd: 0, executable: CLI.binary), "nu11vlt never waited for the PIN")
        try FileManager.default.removeItem(atPath: files[1])
        input.fileHandleForWriting.write(Data((cli.pin + "\n").utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 4, "exit \(process.terminationStatus): \(stderr)")
        #expect(stderr.contains("v1.bin vanished before it was imported") && stderr.contains("1 of 3 file(s) vanished"), "\(stderr)")
        #expect(try cli.listJSON().compactMap { $0["name"] as? String }.sorted() == ["v0.bin", "v2.bin"])
        #expect(try cli.run(["check"], pinStdin: true).code == 0)
    }

    @Test("skeleton status gives the time left as a person reads it")
    func skeletonDuration() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["skeleton", "enable", "--interval", "7d"], pinStdin: true).code == 0)
        let r = try cli.run(["skeleton", "status"])
        #expect(r.code == 0)
        #expect(r.out.range(of: #"time left: (6d 23h 59m|7d 0h 0m) \(until \d{4}-\d\d-\d\d \d\d:\d\d\)"#, options: .regularExpression) != nil,
                "\(r.out)")
    }
}
