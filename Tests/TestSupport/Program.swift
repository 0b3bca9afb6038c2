// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The one way the tests start a program (Foundation's `Process` is allowed in the
/// tests; the product spawns with `posix_spawn`): what to run, its environment and folder, and
/// where its three streams go, in one call. Streams left out go nowhere (`/dev/null`), so a
/// child never holds a test runner's pipe open.
public enum Program {
    /// Starts `executable` and hands it back running.
    public static func start(_ executable: String, _ args: [String], environment: [String: String]? = nil, directory: String? = nil,
                      stdin: Any? = nil, stdout: Any? = FileHandle.nullDevice, stderr: Any? = FileHandle.nullDevice) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardInput = stdin ?? FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        return process
    }

    /// Runs it to the end: its exit status, or nil when it could not be started.
    @discardableResult
    public static func run(_ executable: String, _ args: [String], environment: [String: String]? = nil, directory: String? = nil,
                    stdin: Any? = nil, stdout: Any? = FileHandle.nullDevice, stderr: Any? = FileHandle.nullDevice) -> Int32? {
        guard let process = try? start(executable, args, environment: environment, directory: directory,
                                       stdin: stdin, stdout: stdout, stderr: stderr) else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Waiting on a condition instead of a sleep: a test acts once the program is where it must be
/// (blocked reading a descriptor, deep in a computation), however loaded the machine is.
public enum Wait {
    /// Polls `condition` every 10 ms for at most `seconds`; whether it came true.
    @discardableResult
    public static func until(seconds: Double = 60, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    /// Until process `pid` sleeps in read(2) on `fd` (from /proc/PID/syscall), and runs
    /// `executable` when one is given (not the shell that is about to exec it).
    @discardableResult
    public static func untilReading(_ pid: Int32, fd: Int32, executable: String? = nil, seconds: Double = 60) -> Bool {
        #if arch(x86_64)
        let read = "0"
        #else
        let read = "63"  // arm64's generic table
        #endif
        return until(seconds: seconds) {
            if let executable, (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) != executable { return false }
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8) else { return false }
            let fields = text.split(separator: " ")
            return fields.count > 1 && fields[0] == read && fields[1] == "0x" + String(fd, radix: 16)
        }
    }

    /// Until process `pid` holds at least `mebibytes` of resident memory (e.g. inside Argon2id).
    @discardableResult
    public static func untilResident(_ pid: Int32, mebibytes: Int, seconds: Double = 60) -> Bool {
        until(seconds: seconds) {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                  let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return false }
            return kib >= mebibytes * 1024
        }
    }
}
