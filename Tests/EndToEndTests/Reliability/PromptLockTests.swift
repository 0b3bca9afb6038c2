// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// A command left at its PIN prompt holds no lock: a `sweep` timer and another command (the
/// desktop app's operations take the same lock) go on beside it; the waiting command still
/// works when the PIN finally comes.
@Suite("Nothing waits behind a prompt")
struct PromptLockTests {
    @Test("import waits at its PIN prompt in tmux; sweep and list beside it finish at once; then the PIN is typed and the import completes")
    func promptHoldsNoLock() throws {
        let cli = try CLI()
        try cli.initVault()
        let file = cli.file("waiting.txt", Array("typed later".utf8))
        let env = "NU11VLT_VAULT=\(cli.vault) NU11VLT_KEYSTORE=\(cli.keystore)"
        let session = try TmuxSession(cli, command: "env \(env) \(CLI.binary) import \(file); echo done-$?; sleep 30")
        var shown = try session.screen { $0.contains("PIN") }
        try #require(shown.contains("PIN or passphrase"), "no prompt: \(shown)")
        for args in [["sweep"], ["list"]] {
            let start = Date()
            // Under `timeout`: behind a held lock they would wait for good.
            let r = try cli.spawn("/usr/bin/timeout", ["20", CLI.binary] + args + (args == ["list"] ? ["--pin-stdin"] : []),
                                  input: Data((cli.pin + "\n").utf8))
            let seconds = Date().timeIntervalSince(start)
            #expect(r.code == 0, "\(args) beside a prompt: \(r.stderr)")
            #expect(!r.stderr.contains("waiting for another nu11vlt"), "\(args) waited behind the prompt: \(r.stderr)")
            #expect(seconds < 20, "\(args) took \(seconds) s beside a prompt")
        }
        try session.send([cli.pin, "Enter"])
        shown = try session.screen(until: { $0.contains("done-") }, seconds: 15)
        #expect(shown.contains("done-0"), "the import did not finish after the PIN: \(shown)")
        #expect(try cli.listJSON().contains { $0["name"] as? String == "waiting.txt" })
    }
}
