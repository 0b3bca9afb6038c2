// SPDX-License-Identifier: GPL-3.0-or-later
import SystemPackage
import ArgumentParser
import Foundation
import Nu11Format

/// Maps typed errors to one line on stderr and an exit code scripts can rely on.
enum Failure {
    static func exitCode(_ code: Nu11Error.Code) -> Int32 {
        switch code {
        case .authenticationFailed: 3
        case .notFound: 4
        case .corrupted, .truncated: 5
        case .busy, .lockedOut: 6
        case .otherKeyStore: 8
        case .tpm: 9
        case .unsupportedVersion, .costTooHigh: 7
        case .invalidArgument, .alreadyExists: 64
        case .io: 74
        case .internalError: 1
        }
    }

    /// Runs a command body; a Nu11Error becomes a one-line message and its exit code.
    static func run(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as Nu11Error {
            printError(Remedies.line(error))
            throw ExitCode(exitCode(error.code))
        }
    }

    /// Turns a typed error from a validate() check into a usage error with its hint.
    static func usage(_ body: () throws -> Void) throws {
        do { try body() } catch let error as Nu11Error { throw ValidationError(Remedies.line(error)) }
    }

    static func printError(_ message: String) {
        Output.stderr("nu11vlt: error: \(Output.escaped(message))\n")
    }
}

enum Output {
    static func json(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(Output.isoTime(date))
        }
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// A time for scripts: ISO 8601 in local time with its offset (`2026-11-21T19:25:57+01:00`;
    /// `Z` where local time is UTC). One convention for every command's JSON and machine lines.
    static func isoTime(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.timeZone = TimeZone.current
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: date)
    }

    /// Human output shows local time, to the minute (JSON the same local time, ISO 8601 with its offset).
    static var localTime: DateFormatter {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone.current
        f.dateFormat = "yyyy-MM-dd HH:mm"
        return f
    }

    /// A duration for people: "6d 23h 59m", "3h 5m", "42s".
    static func humanDuration(_ seconds: Int) -> String {
        guard seconds >= 60 else { return "\(max(0, seconds))s" }
        let parts = [(seconds / 86400, "d"), (seconds % 86400 / 3600, "h"), (seconds % 3600 / 60, "m")]
        let shown = parts.drop { $0.0 == 0 }
        return shown.map { "\($0.0)\($0.1)" }.joined(separator: " ")
    }

    static func note(_ message: String) {
        ProgressLine.clearForNotice()
        stderr(message + "\n")
    }

    /// Writes with write(2) and ignores failure: on a full disk or a closed stderr, an
    /// error message must never trap (Foundation's FileHandle.write does).
    static func stderr(_ text: String) { rawWrite(2, Array(text.utf8)) }

    static func stdout(_ bytes: [UInt8]) { rawWrite(1, bytes) }

    static func rawWrite(_ fd: Int32, _ bytes: [UInt8]) {
        // A closed stdout or stderr (EPIPE) leaves nothing to tell: the output just ends.
        _ = try? bytes.withUnsafeBytes { buffer in try SystemIO.writeAll(fd, buffer) }
    }

    /// Names from files and archives are shown with control characters escaped, so an
    /// `ESC[` cannot recolour the terminal and a newline cannot split a line of `list`.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                out += scalar.value <= 0xFF ? String(format: "\\x%02x", scalar.value) : String(format: "\\u{%x}", scalar.value)
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    static func size(_ bytes: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
