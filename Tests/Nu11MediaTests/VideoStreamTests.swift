// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Nu11Media
import Testing

/// Videos play in the app (issue 58): the helper decodes, the app reads raw frames and PCM and
/// checks every message first. A hostile helper (a video that runs code in it) may write any
/// bytes on its pipe: these fake streams must end playback with a throw, never crash the app
/// or hand on a frame whose size does not match its bytes.
@Suite("Video playback stream: the app checks every message of the helper")
struct VideoStreamTests {
    /// The messages read from `bytes` written into a pipe by a fake helper, until the first
    /// throw (its reason) or the end.
    static func read(_ bytes: [UInt8], maxSide: Int = 64) -> (messages: [VideoStream.Message], error: String?) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return ([], "pipe") }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let writer = Thread {
            bytes.withUnsafeBytes { raw in
                var at = 0
                while at < raw.count {
                    guard let base = raw.baseAddress else { break }
                    let n = write(writeEnd, base + at, raw.count - at)
                    if n <= 0 { break }
                    at += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        defer { close(readEnd) }
        var reader = VideoStream.Reader(fd: readEnd, maxSide: maxSide)
        var messages: [VideoStream.Message] = []
        while !reader.finished {
            do { messages.append(try reader.next()) } catch { return (messages, error.reason) }
        }
        return (messages, nil)
    }

    static func be(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64(n - 1 - $0))) } }

    static func frame(pts: Int64, _ w: Int, _ h: Int, pixels: Int? = nil) -> [UInt8] {
        let count = pixels ?? w * h * 4
        return [1] + be(UInt64(16 + count), 4) + be(UInt64(pts), 8) + be(UInt64(w), 4) + be(UInt64(h), 4) + [UInt8](repeating: 0xAB, count: count)
    }

    static func audio(pts: Int64, rate: Int, channels: Int, bytes: Int) -> [UInt8] {
        [2] + be(UInt64(13 + bytes), 4) + be(UInt64(pts), 8) + be(UInt64(rate), 4) + [UInt8(channels)] + [UInt8](repeating: 1, count: bytes)
    }

    @Test("a well-formed stream reads back as sent: frames, sound, the end")
    func wellFormed() throws {
        let stream = Self.frame(pts: 0, 8, 6) + Self.audio(pts: 0, rate: 48000, channels: 2, bytes: 4096) + Self.frame(pts: 40000, 8, 6)
            + VideoStream.endMessage
        let r = Self.read(stream)
        #expect(r.error == nil && r.messages.count == 4, "\(String(describing: r.error))")
        guard case .frame(let f) = r.messages.first else { Issue.record("no frame"); return }
        #expect(f.width == 8 && f.height == 6 && f.pixels.count == 8 * 6 * 4 && f.pixels.allSatisfy { $0 == 0xAB })
        guard case .audio(let a) = r.messages[1] else { Issue.record("no audio"); return }
        #expect(a.rate == 48000 && a.channels == 2 && a.samples.count == 4096)
    }

    @Test("hostile streams end with a throw and hand on nothing of the bad message", arguments: [
        ("truncated header", Self.frame(pts: 0, 8, 6) + [1, 0, 0]),
        ("truncated frame", Array(Self.frame(pts: 0, 8, 6).dropLast(7))),
        ("frame over the side asked for", Self.frame(pts: 0, 65, 6)),
        ("length claims 4 GiB", [1, 0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 64)),
        ("length is not width x height x 4", Self.frame(pts: 0, 8, 6, pixels: 8 * 6 * 4 - 4)),
        ("zero width", Self.frame(pts: 0, 0, 6, pixels: 24)),
        ("time goes back", Self.frame(pts: 80000, 8, 6) + Self.frame(pts: 40000, 8, 6)),
        ("time past a day", Self.frame(pts: 86_400_000_001, 8, 6)),
        ("frames faster than the pixel rate", Self.frame(pts: 0, 64, 64) + Self.frame(pts: 0, 64, 64)),
        ("audio of 3 channels", Self.audio(pts: 0, rate: 48000, channels: 3, bytes: 6 * 100)),
        ("audio at 1 Hz", Self.audio(pts: 0, rate: 1, channels: 1, bytes: 100)),
        ("audio of half a sample", Self.audio(pts: 0, rate: 48000, channels: 2, bytes: 6)),
        ("audio over a second", Self.audio(pts: 0, rate: 8000, channels: 1, bytes: 16002)),
        ("unknown kind", [9, 0, 0, 0, 0]),
        ("end with a body", [3, 0, 0, 0, 1, 0]),
        ("refusal over 400 bytes", [4] + Self.be(401, 4) + [UInt8](repeating: 0x41, count: 401)),
        ("refusal of two lines", [4, 0, 0, 0, 3, 0x41, 0x0A, 0x42]),
        ("refusal not UTF-8", [4, 0, 0, 0, 2, 0xC3, 0x28]),
        ("nothing at all", []),
    ] as [(String, [UInt8])])
    func hostile(_ name: String, _ stream: [UInt8]) {
        let r = Self.read(stream)
        #expect(r.error != nil, "\(name): read as \(r.messages.count) messages")
        // Only the well-formed messages before the bad one came through.
        for message in r.messages {
            if case .frame(let f) = message { #expect(f.pixels.count == f.width * f.height * 4 && f.width <= 64, "\(name)") }
        }
        #expect(r.messages.count <= 1, "\(name)")
    }

    /// A two-second clip: a red first second, then testsrc, with a 440 Hz tone.
    static func redClip() throws -> [UInt8] {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("nu11-play-\(getpid())-\(UUID().uuidString).mp4").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-v", "error", "-f", "lavfi", "-i", "color=c=red:size=320x240:rate=25:duration=1",
                             "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=1",
                             "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
                             "-filter_complex", "[0:v][1:v]concat=n=2:v=1:a=0[v]", "-map", "[v]", "-map", "2:a",
                             "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-y", out]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "ffmpeg could not make the clip")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    @Test("the locked-down helper plays a clip: red frames first, scaled to the size asked, times rising, 48 kHz sound")
    func realHelper() throws {
        let clip = try Self.redClip()
        let decoder = try clip.withUnsafeBytes { try VideoDecoder(video: $0, maxSide: 160, audio: true) }
        defer { decoder.finish() }
        var frames: [VideoStream.Frame] = [], sound = 0, rate = 0, ended = false
        reading: while true {
            switch try decoder.next() {
            case .frame(let f): frames.append(f)
            case .audio(let a): sound += a.samples.count / (2 * a.channels); rate = a.rate
            case .end: ended = true; break reading
            case .refused(let reason): Issue.record("refused: \(reason)"); break reading
            }
        }
        #expect(ended && frames.count >= 45 && frames.count <= 50, "\(frames.count) frames")
        #expect(frames.allSatisfy { $0.width == 160 && $0.height == 120 })
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.ptsMicros < $1.ptsMicros })
        let first = try #require(frames.first)
        let middle = (60 * 160 + 80) * 4
        #expect(first.pixels[middle] > 200 && first.pixels[middle + 1] < 60 && first.pixels[middle + 2] < 60 && first.pixels[middle + 3] == 255,
                "the first frame is not red: \(first.pixels[middle..<(middle + 4)])")
        #expect(rate == 48000 && sound > 80000 && sound < 110_000, "sound: \(sound) samples at \(rate) Hz")
    }

    @Test("the helper refuses what is not a video with one line, and a cancel ends a playing helper at once")
    func refusalAndCancel() throws {
        let junk = [UInt8](repeating: 0x42, count: 4096)
        let decoder = try junk.withUnsafeBytes { try VideoDecoder(video: $0, maxSide: 160, audio: false) }
        guard case .refused(let reason) = try decoder.next() else { Issue.record("not refused"); return }
        #expect(reason.contains("not a video"), "\(reason)")
        decoder.finish()
        let clip = try Self.redClip()
        let playing = try clip.withUnsafeBytes { try VideoDecoder(video: $0, maxSide: 160, audio: false) }
        _ = try playing.next()
        playing.cancel()
        var threw = false
        for _ in 0..<200 {
            do { _ = try playing.next() } catch { threw = true; break }
        }
        #expect(threw, "the stream went on after cancel")
        playing.finish()
    }
}
