// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif
import Nu11Format

/// A video played in the app: the image helper decodes it (CNu11Image/play.c) and answers the
/// `play` request (ImageWire op 7: arg = max side | 0x8000_0000 for sound, then the video's
/// bytes) with a stream of messages, each `kind u8 | length u32 | body` (big-endian):
///
///     1 frame:   pts µs u64 | width u32 | height u32 | width × height × 4 bytes RGBA (8-bit sRGB)
///     2 audio:   pts µs u64 | rate u32 | channels u8 | interleaved signed 16-bit little-endian PCM
///     3 end:     (empty)
///     4 refused: a one-line reason in UTF-8
///
/// The app trusts none of it (the helper may be running a hostile video's code): `Reader`
/// checks every message before a byte of it is used and stops at the first that is out of
/// bounds, so a hostile helper can end its own playback and nothing else.
public enum VideoStream {
    /// The longest side the app may ask for, and the pixels a second the stream may carry
    /// (1920 × 1080 at 30 frames a second; CNu11Image's NU11_PLAY_* say the same).
    public static let maxSide = 1920
    public static let pixelRate: Int64 = 62_208_000
    /// The most video bytes a play request may carry (the helper holds them all in memory,
    /// under its 1.5 GiB limit).
    public static let maxInput = 384 << 20
    /// Presentation times run from 0 to a day.
    public static let maxPTS: Int64 = 86_400_000_000
    public static let headerSize = 5
    static let frameHead = 16
    static let audioHead = 13
    static let maxReason = 400

    public struct Frame: Sendable {
        public let ptsMicros: Int64
        public let width: Int
        public let height: Int
        /// Rows of width × 4 bytes, RGBA, no padding.
        public let pixels: [UInt8]
    }

    public struct Audio: Sendable {
        public let ptsMicros: Int64
        public let rate: Int
        public let channels: Int
        /// Interleaved S16LE, a whole number of sample frames.
        public let samples: [UInt8]
    }

    public enum Message: Sendable {
        case frame(Frame)
        case audio(Audio)
        case end
        case refused(String)
    }

    /// The play request's argument.
    public static func requestArg(maxSide: Int, audio: Bool) -> UInt32 {
        UInt32(min(max(maxSide, 16), Self.maxSide)) | (audio ? 0x8000_0000 : 0)
    }

    public static func parseArg(_ arg: UInt32) -> (maxSide: Int, audio: Bool) {
        (Int(arg & 0xFFFF), arg & 0x8000_0000 != 0)
    }

    // MARK: the helper's side

    public static func frameHeader(ptsMicros: Int64, width: Int, height: Int) -> [UInt8] {
        [1] + ImageWire.be(UInt64(frameHead + width * height * 4), 4) + ImageWire.be(UInt64(max(ptsMicros, 0)), 8)
            + ImageWire.be(UInt64(width), 4) + ImageWire.be(UInt64(height), 4)
    }

    public static func audioHeader(ptsMicros: Int64, rate: Int, channels: Int, bytes: Int) -> [UInt8] {
        [2] + ImageWire.be(UInt64(audioHead + bytes), 4) + ImageWire.be(UInt64(max(ptsMicros, 0)), 8)
            + ImageWire.be(UInt64(rate), 4) + [UInt8(truncatingIfNeeded: channels)]
    }

    public static let endMessage: [UInt8] = [3, 0, 0, 0, 0]

    public static func refusal(_ reason: String) -> [UInt8] {
        let text = Array(reason.utf8.prefix(maxReason))
        return [4] + ImageWire.be(UInt64(text.count), 4) + text
    }

    // MARK: the app's side

    /// Reads and checks the helper's messages from `fd` (blocking). Every violation —
    /// an unknown kind, a length over its kind's bound, a frame whose length is not its
    /// width × height × 4, a side over the one asked for, a time going back or outside a day,
    /// frames faster than `pixelRate` allows, audio not 8000…192000 Hz, 1 or 2 channels and
    /// at most a second long, a short read — throws, and nothing of that message is returned.
    public struct Reader {
        let fd: Int32
        let maxSide: Int
        private var lastFrame: Int64?
        public private(set) var finished = false

        public init(fd: Int32, maxSide: Int) {
            self.fd = fd
            self.maxSide = min(max(maxSide, 16), VideoStream.maxSide)
        }

        static let bad = ImageDecodeError(reason: "the video decoder answered nonsense")

        public mutating func next() throws(ImageDecodeError) -> Message {
            guard !finished else { throw ImageDecodeError(reason: "the video stream has ended") }
            let head = try read(VideoStream.headerSize)
            let kind = head[0]
            let length = Int(ImageWire.read(head[1...], 4))
            switch kind {
            case 1:
                guard length >= frameHead, length <= frameHead + maxSide * maxSide * 4 else { throw Self.bad }
                let fields = try read(frameHead)
                let pts = Int64(ImageWire.read(fields[0...], 8)), width = Int(ImageWire.read(fields[8...], 4)), height = Int(ImageWire.read(fields[12...], 4))
                guard (0..<maxPTS).contains(pts), (1...maxSide).contains(width), (1...maxSide).contains(height),
                      length == frameHead + width * height * 4 else { throw Self.bad }
                if let lastFrame, pts < lastFrame + Int64(width * height) * 1_000_000 / pixelRate { throw Self.bad }
                let pixels = try read(length - frameHead)
                lastFrame = pts
                return .frame(Frame(ptsMicros: pts, width: width, height: height, pixels: pixels))
            case 2:
                guard length > audioHead, length <= audioHead + 192_000 * 2 * 2 else { throw Self.bad }
                let fields = try read(audioHead)
                let pts = Int64(ImageWire.read(fields[0...], 8)), rate = Int(ImageWire.read(fields[8...], 4)), channels = Int(fields[12])
                let bytes = length - audioHead
                guard (0..<maxPTS).contains(pts), (8000...192_000).contains(rate), (1...2).contains(channels),
                      bytes % (2 * channels) == 0, bytes <= rate * channels * 2 else { throw Self.bad }
                return .audio(Audio(ptsMicros: pts, rate: rate, channels: channels, samples: try read(bytes)))
            case 3:
                guard length == 0 else { throw Self.bad }
                finished = true
                return .end
            case 4:
                guard length <= maxReason else { throw Self.bad }
                let text = try read(length)
                guard let reason = String(validating: text, as: UTF8.self), !reason.contains(where: { $0.isNewline }) else { throw Self.bad }
                finished = true
                return .refused(reason)
            default:
                throw Self.bad
            }
        }

        private func read(_ count: Int) throws(ImageDecodeError) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            guard count > 0 else { return bytes }
            let filled = try? bytes.withUnsafeMutableBytes { buffer in try SystemIO.readFully(fd, into: buffer) }
            guard filled == count else { throw ImageDecodeError(reason: "the video decoder stopped (a damaged or hostile video, or over its memory limit)") }
            return bytes
        }
    }
}
