// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Editors and viewers at a real terminal (a pty from `script`): they run in the terminal's
/// foreground, and the plaintext they get is removed on every exit path.
@Suite("editor and viewer at a terminal")
struct TerminalTests {
    /// Writes an executable shell script into the test's folder.
    func script(_ cli: CLI, _ name: String, _ body: String) throws -> String {
        let path = cli.root + "/" + name
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(chmod(path, 0o755) == 0)
        return path
    }

    func wait(_ process: Process, seconds: Double = 20) {
        for _ in 0..<Int(seconds * 20) where process.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    func spool(_ cli: CLI) -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: cli.root + "/run/nu11vlt")) ?? [] }

    @Test("note add runs $EDITOR on the terminal, in a session of its own (it can use the terminal but not inject into it)")
    func editorInForeground() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "script (bsdutils) is missing")
        let cli = try CLI()
        try cli.initVault()
        try Data((cli.pin + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/pin"))
        // A terminal editor reads and writes the terminal on 0, 1 and 2 (never stopped by
        // SIGTTIN/SIGTTOU), but the terminal is not its controlling one (no TIOCSTI).
        let editor = try script(cli, "editor.sh", """
            if [ -t 0 ] && [ "$(ps -o tty= -p $$ | tr -d ' ')" = "?" ]; then echo on-terminal-detached > "$1"; else echo wrong > "$1"; fi
            """)
        let run = try script(cli, "run.sh", "exec \"$BIN\" note add --title fg --pin-fd 3 3<\"$ROOT/pin\" > \"$ROOT/id\"")
        let p = try cli.underTerminal(run, environment: ["EDITOR": editor, "BIN": CLI.binary, "ROOT": cli.root])
        wait(p)
        #expect(p.terminationStatus == 0, "note add at a terminal failed")
        let id = try String(contentsOfFile: cli.root + "/id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli.run(["note", "show", id], pinStdin: true).out == "on-terminal-detached\n")
        #expect(spool(cli).isEmpty)
    }

    @Test("SIGHUP, SIGTERM or Ctrl-C while the editor or viewer runs leaves no plaintext behind")
    func signalsLeaveNothing() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "script (bsdutils) is missing")
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("p.jpg", Array("photo bytes".utf8))])[0]
        let noteID = try cli.runPinFD(["note", "add", "--title", "n"], stdin: Data("secret note".utf8)).out
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try Data((cli.pin + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/pin"))
        // The editor or viewer records its file, then waits.
        let waiter = try script(cli, "wait.sh", "echo \"$1\" > \"$ROOT/seen\"; sleep 30")
        try FileManager.default.createDirectory(atPath: cli.root + "/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: waiter, toPath: cli.root + "/bin/xdg-open")
        let cases: [(String, String, Int32)] = [
            ("note edit \(noteID)", "edit", SIGHUP), ("note edit \(noteID)", "edit", SIGTERM),
            ("view --no-inline \(id)", "view", SIGTERM), ("view --no-inline \(id)", "view", SIGINT),
        ]
        for (command, tag, signal) in cases {
            try? FileManager.default.removeItem(atPath: cli.root + "/seen")
            let run = try script(cli, "run-\(tag).sh", "exec \"$BIN\" \(command) --pin-fd 3 3<\"$ROOT/pin\"")
            let p = try cli.underTerminal(run, environment: ["EDITOR": waiter, "BIN": CLI.binary, "ROOT": cli.root,
                                                              "PATH": cli.root + "/bin:/usr/bin:/bin"])
            var seen = ""
            for _ in 0..<200 where seen.isEmpty {
                seen = (try? String(contentsOfFile: cli.root + "/seen", encoding: .utf8)) ?? ""
                if seen.isEmpty { Thread.sleep(forTimeInterval: 0.05) }
            }
            let file = seen.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(file.hasPrefix(cli.root + "/run/nu11vlt/") && FileManager.default.fileExists(atPath: file), "\(command): \(seen)")
            // Ctrl-C goes to the terminal's whole foreground group; the other signals to nu11vlt.
            let pids = try cli.spawn("/usr/bin/pgrep", ["-f", "\(CLI.binary) \(command)"]).out.split(separator: "\n").compactMap { Int32($0) }
            #expect(pids.count == 1, "\(command): pids \(pids)")
            for pid in pids {
                let group = getpgid(pid)
                #expect(group > 0 && group != getpgrp(), "nu11vlt is not in a terminal group of its own")
                if signal == SIGINT && group > 0 && group != getpgrp() { kill(-group, SIGINT) } else { kill(pid, signal) }
            }
            wait(p)
            #expect(!FileManager.default.fileExists(atPath: file), "\(command) + signal \(signal): plaintext left at \(file)")
            #expect(spool(cli).isEmpty, "\(command) + signal \(signal): \(spool(cli))")
            _ = try cli.spawn("/usr/bin/pkill", ["-f", cli.root + "/wait.sh"])
        }
        #expect(try cli.run(["note", "show", noteID], pinStdin: true).out == "secret note")
    }
}
