// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Videos as videos (issue 33): files made by ffmpeg in the test, imported through the built
/// binary; their poster frames are made by FFmpeg inside the image helper's lock-down.
@Suite("Videos")
struct VideoTests {
    /// A portrait iPhone-style clip: H.264 stored 320×240 with a 90° display rotation, Apple's
    /// creation date with its time zone, and an ISO 6709 location.
    static func iphoneClip(_ cli: CLI) throws -> String {
        let flat = cli.root + "/flat.mp4", clip = cli.root + "/IMG_0001.MOV"
        try PhotoFixtures.run(cli, "ffmpeg", ["-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "2",
                                              "-c:v", "libx264", "-pix_fmt", "yuv420p", flat])
        try PhotoFixtures.run(cli, "ffmpeg", ["-loglevel", "error", "-y", "-i", flat, "-c", "copy", "-metadata:s:v:0", "rotate=90",
                                              "-movflags", "use_metadata_tags",
                                              "-metadata", "com.apple.quicktime.creationdate=2023-08-15T18:45:00+0200",
                                              "-metadata", "com.apple.quicktime.location.ISO6709=+48.8584+002.2945/", "-f", "mov", clip])
        return clip
    }

    static func webm(_ cli: CLI) throws -> String {
        let path = cli.root + "/clip.webm"
        try PhotoFixtures.run(cli, "ffmpeg", ["-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "1.5",
                                              "-c:v", "libvpx-vp9", "-metadata", "creation_time=2022-01-02T03:04:05Z", path])
        return path
    }

    @Test("a phone clip and a WebM get a poster (turned upright), their duration, creation date and location flag")
    func posters() throws {
        let cli = try CLI()
        try cli.initVault()
        let clip = try Self.iphoneClip(cli), webm = try Self.webm(cli)
        let r = try cli.run(["import", clip, webm], pinStdin: true)
        #expect(r.code == 0 && !r.stderr.contains("warning"), "import: \(r.stderr)")
        let items = try cli.listJSON()
        let mov = try #require(items.first { $0["name"] as? String == "IMG_0001.MOV" })
        #expect(mov["type"] as? String == "video/quicktime" && mov["thumbnail"] as? Bool == true)
        #expect(mov["width"] as? Int == 240 && mov["height"] as? Int == 320, "the rotation is not applied: \(mov)")
        #expect(mov["duration"] as? Double == 2.0 && mov["gps"] as? Bool == true, "\(mov)")
        // 18:45 at +02:00 is 16:45 UTC.
        #expect(mov["taken"] as? String == "2023-08-15T16:45:00Z", "\(mov)")
        let vp9 = try #require(items.first { $0["name"] as? String == "clip.webm" })
        #expect(vp9["type"] as? String == "video/x-matroska" && vp9["thumbnail"] as? Bool == true && vp9["gps"] as? Bool == false)
        #expect(abs((vp9["duration"] as? Double ?? 0) - 1.5) < 0.1 && vp9["taken"] as? String == "2022-01-02T03:04:05Z", "\(vp9)")
        for (item, size) in [(mov, "192x256"), (vp9, "256x192")] {
            let out = cli.root + "/poster-\(item["name"] as? String ?? "").jpg"
            #expect(try cli.run(["thumbnail", try #require(item["id"] as? String), "--size", "grid", "-o", out], pinStdin: true).code == 0)
            #expect(try PhotoFixtures.run(cli, "identify", ["-format", "%m %wx%h", out]).out == "JPEG \(size)")
        }
        // The content is the original, byte for byte.
        let out = cli.root + "/back.mov"
        #expect(try cli.run(["export", try #require(mov["id"] as? String), "-o", out], pinStdin: true).code == 0)
        #expect(FileManager.default.contentsEqual(atPath: out, andPath: clip))
    }

    @Test("a truncated clip, a codec outside the list and a fake .mp4 import as plain videos with one warning each")
    func refusals() throws {
        let cli = try CLI()
        try cli.initVault()
        let clip = try Self.iphoneClip(cli)
        let whole = try Data(contentsOf: URL(fileURLWithPath: clip))
        let truncated = cli.root + "/cut.mov", mpeg2 = cli.root + "/old.mp4", fake = cli.root + "/fake.mp4"
        // The header and the start of the media data: the picture is cut off.
        try whole.prefix(whole.count / 3).write(to: URL(fileURLWithPath: truncated))
        try PhotoFixtures.run(cli, "ffmpeg", ["-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "1",
                                              "-c:v", "mpeg2video", mpeg2])
        try Data("this is not a video at all, only text with an mp4 name".utf8).write(to: URL(fileURLWithPath: fake))
        let r = try cli.run(["import", truncated, mpeg2, fake], pinStdin: true)
        #expect(r.code == 0, "import: \(r.stderr)")
        let warnings = r.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(warnings.count == 2, "one warning for each of the two containers: \(r.stderr)")
        #expect(warnings.contains { $0.contains("old.mp4") && $0.contains("codec") }, "\(r.stderr)")
        #expect(warnings.allSatisfy { $0.contains("without a thumbnail") }, "\(r.stderr)")
        for path in [truncated, mpeg2, fake] {
            let name = (path as NSString).lastPathComponent
            let item = try #require(try cli.listJSON().first { $0["name"] as? String == name })
            #expect(item["thumbnail"] as? Bool == false && item["duration"] is NSNull, "\(name): \(item)")
            let out = cli.root + "/out-" + name
            #expect(try cli.run(["export", try #require(item["id"] as? String), "-o", out], pinStdin: true).code == 0)
            #expect(FileManager.default.contentsEqual(atPath: out, andPath: path), "\(name) changed")
        }
        // Typed by the content, never by the name: text named .mp4 is not a video.
        #expect(try cli.listJSON().first { $0["name"] as? String == "fake.mp4" }?["type"] as? String == "application/octet-stream")
    }

    @Test("an iPhone Live Photo (IMG_0001.HEIC + IMG_0001.MOV in one folder): two items, the still's JSON names its motion")
    func livePhoto() throws {
        let cli = try CLI()
        try cli.initVault()
        let roll = cli.root + "/roll"
        try FileManager.default.createDirectory(atPath: roll, withIntermediateDirectories: true)
        let clip = try Self.iphoneClip(cli)
        try FileManager.default.moveItem(atPath: clip, toPath: roll + "/IMG_0001.MOV")
        try PhotoFixtures.run(cli, "convert", ["-size", "240x320", "gradient:teal-white", cli.root + "/still.png"])
        try PhotoFixtures.run(cli, "heif-enc", ["-q", "60", cli.root + "/still.png", "-o", roll + "/IMG_0001.HEIC"])
        let r = try cli.run(["import", "-r", roll], pinStdin: true)
        #expect(r.code == 0, "import: \(r.stderr)")
        let items = try cli.listJSON()
        let still = try #require(items.first { $0["name"] as? String == "IMG_0001.HEIC" })
        let motion = try #require(items.first { $0["name"] as? String == "IMG_0001.MOV" })
        #expect(still["motion"] as? String == motion["id"] as? String, "\(still)")
        #expect(motion["motion"] is NSNull && motion["duration"] as? Double == 2.0, "\(motion)")

        // The pair travels together (issue 58): the motion was taken in 2023, the still (no
        // EXIF) today, so a range of today names only the still — the motion comes along.
        let stillID = try #require(still["id"] as? String), motionID = try #require(motion["id"] as? String)
        let out = cli.root + "/today"
        let ranged = try cli.run(["export", "--taken-from", "today", "-o", out], pinStdin: true)
        #expect(ranged.code == 0, "\(ranged.stderr)")
        let written = (try? FileManager.default.contentsOfDirectory(atPath: out))?.sorted() ?? []
        #expect(written == ["IMG_0001.HEIC", "IMG_0001.MOV"], "a date-range export split the Live Photo: \(written)")
        // The still alone to a file: the motion beside it, named in --json.
        let one = try cli.run(["export", stillID, "-o", cli.root + "/trip.heic", "--json"], pinStdin: true)
        #expect(one.code == 0 && one.out.contains("\"motion\" : \"\(cli.root)/trip.MOV\""), "\(one.out) \(one.stderr)")
        #expect(FileManager.default.contentsEqual(atPath: cli.root + "/trip.MOV", andPath: roll + "/IMG_0001.MOV"))
        // Again: the motion's file is there now, and is not replaced; the error says so.
        let again = try cli.run(["export", stillID, "-o", cli.root + "/trip2.heic"], pinStdin: true)
        #expect(again.code == 0, "\(again.stderr)")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: cli.root + "/trip3.MOV"))
        expectCleanError(try cli.run(["export", stillID, "-o", cli.root + "/trip3.heic"], pinStdin: true), code: 64, mentions: "not the Live Photo's motion")
        #expect(try String(contentsOfFile: cli.root + "/trip3.MOV", encoding: .utf8) == "mine")
        // Deleting the still deletes the motion too, and says so.
        let deleted = try cli.run(["delete", String(stillID.prefix(8))], pinStdin: true)
        #expect(deleted.code == 0 && deleted.out.contains(stillID) && deleted.out.contains(motionID), "\(deleted.out) \(deleted.stderr)")
        #expect(try cli.listJSON().isEmpty, "the motion outlived its still")
    }
}
