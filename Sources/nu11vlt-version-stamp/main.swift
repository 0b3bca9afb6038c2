// SPDX-License-Identifier: GPL-3.0-or-later
// Build tool (run by the VersionStamp plugin): VERSION → a Swift file with Nu11Release.version.
// A malformed VERSION fails the build with one line naming the file.
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: nu11vlt-version-stamp VERSION OUTPUT.swift\n".utf8))
    exit(64)
}
let text: String
do {
    text = try String(contentsOfFile: arguments[1], encoding: .utf8)
} catch {
    FileHandle.standardError.write(Data("error: cannot read \(arguments[1]): \(error.localizedDescription)\n".utf8))
    exit(1)
}
let version = text.trimmingCharacters(in: .whitespacesAndNewlines)
let parts = version.split(separator: ".", omittingEmptySubsequences: false)
guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else {
    FileHandle.standardError.write(Data("error: \(arguments[1]) must hold one version MAJOR.MINOR.PATCH (digits), not '\(version)'\n".utf8))
    exit(1)
}
let source = """
    // Generated from VERSION by the VersionStamp plugin; do not edit.
    extension Nu11Release {
        /// This release's version (the VERSION file).
        public static let version = "\(version)"
    }

    """
do {
    try Data(source.utf8).write(to: URL(fileURLWithPath: arguments[2]), options: .atomic)
} catch {
    FileHandle.standardError.write(Data("error: cannot write \(arguments[2]): \(error.localizedDescription)\n".utf8))
    exit(1)
}
