// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format

/// The pipe protocol between nu11vlt and `nu11vlt-image-helper` (all integers big-endian).
///
///     request:  op (1 analyze, 2 exif, 3 png, 4 pixels, 5 video, 6 video location, 7 play) | arg u32 | length u64 | image bytes
///
/// `arg`: for analyze, the quarter turns clockwise (0...3) the thumbnails get after EXIF's
/// orientation (the user's rotation); for png and pixels, the max side in its low 28 bits and
/// those quarter turns in its top 4 (`sideAndTurns`); for play, the longest side asked; 0 otherwise.
///     response: status (0 ok, 1 refused) | length u64 | payload
///
/// An analyze payload is `width u32 | height u32 | orientation u8 | alpha u8 | exif length
/// u32 | exif | thumbnail bundle` (the `N11T` bundle of docs/FORMAT.md § 2.1, unsealed); a
/// refusal's payload is a one-line reason in UTF-8. A pixels payload is `width u32 | height
/// u32 | channels u8 (3 RGB, 4 RGBA) | width × height × channels bytes` (8-bit sRGB, rows
/// without padding): the only form in which a decoder's output reaches a process that holds
/// keys, because reading it parses nothing (`RawImage.parse`). A video payload is
/// `ImageWire.encode(VideoAnalysis)`: its poster frame's thumbnails and the container's facts;
/// a video location payload is one byte, 1 when FFmpeg sees a location in the container, else 0.
/// A play request is answered by a stream of messages instead (`VideoStream`), and the helper
/// then exits.
public enum ImageWire {
    public enum Op: UInt8, Sendable { case analyze = 1, exif = 2, png = 3, pixels = 4, video = 5, videoLocation = 6, play = 7 }
    public static let requestHeaderSize = 13
    public static let responseHeaderSize = 9
    /// Larger requests are refused by the helper before it reads them.
    public static let maxRequest = UInt64(ImageLimits.maxBytes)
    /// Larger responses are refused by the client (two thumbnails and an EXIF block, or the
    /// pixels of a 4096 × 4096 RGBA image).
    public static let maxResponse = UInt64(96 << 20)

    /// Decoded pixels: 8-bit sRGB, `channels` bytes a pixel, rows without padding.
    public struct RawImage: Sendable {
        public let width: Int
        public let height: Int
        public let channels: Int
        public let pixels: [UInt8]
        public static let headerSize = 9

        public static func header(width: Int, height: Int, channels: Int) -> [UInt8] {
            be(UInt64(width), 4) + be(UInt64(height), 4) + [UInt8(truncatingIfNeeded: channels)]
        }

        /// Checks every field against the request before a byte is used: sides 1...maxSide,
        /// 3 or 4 channels, and exactly width × height × channels bytes.
        public static func parse(_ p: [UInt8], maxSide: Int) throws(ImageDecodeError) -> RawImage {
            let bad = ImageDecodeError(reason: "the image helper answered nonsense")
            guard p.count >= headerSize else { throw bad }
            let width = Int(read(p[0...], 4)), height = Int(read(p[4...], 4)), channels = Int(p[8])
            guard (1...maxSide).contains(width), (1...maxSide).contains(height), channels == 3 || channels == 4,
                  p.count - headerSize == width * height * channels else { throw bad }
            return RawImage(width: width, height: height, channels: channels, pixels: Array(p[headerSize...]))
        }
    }

    public struct Analysis: Sendable {
        public var header: ImageHeader
        public var exif: [UInt8]?
        public var thumbnails: ThumbnailPair

        public init(header: ImageHeader, exif: [UInt8]?, thumbnails: ThumbnailPair) {
            self.header = header
            self.exif = exif
            self.thumbnails = thumbnails
        }
    }

    /// A png or pixels request's `arg`: the max side (below 2^28) and the quarter turns.
    public static func sideAndTurns(side: Int, turns: Int) -> UInt32 {
        UInt32(min(max(side, 0), 0x0FFF_FFFF)) | UInt32(((turns % 4) + 4) % 4) << 28
    }

    /// The inverse of `sideAndTurns`.
    public static func splitSideAndTurns(_ arg: UInt32) -> (side: Int, turns: Int) {
        (Int(arg & 0x0FFF_FFFF), Int(arg >> 28) & 3)
    }

    static func be(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64(n - 1 - $0))) } }

    static func read(_ b: ArraySlice<UInt8>, _ n: Int) -> UInt64 {
        b.prefix(n).reduce(0) { $0 << 8 | UInt64($1) }
    }

    public static func requestHeader(_ op: Op, arg: UInt32, length: Int) -> [UInt8] {
        [op.rawValue] + be(UInt64(arg), 4) + be(UInt64(length), 8)
    }

    public static func parseRequestHeader(_ b: [UInt8]) -> (op: Op?, arg: UInt32, length: UInt64) {
        (Op(rawValue: b[0]), UInt32(read(b[1...], 4)), read(b[5...], 8))
    }

    public static func responseHeader(ok: Bool, length: Int) -> [UInt8] { [ok ? 0 : 1] + be(UInt64(length), 8) }

    public static func parseResponseHeader(_ b: [UInt8]) -> (ok: Bool, length: UInt64) { (b[0] == 0, read(b[1...], 8)) }

    public static func encode(_ a: Analysis) -> [UInt8] {
        let exif = a.exif ?? []
        let bundle = ThumbnailEnvelope.encode(a.thumbnails.bundleImages)
        return be(UInt64(a.header.width), 4) + be(UInt64(a.header.height), 4) + [UInt8(a.header.orientation), a.header.hasAlpha ? 1 : 0]
            + be(UInt64(exif.count), 4) + exif + bundle
    }

    public static func decodeAnalysis(_ p: [UInt8]) throws(ImageDecodeError) -> Analysis {
        let bad = ImageDecodeError(reason: "the image helper answered nonsense")
        guard p.count >= 14 else { throw bad }
        let exifCount = Int(read(p[10...], 4))
        guard 14 + exifCount <= p.count,
              let images = try? ThumbnailEnvelope.decode(Array(p[(14 + exifCount)...])), images.count == 2,
              let grid = EncodedThumbnail(images, size: ThumbnailPair.gridCode),
              let preview = EncodedThumbnail(images, size: ThumbnailPair.previewCode) else { throw bad }
        let header = ImageHeader(width: Int(read(p[0...], 4)), height: Int(read(p[4...], 4)), orientation: Int(p[8]), hasAlpha: p[9] != 0)
        return Analysis(header: header, exif: exifCount > 0 ? Array(p[14..<(14 + exifCount)]) : nil,
                        thumbnails: ThumbnailPair(grid: grid, preview: preview))
    }
}
