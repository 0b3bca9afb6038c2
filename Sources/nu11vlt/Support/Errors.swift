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
            printError(error.description)
            throw ExitCode(exitCode(error.code))
        }
    }

    /// Turns a typed error from a validate() check into a usage error with its hint.
    static func usage(_ body: () throws -> Void) throws {
        do { try body() } catch let error as Nu11Error { throw ValidationError(error.description) }
    }

    static func printError(_ message: String) {
        let line = "nu11vlt: error: \(message.replacingOccurrences(of: "\n", with: " "))\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}

enum Output {
    static func json(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    static func note(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
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
