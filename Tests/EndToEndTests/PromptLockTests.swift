import Foundation
import Testing

/// A command left at its PIN prompt holds no lock: a `sweep` timer and another command (the
/// desktop app's operations take the same lock) go on beside it; the waiting command still
/// works when the PIN finally comes.
@Suite("Nothing waits behind a prompt")
struct PromptLockTests {
    @Test("import waits at its PIN prompt in tmux; sweep and list beside it finish at once; then the PIN is typed and the import completes")
    func promptHoldsNoLock() throws {
        let tmux = try #require(PhotoFixtures.tool("tmux"), "tmux is not installed (scripts/ensure-deps.sh installs it)")
        let cli = try CLI()
        try cli.initVault()
        let file = cli.file("waiting.txt", Array("typed later".utf8))
        let session = "n11lock-\(getpid())-\(Int.random(in: 0...99999))"
        let socket = ["-L", session]
        let env = "NU11VLT_VAULT=\(cli.vault) NU11VLT_KEYSTORE=\(cli.keystore)"
        let command = "env \(env) \(CLI.binary) import \(file); echo done-$?; sleep 30"
        let started = try cli.spawn("/bin/bash", ["-c", """
            for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"; done
            exec "$0" -L "$1" new-session -d -s "$1" -x 120 -y 30 "$2" </dev/null >/dev/null 2>&1
            """, tmux, session, command])
        #expect(started.code == 0, "\(started.stderr)")
        defer { _ = try? cli.spawn(tmux, socket + ["kill-server"]) }
        func screen() throws -> String { try cli.spawn(tmux, socket + ["capture-pane", "-p", "-t", session]).out }
        var shown = ""
        for _ in 0..<100 where !shown.contains("PIN") {
            usleep(100_000)
            shown = try screen()
        }
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
        _ = try cli.spawn(tmux, socket + ["send-keys", "-t", session, cli.pin, "Enter"])
        for _ in 0..<150 where !shown.contains("done-") {
            usleep(100_000)
            shown = try screen()
        }
        #expect(shown.contains("done-0"), "the import did not finish after the PIN: \(shown)")
        #expect(try cli.listJSON().contains { $0["name"] as? String == "waiting.txt" })
    }
}
