// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A slow harness that `make test` starts in the background beside the suite (the GUI test,
/// the package test): it writes .build/NAME.started when it starts, then .build/NAME.log and
/// .build/NAME.rc when it ends. Its Swift test waits for the result and consumes it, so a later
/// `swift test` runs the harness afresh.
///
/// The wait is `async` (`Task.sleep`): Swift Testing runs tests on the cooperative pool, one
/// thread per core, and a test blocked in `Thread.sleep` for the harness's minutes would hold
/// one of this machine's two threads, so half the suite would wait with it.
struct BackgroundHarness {
    let name: String

    /// The harness's (exit code, log), or nil when make did not start it (within the hour).
    func result(waitingAtMost minutes: Double = 15) async throws -> (Int32, String)? {
        let build = GUITests.repo + "/.build/"
        let started = build + name + ".started"
        guard let text = try? String(contentsOfFile: started, encoding: .utf8),
              let since = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)),
              Date().timeIntervalSince1970 - since < 3600 else { return nil }
        // Consumed: a later run starts its own (a file already gone is fine).
        defer { for file in [name + ".started", name + ".rc"] { try? FileManager.default.removeItem(atPath: build + file) } }
        let deadline = Date().addingTimeInterval(minutes * 60)
        while !FileManager.default.fileExists(atPath: build + name + ".rc") {
            guard Date() < deadline else { return (-1, "\(name), started by make, gave no result in \(Int(minutes)) minutes") }
            try await Task.sleep(nanoseconds: 1_000_000_000)
        }
        let rc = Int32((try String(contentsOfFile: build + name + ".rc", encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        return (rc, (try? String(contentsOfFile: build + name + ".log", encoding: .utf8)) ?? "")
    }
}
