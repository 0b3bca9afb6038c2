// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Vault

/// `PathName` answers as Foundation's `NSString` does, for the paths an import is given.
@Suite("path names without NSString")
struct PathNameTests {
    static let paths = [
        "", "/", "//", "a", "/a", "a/", "/a/b/", "a//b", "IMG_1234.HEIC", "/x/IMG_1234.mov", "dir.d/file", "dir.d/",
        ".profile", "/x/.profile", "/x/.profile.bak", "name.", "/x/name.", "a..mov", "a.b.c", "./a.jpg", "../b.JPG",
        "/x//y.jpg", "a///b.mov", "//x/y.jpg", "/x/y/ä ö.jpeg", "/x/日本.mp4", "a.tar.gz", "/x.y/z", ".", "..", "/x/..", "a..", "/x/...", "x/.a.", "x/.hidden.mov", "é.é",
    ]

    @Test("the last component, as NSString.lastPathComponent")
    func last() {
        // "//" is "/" here; NSString says "" (Foundation's own "/" says "/"). Neither is a file.
        for path in Self.paths where path != "//" {
            #expect(PathName.last(path) == (path as NSString).lastPathComponent, "\(path)")
        }
    }

    @Test("stem and extension, as NSString.deletingPathExtension and .pathExtension")
    func splitExtension() {
        for path in Self.paths where !(path.count > 1 && path.hasSuffix("/")) {
            let (stem, ext) = PathName.splitExtension(path)
            #expect(ext == (path as NSString).pathExtension, "extension of \(path)")
            #expect(stem == (path as NSString).deletingPathExtension, "stem of \(path)")
        }
    }

    @Test("Live Photo pairs: one still and one motion of a stem, case aside; hidden files and extension-less names never pair")
    func pairs() {
        let found = LivePhotos.pairs(["/r/IMG_1.HEIC", "/r/img_1.MOV", "/r/IMG_2.jpg", "/r/IMG_2.mov", "/r/IMG_2.mp4",
                                      "/r/.mov", "/r/.jpg", "/r/x.jpg.", "/r/x.mov.", "/s/IMG_3.jpeg", "/t/IMG_3.mov"])
        #expect(found == ["/r/IMG_1.HEIC": "/r/img_1.MOV"])
        // Repeated slashes do not keep a pair apart.
        #expect(LivePhotos.pairs(["/r//IMG_4.JPG", "/r/IMG_4.MOV"]) == ["/r//IMG_4.JPG": "/r/IMG_4.MOV"])
    }
}
