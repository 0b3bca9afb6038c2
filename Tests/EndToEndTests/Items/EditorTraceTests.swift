// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The editor forgets the note: vim (the default `vi` on Debian) run for real in tmux, with
/// EDITOR and VISUAL unset, leaves no trace of the note's text in $HOME (no .viminfo
/// registers, no swap, backup or undo file).
@Suite("Editors forget")
struct EditorTraceTests {
    @Test("note add with EDITOR unset runs vi (vim) in tmux: afterwards nothing under $HOME holds the note's text")
    func vimLeavesNothing() throws {
        try #require(PhotoFixtures.tool("vi") != nil, "vi (vim) is not installed (scripts/ensure-deps.sh installs it)")
        let cli = try CLI()
        try cli.initVault()
        let home = cli.root + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try Data((cli.pin + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/pin"))
        let marker = "N11VIMMARKER" + String(Int.random(in: 100_000...999_999))
        let env = "env -u EDITOR -u VISUAL HOME=\(home) NU11VLT_VAULT=\(cli.vault) NU11VLT_KEYSTORE=\(cli.keystore) XDG_RUNTIME_DIR=\(cli.root)/run TERM=xterm"
        let session = try TmuxSession(cli, command: "\(env) \(CLI.binary) note add --title t --pin-fd 3 3<\(cli.root)/pin; echo done-$?; sleep 30",
                                      width: 100)
        let shown = try session.screen { $0.contains("~") }
        #expect(shown.contains("~"), "vim did not start: \(shown)")
        // Ctrl-O runs one command from insert mode: no Escape, so no key can be read as Alt-: by
        // the terminal's escape timeout, and the keys need no pauses between them.
        for keys in [["i"], ["-l", marker], ["C-o"], ["-l", ":wq"], ["Enter"]] {
            try session.send(keys)
        }
        let last = try session.screen { $0.contains("done-") }
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
