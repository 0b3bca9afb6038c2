// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// The clock policy (docs/THREAT-MODEL.md, "Time"), under faketime both ways. Plain
/// faketime also fakes the boot clock (CLOCK_BOOTTIME), which nu11vlt then ignores and
/// falls back to the wall-clock rule; FAKETIME_DONT_FAKE_MONOTONIC=1 leaves the boot clock
/// alone, as a real clock change does.
@Suite("clock anomalies never destroy data or lock anyone out longer than said")
struct ClockTests {
    static let faketime = "/usr/bin/faketime"

    func at(_ cli: CLI, _ offset: String, _ args: [String], pin: String? = nil, realBootClock: Bool = false) throws -> CLI.Outcome {
        try cli.spawn(Self.faketime, ["-f", offset, CLI.binary] + args + (pin == nil ? [] : ["--pin-stdin"]),
                      input: Data(((pin ?? "") + "\n").utf8),
                      environment: realBootClock ? ["FAKETIME_DONT_FAKE_MONOTONIC": "1"] : [:])
    }

    @Test("clock set back a day: nothing is destroyed, a warning says so, and the PIN delay lasts what its message says")
    func setBack() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.faketime), "faketime is not installed (make test installs it)")
        let cli = try CLI()
        try cli.initVault()
        let keep = try cli.importIDs([cli.file("keep.jpg", [5])])[0]
        let fade = try cli.importIDs([cli.file("fade.jpg", [6])], extra: ["--fade", "1h"])[0]
        let back = try at(cli, "-1d", ["list"], pin: cli.pin)
        #expect(back.code == 0, "\(back.stderr)")
        #expect(back.stderr.contains("behind the latest time"), "no warning: \(back.stderr)")
        #expect(back.out.contains(keep) && back.out.contains(fade), "an item was lost to a clock set back: \(back.out)")
        #expect(cli.hasKeyRecord(fade))
        // Five wrong PINs under the clock set back: locked, and the message says one minute…
        for _ in 0..<5 { _ = try at(cli, "-1d", ["list"], pin: "nope") }
        let locked = try at(cli, "-1d", ["list"], pin: cli.pin)
        expectCleanError(locked, code: 6, mentions: "seconds")
        // …and a minute later it opens: the delay is not stretched by the clock anomaly.
        let later = try at(cli, "+70s", ["list"], pin: cli.pin)
        #expect(later.code == 0 && later.out.contains(fade), "\(later.stderr)")
    }

    @Test("a forward excursion followed by the right time: the Skeleton Switch does not fire and wrong PINs wait only the minute said")
    func forwardThenBack() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.faketime), "faketime is not installed (make test installs it)")
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("a.jpg", [1, 2, 3])])[0]
        #expect(try cli.run(["skeleton", "enable", "--interval", "7d"], pinStdin: true).code == 0)
        let ahead = try at(cli, "+2d", ["status"])
        #expect(ahead.code == 0, "\(ahead.stderr)")
        for _ in 0..<5 { _ = try at(cli, "+2d", ["list"], pin: "nope") }
        // Back at the right time: read before as "the clock was set back", which fired the switch.
        let back = try cli.run(["skeleton", "status"])
        #expect(back.code == 0 && back.out.contains("armed"), "\(back.out) \(back.stderr)")
        #expect(!back.stderr.contains("fired") && cli.exists(cli.keystore + "/master.n11k"))
        // The delay runs in real time from here (VaultClockTests measure it with a test clock).
        let locked = try cli.run(["list"], pinStdin: true)
        expectCleanError(locked, code: 6, mentions: "seconds")
        #expect(cli.hasKeyRecord(id))
    }

    @Test("within one boot the wall clock is ignored: jumping it forward fades nothing and does not fire the switch")
    func sameBoot() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.faketime), "faketime is not installed (make test installs it)")
        let cli = try CLI()
        try cli.initVault()
        let fade = try cli.importIDs([cli.file("f.jpg", [9])], extra: ["--fade", "1h"])[0]
        #expect(try cli.run(["skeleton", "enable", "--interval", "1d"], pinStdin: true).code == 0)
        let jumped = try at(cli, "+3d", ["list"], pin: cli.pin, realBootClock: true)
        #expect(jumped.code == 0 && jumped.out.contains(fade), "\(jumped.stderr)")
        #expect(cli.hasKeyRecord(fade) && cli.exists(cli.keystore + "/master.n11k"))
        let status = try at(cli, "+3d", ["skeleton", "status", "--json"], realBootClock: true)
        let left = (try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])?["secondsLeft"] as? Int
        #expect((left ?? 0) > 86_000, "time left \(String(describing: left)) after a wall-clock jump")
    }
}
