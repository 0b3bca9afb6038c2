// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// A detached tmux session running one shell command: a real terminal that a test reads
/// (`screen`) and types into (`send`).
final class TmuxSession {
    let cli: CLI
    let tmux: String
    let name: String

    init(_ cli: CLI, command: String, width: Int = 120, height: Int = 30) throws {
        self.cli = cli
        tmux = try #require(PhotoFixtures.tool("tmux"), "tmux is not installed (scripts/ensure-deps.sh installs it)")
        name = "n11-\(getpid())-\(Int.random(in: 0...999_999))"
        // The tmux server outlives the command: every inherited descriptor is closed first
        // (the harness's pipes may sit above 2), or its output would hold them open.
        let started = try cli.spawn("/bin/bash", ["-c", """
            for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"; done
            exec "$0" -L "$1" new-session -d -s "$1" -x \(width) -y \(height) "$2" </dev/null >/dev/null 2>&1
            """, tmux, name, command])
        #expect(started.code == 0, "tmux: \(started.stderr)")
    }

    func screen() throws -> String { try cli.spawn(tmux, ["-L", name, "capture-pane", "-p", "-t", name]).out }

    func send(_ keys: [String]) throws { _ = try cli.spawn(tmux, ["-L", name, "send-keys", "-t", name] + keys) }

    /// The screen once `done` holds for it, or after `seconds` (the last screen then).
    func screen(until done: (String) -> Bool, seconds: Double = 10) throws -> String {
        var shown = try screen()
        for _ in 0..<Int(seconds * 10) where !done(shown) {
            usleep(100_000)
            shown = try screen()
        }
        return shown
    }

    deinit { _ = try? cli.spawn(tmux, ["-L", name, "kill-server"]) }
}

extension CLI {
    /// Starts `command` under a pseudo-terminal (`script`); returns the running process.
    func underTerminal(_ command: String, environment extra: [String: String] = [:]) throws -> Process {
        let process = try Program.start("/usr/bin/script", ["-qec", command, "/dev/null"], environment: environment.merging(extra) { $1 }, stdin: Pipe())
        return process
    }
}
