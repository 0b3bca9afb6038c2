// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11Image
import Foundation
import Testing

/// The video decoder's pixel limit (CNu11Image/video.c) holds for the picture that is
/// DECODED, not only for the size the container announces (issue 57): a video whose header
/// says a small picture while its bitstream carries a larger one is refused once the frame's
/// real size is over the limit, at any limit (here a small one, so the test stays fast).
@Suite("Video decoder: the pixel limit holds for the decoded frame")
struct VideoFrameLimitTests {
    static let ffmpeg = "/usr/bin/ffmpeg"

    /// A one-second clip made by ffmpeg (`codec`, `container`), `width` x `height`.
    static func clip(_ codec: [String], container: String, width: Int, height: Int) throws -> [UInt8] {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("nu11-frame-limit-\(getpid())-\(UUID().uuidString).\(container)").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.arguments = ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=\(width)x\(height):rate=5:duration=1"]
            + codec + ["-pix_fmt", "yuv420p", "-y", out]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "ffmpeg could not make the clip")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// The MP4's visual sample entry (`avc1`) says `width` x `height` (16-bit each, 24 bytes
    /// after the box type); the H.264 bitstream keeps its own size.
    static func announcing(_ mp4: [UInt8], _ box: String, width: Int, height: Int) throws -> [UInt8] {
        let tag = Array(box.utf8)
        let at = try #require((0...(mp4.count - 4)).first { Array(mp4[$0..<($0 + 4)]) == tag }, "no \(box) box")
        var out = mp4
        out[at + 28] = UInt8(width >> 8); out[at + 29] = UInt8(width & 0xFF)
        out[at + 30] = UInt8(height >> 8); out[at + 31] = UInt8(height & 0xFF)
        return out
    }

    /// A WebM whose track says `width` x `height`: PixelWidth (B0) and PixelHeight (BA),
    /// unsigned integers of 1 or 2 bytes (size byte 0x81 or 0x82), rewritten in place (the
    /// new values fit in one byte; a 2-byte field keeps a leading zero).
    static func announcingWebM(_ webm: [UInt8], from: (Int, Int), width: Int, height: Int) throws -> [UInt8] {
        var out = webm
        for (id, old, new) in [(UInt8(0xB0), from.0, width), (UInt8(0xBA), from.1, height)] {
            let pattern: [UInt8] = old > 0xFF ? [id, 0x82, UInt8(old >> 8), UInt8(old & 0xFF)] : [id, 0x81, UInt8(old)]
            let at = try #require((0...(out.count - pattern.count)).first { Array(out[$0..<($0 + pattern.count)]) == pattern }, "no \(id) element")
            if old > 0xFF { out[at + 2] = 0; out[at + 3] = UInt8(new) } else { out[at + 2] = UInt8(new) }
        }
        return out
    }

    struct Outcome { var ok: Bool; var width: Int32; var height: Int32; var message: String }

    static func poster(_ bytes: [UInt8], maxPixels: Int64) -> Outcome {
        var info = nu11_video_info()
        var rgb: UnsafeMutableRawPointer?
        var count = 0
        var err = [CChar](repeating: 0, count: 256)
        let rc = bytes.withUnsafeBytes { nu11_video_poster($0.baseAddress, $0.count, maxPixels, &info, &rgb, &count, &err, err.count) }
        if let rgb { nu11_image_free(rgb, count) }
        let message = String(decoding: err.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Outcome(ok: rc == 0, width: info.width, height: info.height, message: message)
    }

    @Test("a header of 32x24 over a 320x240 H.264 picture (MP4): under a 1000-pixel limit the picture is refused, not decoded past it",
          arguments: [false, true])
    func mp4HeaderSmallerThanFrame(_ honest: Bool) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.ffmpeg), "ffmpeg is not installed")
        let real = try Self.clip(["-c:v", "libx264", "-preset", "ultrafast"], container: "mp4", width: 320, height: 240)
        // Control: the honest file is refused by the header check already; the forged one
        // passes the header check (768 pixels) and must be stopped at the decoded frame.
        let bytes = honest ? real : try Self.announcing(real, "avc1", width: 32, height: 24)
        let limited = Self.poster(bytes, maxPixels: 1000)
        #expect(!limited.ok, "a 320x240 picture was decoded under a 1000-pixel limit (header \(honest ? "honest" : "32x24"))")
        #expect(limited.message.contains("over the limit"), "refused for another reason: \(limited.message)")
        // The same file under a limit above its real size decodes, at the real size.
        let open = Self.poster(bytes, maxPixels: 320 * 240)
        #expect(open.ok && open.width == 320 && open.height == 240, "the file itself does not decode: \(open.message)")
    }

    @Test("a WebM (VP8) whose track says 32x24 over a 320x240 picture is refused under a 1000-pixel limit")
    func webmHeaderSmallerThanFrame() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.ffmpeg), "ffmpeg is not installed")
        let real = try Self.clip(["-c:v", "libvpx", "-b:v", "200k"], container: "webm", width: 320, height: 240)
        let forged = try Self.announcingWebM(real, from: (320, 240), width: 32, height: 24)
        let limited = Self.poster(forged, maxPixels: 1000)
        #expect(!limited.ok, "a 320x240 VP8 picture was decoded under a 1000-pixel limit (header 32x24)")
        #expect(limited.message.contains("over the limit"), "refused for another reason: \(limited.message)")
        #expect(Self.poster(forged, maxPixels: 320 * 240).ok, "the forged file does not decode at all, so the test proves nothing")
    }

    @Test("a stream whose coded size changes mid-stream (240p, then 2400x1800): the first picture is the one decoded, within the limit")
    func sizeChangesMidStream() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.ffmpeg), "ffmpeg is not installed")
        // Two H.264 elementary streams, the second with a new SPS at a larger size, joined
        // into one MP4 track whose header says the first size.
        let small = try Self.clip(["-c:v", "libx264", "-preset", "ultrafast", "-bsf:v", "h264_mp4toannexb", "-f", "h264"],
                                  container: "h264", width: 320, height: 240)
        let large = try Self.clip(["-c:v", "libx264", "-preset", "ultrafast", "-bsf:v", "h264_mp4toannexb", "-f", "h264"],
                                  container: "h264", width: 2400, height: 1800)
        // The large stream first, under a header that says 320x240: the first picture is
        // over a limit the header is under.
        let joined = FileManager.default.temporaryDirectory.appendingPathComponent("nu11-joined-\(getpid()).h264").path
        let muxed = FileManager.default.temporaryDirectory.appendingPathComponent("nu11-joined-\(getpid()).mp4").path
        defer { try? FileManager.default.removeItem(atPath: joined); try? FileManager.default.removeItem(atPath: muxed) }
        try Data(large + small).write(to: URL(fileURLWithPath: joined))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.ffmpeg)
        process.arguments = ["-v", "error", "-r", "5", "-f", "h264", "-i", joined, "-c", "copy", "-y", muxed]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "ffmpeg could not mux the joined stream")
        let mp4 = try Self.announcing([UInt8](try Data(contentsOf: URL(fileURLWithPath: muxed))), "avc1", width: 320, height: 240)
        let limited = Self.poster(mp4, maxPixels: 320 * 240)
        #expect(!limited.ok, "a 2400x1800 picture was decoded under a 320x240 limit: \(limited.width)x\(limited.height)")
        #expect(limited.message.contains("over the limit"), "refused for another reason: \(limited.message)")
    }
}
