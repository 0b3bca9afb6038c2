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
        // `today` and `yesterday`: the whole local day.
        if let back = ["today": 0, "yesterday": -1][argument.lowercased()],
           let day = Calendar.current.date(byAdding: .day, value: back, to: Calendar.current.startOfDay(for: Date())) {
            let next = Calendar.current.date(byAdding: .day, value: 1, to: day) ?? day + 86_400
            (start, end) = (day, next - 0.001)
            return
        }
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

    /// For `transform:`: a text that is no date says which forms are.
    static func parse(_ text: String) throws -> TakenDate {
        guard let date = TakenDate(argument: text) else {
            throw ValidationError("not a day or time; give a day (2024-07-31), a local time (2024-07-31T18:30), ISO 8601 with a zone (2024-07-31T18:30:00+02:00), today or yesterday")
        }
        return date
    }
}

/// `--taken-from` / `--taken-to`, shared by `list` and `export`: either end may be left open;
/// a reversed range is refused before the PIN.
struct TakenRangeOptions: ParsableArguments {
    @Option(name: .customLong("taken-from"), help: ArgumentHelp("Items taken on or after this day or time (2024-07-31, 2024-07-31T18:30, today, yesterday); by capture date.", valueName: "date"), transform: TakenDate.parse)
    var from: TakenDate?
    @Option(name: .customLong("taken-to"), help: ArgumentHelp("Items taken on or before this day or time.", valueName: "date"), transform: TakenDate.parse)
    var to: TakenDate?

    var given: Bool { from != nil || to != nil }
    /// The range for the library (nil when neither end is given).
    var range: (from: Date?, to: Date?)? { given ? (from?.start, to?.end) : nil }

    func validate() throws {
        if let from, let to, from.start > to.end { throw ValidationError("--taken-to is before --taken-from; give the earlier date first") }
    }
}
