// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Testing
@testable import Nu11Storage

@Suite("append-only files (the sync journal's segments)")
struct AppendTests {
    @Test("an append lands only on a file exactly as long as its writer left it; a shortened, grown or linked one is left as it is")
    func appendChecksLength() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/segment"
        try ProtectedFiles.writeAtomically([1, 2, 3], to: path)
        try ProtectedFiles.append([4, 5], to: path, expectedLength: 3)
        #expect(try ProtectedFiles.read(path) == [1, 2, 3, 4, 5] && mode(path) == 0o600 && ProtectedFiles.length(path) == 5)
        // An older copy put back (shorter), or bytes someone else added (longer): refused, untouched.
        try ProtectedFiles.writeAtomically([1, 2, 3], to: path)
        #expect(throws: Nu11Error.self) { try ProtectedFiles.append([4, 5], to: path, expectedLength: 5) }
        #expect(try ProtectedFiles.read(path) == [1, 2, 3])
        #expect(throws: Nu11Error.self) { try ProtectedFiles.append([9], to: path, expectedLength: 2) }
        #expect(try ProtectedFiles.read(path) == [1, 2, 3])
        // A symlink where the segment should be is not followed.
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: path)
        #expect(throws: Nu11Error.self) { try ProtectedFiles.append([9], to: root + "/link", expectedLength: 3) }
        #expect(try ProtectedFiles.read(path) == [1, 2, 3] && ProtectedFiles.length(root + "/link") == nil)
    }
}
