// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Playback in the app (issue 58) decodes in the image helper, under the allow-list every
/// other decode runs under: the `play` request (op 7) is traced here as the corpus is in
/// `SandboxTests.traceMatchesAllowList`, and its answer is the framed stream of raw RGBA frames
/// (turned upright by the container's rotation) and PCM the app reads (Nu11Media's VideoStream).
@Suite("video playback in the helper's lock-down")
struct VideoPlayTests {
    /// A phone-like clip: two seconds of 320 x 240 turned 90° by its container, a red first
    /// second, AAC sound at 48 kHz (mono).
    static func clip(_ cli: CLI) throws -> String {
        let flat = cli.root + "/flat.mov", path = cli.root + "/red.mov"
        try PhotoFixtures.run(cli, "ffmpeg", ["-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=c=red:size=320x240:rate=25:duration=1",
                                              "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=1",
                                              "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
                                              "-filter_complex", "[0:v][1:v]concat=n=2:v=1:a=0[v]", "-map", "[v]", "-map", "2:a",
                                              "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-f", "mov", flat])
        // The rotation as a phone writes it: a display matrix on the stream (kept by a copy).
        try PhotoFixtures.run(cli, "ffmpeg", ["-loglevel", "error", "-y", "-i", flat, "-c", "copy", "-metadata:s:v:0", "rotate=90",
                                              "-f", "mov", path])
        return path
    }

    /// One request of the helper's pipe protocol (Nu11Media's ImageWire).
    static func request(_ op: UInt8, _ arg: UInt32, _ bytes: Data) -> Data {
        var d = Data([op])
        for i in (0..<4).reversed() { d.append(UInt8(truncatingIfNeeded: arg >> (8 * UInt32(i)))) }
        for i in (0..<8).reversed() { d.append(UInt8(truncatingIfNeeded: UInt64(bytes.count) >> (8 * UInt64(i)))) }
        return d + bytes
    }

    @Test("a play request under strace: only allow-listed calls, upright frames at the size asked, sound, then the end")
    func playUnderTrace() throws {
        let cli = try CLI()
        let strace = try #require(PhotoFixtures.tool("strace"), "strace is not installed")
        let video = try Data(contentsOf: URL(fileURLWithPath: try Self.clip(cli)))
        let input = Self.request(7, 160 | 0x8000_0000, video)
        let r = try cli.spawn(strace, ["-f", "-qq", "-o", cli.root + "/trace", SandboxTests.helper], input: input)
        #expect(r.code == 0, "the helper failed to play: \(r.code)")
        var at = 0, frames: [(Int, Int, [UInt8])] = [], audio = 0, ended = false
        let out = [UInt8](r.stdout)
        while at + 5 <= out.count {
            let kind = out[at], length = out[(at + 1)..<(at + 5)].reduce(0) { $0 << 8 | Int($1) }
            let body = Array(out[(at + 5)..<min(out.count, at + 5 + length)])
            at += 5 + length
            switch kind {
            case 1:
                let w = body[8..<12].reduce(0) { $0 << 8 | Int($1) }, h = body[12..<16].reduce(0) { $0 << 8 | Int($1) }
                frames.append((w, h, Array(body[16...])))
            case 2: audio += body.count - 13
            case 3: ended = true
            default: Issue.record("message \(kind): \(String(decoding: body, as: UTF8.self))")
            }
        }
        #expect(ended && at == out.count, "the stream did not end cleanly")
        #expect(frames.count >= 45 && frames.allSatisfy { $0.0 == 120 && $0.1 == 160 && $0.2.count == 120 * 160 * 4 },
                "frames: \(frames.count), first \(frames.first.map { "\($0.0)x\($0.1)" } ?? "none")")
        if let first = frames.first {
            let p = (80 * 120 + 60) * 4
            #expect(first.2[p] > 200 && first.2[p + 1] < 60 && first.2[p + 2] < 60, "the first frame is not red")
        }
        #expect(audio > 48000 * 2 * 3 / 2, "sound: \(audio) bytes")
        let list = try cli.spawn(SandboxTests.helper, ["--allow-list"]).out.split(separator: "\n")
        let allowed = Set(list.filter { $0.hasPrefix("allowed ") }.map { String($0.dropFirst(8)) })
        let refused = Set(list.filter { $0.hasPrefix("refused ") }.map { String($0.dropFirst(8)) })
        let trace = try String(contentsOfFile: cli.root + "/trace", encoding: .utf8).split(separator: "\n")
        let start = try #require(trace.firstIndex { $0.contains("seccomp(") }, "the trace shows no lock-down")
        var used: [String: String] = [:]
        for line in trace[(start + 1)...] {
            guard let name = StraceLines.callName(line) else { continue }
            used[name] = used[name] ?? String(line)
        }
        #expect(used["write"] != nil && used.count >= 4, "the trace is not working: \(used.keys.sorted())")
        for (name, example) in used.sorted(by: { $0.key < $1.key }) where !allowed.contains(name) {
            #expect(refused.contains(name), "\(name) is not on the helper's allow-list (sandbox.c): \(example)")
        }
    }

    @Test("a play request for a cut video or junk is refused with one line, and the helper exits cleanly")
    func refusals() throws {
        let cli = try CLI()
        let video = try Data(contentsOf: URL(fileURLWithPath: try Self.clip(cli)))
        for bytes in [video.prefix(9000), Data(repeating: 0x42, count: 5000)] {
            let r = try cli.spawn(SandboxTests.helper, [], input: Self.request(7, 160, bytes))
            let out = [UInt8](r.stdout)
            #expect(r.code == 0 && !out.isEmpty, "exit \(r.code)")
            // Whatever frames came first, the last message is a one-line refusal.
            var at = 0, last: UInt8 = 0, text = ""
            while at + 5 <= out.count {
                let length = out[(at + 1)..<(at + 5)].reduce(0) { $0 << 8 | Int($1) }
                last = out[at]
                text = String(decoding: out[(at + 5)..<min(out.count, at + 5 + length)], as: UTF8.self)
                at += 5 + length
            }
            #expect(last == 4 && !text.isEmpty && !text.contains("\n"), "last message \(last): \(text)")
        }
    }

    @Test("a play request asking for a picture side out of range is refused, not decoded")
    func sideOutOfRange() throws {
        let cli = try CLI()
        let video = try Data(contentsOf: URL(fileURLWithPath: try Self.clip(cli)))
        for side: UInt32 in [0, 5000] {
            let r = try cli.spawn(SandboxTests.helper, [], input: Self.request(7, side, video))
            let out = [UInt8](r.stdout)
            #expect(out.first == 4, "side \(side): answered \(out.first ?? 0)")
        }
    }
}
