// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation

/// A capture date on the command line (`--taken-from`, `--taken-to`): a day (2024-07-31,
/// local time, the whole day) or a time (2024-07-31T18:30, local; or ISO 8601 with a zone).
struct TakenDate: ExpressibleByArgument {
    /// The first and the last instant the text names.
    let start: Date
    let end: Date

    init?(argument: String) {
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = TimeZone.current
        for (format, span) in [("yyyy-MM-dd", 86_400.0), ("yyyy-MM-dd'T'HH:mm", 60.0), ("yyyy-MM-dd'T'HH:mm:ss", 1.0)] {
            local.dateFormat = format
            if let date = local.date(from: argument) {
                // A day is its own length: 23 or 25 hours when the clocks change.
                let next = format == "yyyy-MM-dd" ? Calendar.current.date(byAdding: .day, value: 1, to: date) ?? date + span : date + span
                (start, end) = (date, next - 0.001)
                return
            }
        }
        let iso = ISO8601DateFormatter()
        guard let date = iso.date(from: argument) else { return nil }
        (start, end) = (date, date)
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

/// `--taken-from` / `--taken-to`, shared by `list` and `export`: either end may be left open;
/// a reversed range is refused before the PIN.
struct TakenRangeOptions: ParsableArguments {
    @Option(name: .customLong("taken-from"), help: ArgumentHelp("Items taken on or after this day or time (2024-07-31, 2024-07-31T18:30); by capture date.", valueName: "date"))
    var from: TakenDate?
    @Option(name: .customLong("taken-to"), help: ArgumentHelp("Items taken on or before this day or time.", valueName: "date"))
    var to: TakenDate?

    var given: Bool { from != nil || to != nil }
    /// The range for the library (nil when neither end is given).
    var range: (from: Date?, to: Date?)? { given ? (from?.start, to?.end) : nil }

    func validate() throws {
        if let from, let to, from.start > to.end { throw ValidationError("--taken-to is before --taken-from; give the earlier date first") }
    }
}
