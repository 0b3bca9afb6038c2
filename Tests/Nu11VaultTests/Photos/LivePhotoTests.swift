// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import TestSupport
import Testing
@testable import Nu11Vault

/// iPhone Live Photos (issue 33): a still and its motion imported together are two items, and
/// a gallery listing shows them as one, the still naming its motion.
@Suite("Live Photos")
struct LivePhotoTests {
    func make(_ t: TestVault, _ path: String, _ tool: String, _ args: [String]) throws -> String {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try #require(Program.run(tool, args + [path]) == 0, "\(tool) could not make \(path)")
        return path
    }

    func still(_ t: TestVault, _ path: String) throws -> String {
        try make(t, path, "/usr/bin/convert", ["-size", "320x240", "plasma:fractal", "-quality", "80"])
    }

    func motion(_ t: TestVault, _ path: String, seconds: Double = 1) throws -> String {
        try make(t, path, "/usr/bin/ffmpeg", ["-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10",
                                              "-t", "\(seconds)", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-f", "mov"])
    }

    @Test("pairs: the only still and the only motion of one name in one folder, case aside; the motion staged first")
    func pairing() {
        let paths = ["/d/IMG_1.HEIC", "/d/a.txt", "/d/img_1.mov", "/d/IMG_2.JPG", "/e/IMG_2.MOV", "/d/IMG_3.jpg", "/d/IMG_3.heic",
                     "/d/IMG_3.MOV", "/d/IMG_4.MOV", "/d/IMG_5.png", "/d/IMG_5.mov", "/d/IMG_6.jpeg", "/d/IMG_6.mp4"]
        let pairs = LivePhotos.pairs(paths)
        // IMG_2 is in two folders, IMG_3 has two stills, IMG_4 no still, IMG_5 a PNG (not a camera's still).
        #expect(pairs == ["/d/IMG_1.HEIC": "/d/img_1.mov", "/d/IMG_6.jpeg": "/d/IMG_6.mp4"])
        let ordered = LivePhotos.ordered(paths, pairs: pairs)
        #expect(ordered.count == paths.count && Set(ordered) == Set(paths))
        #expect(ordered.prefix(3) == ["/d/img_1.mov", "/d/IMG_1.HEIC", "/d/a.txt"])
        #expect(ordered.suffix(2) == ["/d/IMG_6.mp4", "/d/IMG_6.jpeg"])
    }

    @Test("an import plan never puts the two halves of a pair in different commit groups")
    func groupsKeepPairs() throws {
        let t = try TestVault()
        let folder = t.root + "/roll"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in ["a.txt", "b.txt", "IMG_1.HEIC", "c.txt", "d.txt", "IMG_1.MOV", "e.txt"] {
            FileManager.default.createFile(atPath: folder + "/" + name, contents: Data(name.utf8))
        }
        let plan = try ImportPlan(paths: [folder], recursive: true, groupLimit: 2)
        let groups = plan.groups.map { $0.files.map { ($0 as NSString).lastPathComponent } }
        #expect(groups.flatMap { $0 }.sorted() == ["IMG_1.HEIC", "IMG_1.MOV", "a.txt", "b.txt", "c.txt", "d.txt", "e.txt"])
        #expect(groups.contains { Set($0).isSuperset(of: ["IMG_1.HEIC", "IMG_1.MOV"]) }, "the pair was split: \(groups)")
    }

    @Test("imported together, the still names its motion and the gallery lists one item; decoys stay apart")
    func listing() throws {
        let t = try TestVault()
        let v = try t.vault
        let r = t.root + "/dump/"
        let still = try self.still(t, r + "IMG_0001.JPG"), clip = try motion(t, r + "IMG_0001.MOV")
        // Decoys: a long clip with a photo's name, text named .MOV, a pair split across folders.
        let longStill = try self.still(t, r + "IMG_0002.JPG"), longClip = try motion(t, r + "IMG_0002.MOV", seconds: 12)
        let textStill = try self.still(t, r + "IMG_0003.JPG"), text = try t.file("dump/IMG_0003.MOV", Array("not a video".utf8))
        let otherStill = try self.still(t, r + "IMG_0004.JPG"), otherClip = try motion(t, t.root + "/elsewhere/IMG_0004.MOV")
        let paths = [still, longStill, longClip, clip, textStill, text, otherStill, otherClip]
        let items = try v.items.importFiles(paths)
        let byName = Dictionary(items.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let pairStill = try #require(byName["IMG_0001.JPG"]), pairClip = try #require(byName["IMG_0001.MOV"])
        #expect(pairStill.motion == pairClip.id && pairClip.isVideo && pairClip.motion == nil)
        for name in ["IMG_0002.JPG", "IMG_0003.JPG", "IMG_0004.JPG"] {
            #expect(byName[name]?.motion == nil, "\(name) was paired with a decoy")
        }
        // The gallery: the motion is not an entry of its own; the still's summary names it.
        let listed = try v.items.datedItemIDs().map(\.id)
        #expect(listed.count == items.count - 1 && !listed.contains(pairClip.id) && listed.contains(pairStill.id))
        #expect(try v.items.summaries([pairStill.id]).first?.motion == pairClip.id)
        // The CLI's listing keeps both: each is an item of its own, with its own bytes.
        #expect(try v.items.list(limit: 100).items.count == items.count)
        #expect(try t.exported(pairClip.id) == Array(try Data(contentsOf: URL(fileURLWithPath: clip))))

        // The still alone in an album: each listing shows what it holds.
        try v.albums.createAlbum("Kept")
        try v.albums.moveItem(ItemRef(pairStill.id), toAlbum: "Kept")
        #expect(try v.items.datedItemIDs(album: "Kept").map(\.id) == [pairStill.id])
        #expect(try !v.items.itemIDs().contains(pairClip.id), "the whole vault's listing holds the still")
        try v.albums.createAlbum("Clips")
        try v.albums.moveItem(ItemRef(pairClip.id), toAlbum: "Clips")
        #expect(try v.items.itemIDs(album: "Clips") == [pairClip.id], "a motion without its still in the listing was hidden")
        try v.albums.moveItem(ItemRef(pairClip.id), toAlbum: "Kept")
        #expect(try v.items.datedItemIDs(album: "Kept").map(\.id) == [pairStill.id])

        // The motion deleted: the still is a plain photo again.
        try v.items.delete([ItemRef(pairClip.id)])
        #expect(try v.items.summaries([pairStill.id]).first?.motion == nil)
        #expect(try v.items.datedItemIDs(album: "Kept").map(\.id) == [pairStill.id])
    }
}
