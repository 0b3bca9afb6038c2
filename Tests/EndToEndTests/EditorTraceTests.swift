import Foundation
import Testing

/// The editor forgets the note: vim (the default `vi` on Debian) run for real in tmux, with
/// EDITOR and VISUAL unset, leaves no trace of the note's text in $HOME (no .viminfo
/// registers, no swap, backup or undo file).
@Suite("Editors forget")
struct EditorTraceTests {
    @Test("note add with EDITOR unset runs vi (vim) in tmux: afterwards nothing under $HOME holds the note's text")
    func vimLeavesNothing() throws {
        let tmux = try #require(PhotoFixtures.tool("tmux"), "tmux is not installed (scripts/ensure-deps.sh installs it)")
        try #require(PhotoFixtures.tool("vi") != nil, "vi (vim) is not installed (scripts/ensure-deps.sh installs it)")
        let cli = try CLI()
        try cli.initVault()
        let home = cli.root + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try Data((cli.pin + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/pin"))
        let marker = "N11VIMMARKER" + String(Int.random(in: 100_000...999_999))
        let session = "n11vim-\(getpid())-\(Int.random(in: 0...99999))"
        let socket = ["-L", session]
        let env = "env -u EDITOR -u VISUAL HOME=\(home) NU11VLT_VAULT=\(cli.vault) NU11VLT_KEYSTORE=\(cli.keystore) XDG_RUNTIME_DIR=\(cli.root)/run TERM=xterm"
        let command = "\(env) \(CLI.binary) note add --title t --pin-fd 3 3<\(cli.root)/pin; echo done-$?; sleep 30"
        let started = try cli.spawn("/bin/bash", ["-c", """
            for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"; done
            exec "$0" -L "$1" new-session -d -s "$1" -x 100 -y 30 "$2" </dev/null >/dev/null 2>&1
            """, tmux, session, command])
        #expect(started.code == 0, "\(started.stderr)")
        defer { _ = try? cli.spawn(tmux, socket + ["kill-server"]) }
        func screen() throws -> String { try cli.spawn(tmux, socket + ["capture-pane", "-p", "-t", session]).out }
        var shown = ""
        for _ in 0..<100 where !shown.contains("~") {
            usleep(100_000)
            shown = try screen()
        }
        #expect(shown.contains("~"), "vim did not start: \(shown)")
        for keys in [["i"], ["-l", marker], ["Escape"], ["-l", ":wq"], ["Enter"]] {
            _ = try cli.spawn(tmux, socket + ["send-keys", "-t", session] + keys)
            usleep(200_000)
        }
        var last = ""
        for _ in 0..<100 where !last.contains("done-") {
            usleep(100_000)
            last = try screen()
        }
        #expect(last.contains("done-0"), "note add did not finish: \(last)")
        let id = String(try #require(last.firstMatch(of: /[0-9a-f]{32}/)?.0, "no note ID on screen: \(last)"))
        #expect(try cli.run(["note", "show", id], pinStdin: true).out.contains(marker), "the note was not saved: \(last)")
        let r = try cli.spawn("/bin/grep", ["-rlsaF", marker, home, cli.root + "/run"])
        #expect(r.out.isEmpty, "the editor left the note's text behind: \(r.out)")
        let left = (FileManager.default.enumerator(atPath: home)?.allObjects as? [String]) ?? []
        #expect(!left.contains { $0.hasSuffix(".viminfo") || $0.hasSuffix(".swp") || $0.hasSuffix("~") || $0.contains(".un~") },
                "vim's files: \(left)")
    }
}
