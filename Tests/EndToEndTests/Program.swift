// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The one way the end-to-end tests start a program (Foundation's `Process` is allowed in the
/// tests; the product spawns with `posix_spawn`): what to run, its environment and folder, and
/// where its three streams go, in one call. Streams left out go nowhere (`/dev/null`), so a
/// child never holds a test runner's pipe open.
enum Program {
    /// Starts `executable` and hands it back running.
    static func start(_ executable: String, _ args: [String], environment: [String: String]? = nil, directory: String? = nil,
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
    static func run(_ executable: String, _ args: [String], environment: [String: String]? = nil, directory: String? = nil,
                    stdin: Any? = nil, stdout: Any? = FileHandle.nullDevice, stderr: Any? = FileHandle.nullDevice) -> Int32? {
        guard let process = try? start(executable, args, environment: environment, directory: directory,
                                       stdin: stdin, stdout: stdout, stderr: stderr) else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
