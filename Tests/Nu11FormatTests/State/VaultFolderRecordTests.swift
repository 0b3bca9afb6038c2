// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

/// `vault-folder.n11l` (FORMAT.md §4.4c): the bytes as specified, and every record that is not
/// a version-1 record of an absolute path without control characters read as no record.
@Suite("the recorded vault folder (vault-folder.n11l)")
struct VaultFolderRecordTests {
    @Test("the bytes: N11L, version 1, the length (u16 BE), the path; read back as written")
    func layout() throws {
        let path = "/media/disk/old stuff/nu11vlt é"
        let bytes = try VaultFolderRecord.encode(path)
        let utf8 = Array(path.utf8)
        #expect(bytes == Array("N11L".utf8) + [1, 0, UInt8(utf8.count)] + utf8)
        #expect(VaultFolderRecord.decode(bytes) == path)
        let long = "/" + String(repeating: "a", count: 4095)
        #expect(VaultFolderRecord.decode(try VaultFolderRecord.encode(long)) == long)
    }

    @Test("refused when written, ignored when read: relative, too long, control characters, not UTF-8; another version, a wrong length, junk")
    func negatives() throws {
        for bad in ["", "relative/path", "/" + String(repeating: "a", count: 4096), "/a\nb", "/a\u{1b}[31m", "/a\u{7f}"] {
            #expect(throws: Nu11Error.self) { try VaultFolderRecord.encode(bad) }
        }
        let good = try VaultFolderRecord.encode("/ok")
        var version2 = good
        version2[4] = 2
        var longer = good
        longer[6] += 1
        let notUTF8 = Array("N11L".utf8) + [1, 0, 3] + [0x2f, 0xff, 0xfe]
        let withNUL = Array("N11L".utf8) + [1, 0, 3] + [0x2f, 0x00, 0x61]
        for bytes in [[], Array(good.prefix(6)), version2, longer, good + [0x61], notUTF8, withNUL, Array("N11V".utf8) + good.dropFirst(4)] {
            #expect(VaultFolderRecord.decode(bytes) == nil, "\(bytes) read as a record")
        }
    }
}
