// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation

/// `--quiet`: no progress line (it is never shown when stderr is not a terminal anyway).
struct QuietOption: ParsableArguments {
    @Flag(name: [.short, .long], help: "No progress line.") var quiet = false
}

/// One progress line on stderr, redrawn in place (restic's style): what, items done, bytes
/// done, rate, ETA. Only on a terminal; at most ten redraws a second; a notice printed
/// meanwhile clears the line first (`Output.note`), so nothing glues onto it.
final class ProgressLine {
    nonisolated(unsafe) static var active: ProgressLine?

    let verb: String
    let totalItems: Int
    let totalBytes: UInt64?
    let enabled: Bool
    private let started = Date()
    private var lastDraw = Date.distantPast
    private var items = 0
    private var bytes: UInt64 = 0

    init(_ verb: String, items: Int, bytes: UInt64? = nil, quiet: Bool) {
        self.verb = verb
        totalItems = items
        totalBytes = bytes
        enabled = Self.shown(quiet: quiet)
        if enabled { Self.active = self }
    }

    /// Whether a line would be shown: on a terminal, without --quiet.
    static func shown(quiet: Bool) -> Bool { !quiet && Output.stderrIsTerminal }

    func update(items: Int? = nil, bytes: UInt64? = nil) {
        guard enabled else { return }
        if let items { self.items = items }
        if let bytes { self.bytes = bytes }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = now
        draw()
    }

    func draw() {
        guard enabled else { return }
        Output.stderr("\r\u{1B}[K" + text(elapsed: Date().timeIntervalSince(started)))
    }

    /// The line itself, e.g. "importing 12/200 items, 45.2 MiB of 301 MiB, 38.1 MiB/s, ETA 0:07".
    func text(elapsed: Double) -> String {
        var parts = ["\(verb) \(items)/\(totalItems) item\(totalItems == 1 ? "" : "s")"]
        var fraction = totalItems > 0 ? Double(items) / Double(totalItems) : 0
        if let totalBytes, totalBytes > 0 {
            parts.append("\(Output.size(bytes)) of \(Output.size(totalBytes))")
            fraction = Double(bytes) / Double(totalBytes)
            if elapsed > 0.2 { parts.append("\(Output.size(UInt64(Double(bytes) / elapsed)))/s") }
        }
        if fraction > 0.01 && fraction < 1 && elapsed > 0.5 {
            let left = Int((elapsed / fraction - elapsed).rounded())
            parts.append(String(format: "ETA %d:%02d", left / 60, left % 60))
        }
        return parts.joined(separator: ", ")
    }

    /// Clears the line for good.
    func finish() {
        guard enabled else { return }
        Output.stderr("\r\u{1B}[K")
        if Self.active === self { Self.active = nil }
    }

    /// Clears the line before a notice; the next update draws it again.
    static func clearForNotice() {
        guard let active, active.enabled else { return }
        Output.stderr("\r\u{1B}[K")
        active.lastDraw = .distantPast
    }
}
