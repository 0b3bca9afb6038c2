// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 58: `nu11vlt rotate` keeps the turn in the sealed metadata, makes the thumbnails
/// again turned, and `export` writes a JPEG with the turn in its EXIF orientation without
/// touching its image data. Read back with exiftool and ImageMagick (independent of libvips and
/// of the project's own EXIF code).
@Suite("rotate")
struct RotateTests {
    func item(_ cli: CLI, _ id: String) throws -> [String: Any] {
        try #require(try cli.listJSON(["--all"]).first { ($0["id"] as? String) == id }, "\(id) not listed")
    }

    /// EXIF Orientation as exiftool reads it (a number), nil when the file has none.
    func orientation(_ cli: CLI, _ path: String) throws -> Int? {
        Int(try PhotoFixtures.run(cli, "exiftool", ["-n", "-s3", "-Orientation", path]).out.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func export(_ cli: CLI, _ id: String, _ name: String) throws -> String {
        let out = cli.root + "/" + name
        try? FileManager.default.removeItem(atPath: out)
        let r = try cli.run(["export", id, "-o", out], pinStdin: true)
        #expect(r.code == 0, "export: \(r.stderr)")
        return out
    }

    func rotate(_ cli: CLI, _ id: String, _ flag: String? = nil) throws {
        let r = try cli.run(["rotate", id] + (flag.map { [$0] } ?? []), pinStdin: true)
        #expect(r.code == 0, "rotate \(flag ?? ""): \(r.stderr)")
    }

    /// The image data (from SOS on) of two JPEGs is the same: the export did not re-encode.
    func sameImageData(_ a: String, _ b: String) throws -> Bool {
        let x = PhotoFixtures.jpegImageData(try Data(contentsOf: URL(fileURLWithPath: a)))
        let y = PhotoFixtures.jpegImageData(try Data(contentsOf: URL(fileURLWithPath: b)))
        return x != nil && x == y
    }

    @Test("a JPEG without EXIF: right sets Orientation 6 losslessly (upright: red on top), the tile turns, left and half compose, four rights give the stored bytes back")
    func jpegWithoutExif() throws {
        let cli = try CLI()
        try cli.initVault()
        // 200 × 100: left half red, right half blue, no metadata at all.
        let photo = cli.root + "/plain.jpg"
        try PhotoFixtures.run(cli, "convert", ["-size", "100x100", "xc:red", "-size", "100x100", "xc:blue", "+append", "-strip",
                                               "-quality", "92", photo])
        #expect(try orientation(cli, photo) == nil, "the fixture has an orientation")
        let id = try cli.importIDs([photo])[0]

        try rotate(cli, id)
        let listed = try item(cli, id)
        #expect(listed["rotation"] as? Int == 90 && listed["width"] as? Int == 100 && listed["height"] as? Int == 200, "\(listed)")
        let out = try export(cli, id, "right.jpg")
        #expect(try orientation(cli, out) == 6)
        #expect(try sameImageData(out, photo), "the export re-encoded the image")
        let upright = cli.root + "/upright.png"
        try PhotoFixtures.run(cli, "convert", [out, "-auto-orient", upright])
        #expect(try PhotoFixtures.size(cli, upright) == (100, 200))
        let top = try PhotoFixtures.pixel(cli, upright, x: 50, y: 10), bottom = try PhotoFixtures.pixel(cli, upright, x: 50, y: 190)
        #expect(top.count == 3 && top[0] > 200 && top[2] < 60, "the top of the turned photo is not red: \(top)")
        #expect(bottom.count == 3 && bottom[2] > 200 && bottom[0] < 60, "the bottom of the turned photo is not blue: \(bottom)")
        // The thumbnail was made again, turned the same way.
        let grid = cli.root + "/grid.jpg"
        #expect(try cli.run(["thumbnail", id, "-o", grid], pinStdin: true).code == 0)
        #expect(try PhotoFixtures.size(cli, grid) == (100, 200))
        let tileTop = try PhotoFixtures.pixel(cli, grid, x: 50, y: 10)
        #expect(tileTop.count == 3 && tileTop[0] > 200 && tileTop[2] < 60, "the tile's top is not red: \(tileTop)")

        try rotate(cli, id, "--half")  // 90 + 180 = 270
        #expect(try orientation(cli, try export(cli, id, "half.jpg")) == 8)
        try rotate(cli, id, "--left")  // 180
        #expect(try orientation(cli, try export(cli, id, "left.jpg")) == 3)
        #expect(try item(cli, id)["width"] as? Int == 200)
        try rotate(cli, id, "--right")  // 270
        try rotate(cli, id)  // 0: four rights from the start
        #expect(try item(cli, id)["rotation"] as? Int == 0)
        let back = try export(cli, id, "back.jpg")
        #expect(FileManager.default.contentsEqual(atPath: back, andPath: photo), "back in its own orientation, the export is not the stored bytes")
        let tile = cli.root + "/grid-back.jpg"
        #expect(try cli.run(["thumbnail", id, "-o", tile], pinStdin: true).code == 0)
        #expect(try PhotoFixtures.size(cli, tile) == (200, 100))
    }

    @Test("EXIF without an orientation gets one added (its other tags kept), an orientation already there is turned from its value")
    func jpegWithExif() throws {
        let cli = try CLI()
        try cli.initVault()
        let dated = cli.root + "/dated.jpg"
        try PhotoFixtures.run(cli, "convert", ["-size", "120x80", "xc:green", "-strip", dated])
        try PhotoFixtures.run(cli, "exiftool", ["-q", "-overwrite_original", "-DateTimeOriginal=2021:07:14 10:30:00",
                                                "-Make=Canon", "-Model=EOS Rotate", dated])
        #expect(try orientation(cli, dated) == nil)
        let land = try PhotoFixtures.orientedJPEGWithGPS(cli)  // Orientation 6 already
        let ids = try cli.importIDs([dated, land])
        try rotate(cli, ids[0])
        try rotate(cli, ids[1])
        let a = try export(cli, ids[0], "dated-out.jpg"), b = try export(cli, ids[1], "land-out.jpg")
        #expect(try orientation(cli, a) == 6)
        let tags = try PhotoFixtures.run(cli, "exiftool", ["-s3", "-DateTimeOriginal", "-Model", a]).out
        #expect(tags.contains("2021:07:14 10:30:00") && tags.contains("EOS Rotate"), "the other tags were lost: \(tags)")
        #expect(try sameImageData(a, dated))
        #expect(try orientation(cli, b) == 3, "orientation 6 turned right is 3")
        #expect(try sameImageData(b, land))
        // The stored photo itself never changed: a location-stripped export still works on it.
        let stripped = cli.root + "/stripped.jpg"
        #expect(try cli.run(["export", ids[1], "--strip-location", "-o", stripped], pinStdin: true).code == 0)
        #expect(try orientation(cli, stripped) == 3)
    }

    @Test("rotate refuses a video, a note and a plain file (one line, exit 64) and names an ID that is not there (exit 4); nothing changes")
    func refusals() throws {
        let cli = try CLI()
        try cli.initVault()
        let clip = cli.root + "/clip.mp4"
        try PhotoFixtures.run(cli, "ffmpeg", ["-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10", "-t", "0.5",
                                              "-c:v", "libx264", "-pix_fmt", "yuv420p", clip])
        let ids = try cli.importIDs([clip, cli.file("report.txt", Array("a report\n".utf8))])
        let note = try cli.runPinFD(["note", "add", "--title", "Rotate me"], stdin: Data("body\n".utf8))
        #expect(note.code == 0, "note add: \(note.stderr)")
        let noteID = String(note.out.prefix(32))
        for (id, what) in [(ids[0], "a video"), (ids[1], "not a photo"), (noteID, "a note")] {
            let r = try cli.run(["rotate", id], pinStdin: true)
            expectCleanError(r, code: 64, mentions: what)
            #expect(r.stderr.contains("only photos can be rotated"), "\(r.stderr)")
        }
        #expect(try item(cli, ids[0])["rotation"] as? Int == 0)
        let missing = "0123456789abcdef0123456789abcdef"
        expectCleanError(try cli.run(["rotate", missing], pinStdin: true), code: 4, mentions: missing)
        let both = try cli.run(["rotate", ids[0], "--left", "--half"], pinStdin: true)
        #expect(both.code == 64 && both.stderr.contains("use one of --left, --right and --half"), "\(both.code): \(both.stderr)")
    }
}
