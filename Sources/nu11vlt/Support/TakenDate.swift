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
