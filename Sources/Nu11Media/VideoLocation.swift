// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Removes the location from a video's container without touching its media: MP4/QuickTime
/// (ISO-BMFF, `BoxWalk`) and Matroska/WebM (`EBMLWalk`). What carries a location is
/// overwritten where it stands by filler of exactly the same size — an ISO-BMFF box becomes a
/// `free` box, a Matroska element a `Void` element — so no chunk offset, seek entry or cue
/// moves and the media data (`mdat`, Clusters) stays byte-identical.
///
/// This runs in the process that holds the keys, on plaintext, so it is written as a byte
/// walker that cannot crash or read out of bounds on any input (the fuzz target
/// `video-location` and `VideoLocationTests` feed it truncated and mutated files): every read
/// goes through `Bytes`, which answers nil outside the array; sizes are compared against
/// what is left (never added), nesting is capped at `maxDepth`, and every step moves forward.
/// It decodes nothing: FFmpeg, which does, only ever sees the file in the image helper's
/// lock-down (`ImageHelper.videoHasLocation`, the second opinion on the result).
///
/// A container it cannot walk to its end (truncated, damaged, compressed `cmov`, an element
/// of unknown size where a size is needed) or a location it cannot overwrite (a GPS telemetry
/// track) is refused: the export fails, nothing is written.
public enum VideoLocationStripper {
    /// What a strip removed.
    public struct Report: Sendable, Equatable {
        /// Boxes or elements turned into filler (a `©xyz`/`loci` box, a `keys`/`ilst` entry,
        /// a Matroska tag).
        public var removed = 0
        /// GPS values blanked in XMP packets.
        public var blankedXMP = 0
        public var changed: Bool { removed > 0 || blankedXMP > 0 }
    }

    static let maxDepth = 24

    /// Strips `file` in place (same size), then walks the result again, which must find no
    /// location, and scans every byte outside the media data for an ISO 6709 coordinate.
    public static func strip(_ file: inout [UInt8], format: VideoFormat) throws(LocationStripError) -> Report {
        let report: Report
        switch format {
        case .mp4, .quicktime:
            var walk = BoxWalk(file: file)
            file = []
            defer { file = walk.bytes.take() }
            try walk.run(strip: true)
            report = walk.report
        case .matroska:
            var walk = EBMLWalk(file: file)
            file = []
            defer { file = walk.bytes.take() }
            try walk.run(strip: true)
            report = walk.report
        }
        try verify(file, format: format)
        return report
    }

    /// `strip`, then a second opinion: FFmpeg, in the image helper's lock-down, must find no
    /// location in the result either (for a file the helper takes, up to
    /// `ImageLimits.maxBytes`; a larger one has the walker's word alone). A helper that cannot
    /// read the result means the location cannot be vouched for: refused.
    public static func stripAndConfirm(_ file: inout [UInt8], format: VideoFormat) throws(LocationStripError) -> Report {
        let report = try strip(&file, format: format)
        guard file.count <= Int(ImageWire.maxRequest) else { return report }
        let seen: Bool
        do { seen = try ImageHelper.shared.videoHasLocation(file) } catch {
            throw LocationStripError(reason: "the video cannot be read to confirm its location is gone (\(error.reason))")
        }
        if seen {
            throw LocationStripError(reason: "FFmpeg still reads a location in it after stripping, in a place Nu11VLT cannot edit in place; nothing was written")
        }
        return report
    }

    /// Whether a location is left that this walker knows of (a walk without changes), or an
    /// ISO 6709 coordinate anywhere outside the media data. Throws when the file cannot be walked.
    public static func verify(_ file: [UInt8], format: VideoFormat) throws(LocationStripError) {
        let found: Int, metadata: [Range<Int>]
        switch format {
        case .mp4, .quicktime:
            var walk = BoxWalk(file: file)
            try walk.run(strip: false)
            found = walk.report.removed + walk.report.blankedXMP
            metadata = walk.metadata
        case .matroska:
            var walk = EBMLWalk(file: file)
            try walk.run(strip: false)
            found = walk.report.removed
            metadata = walk.metadata
        }
        if found > 0 {
            throw LocationStripError(reason: "a location is still present after stripping (\(format.rawValue)); nothing was written")
        }
        if let at = metadata.lazy.compactMap({ ISO6709.find(in: file, range: $0) }).first {
            throw LocationStripError(reason: "its container holds a location (ISO 6709, at byte \(at)) where Nu11VLT cannot remove it without rewriting the file")
        }
    }
}

/// Bounds-checked big-endian reads over a byte array: nil outside it, never a trap.
struct Bytes {
    var array: [UInt8]

    var count: Int { array.count }

    func u8(_ at: Int) -> UInt8? { at >= 0 && at < array.count ? array[at] : nil }

    func be(_ at: Int, _ n: Int) -> UInt64? {
        guard at >= 0, n >= 0, n <= 8, at <= array.count - n else { return nil }
        var v: UInt64 = 0
        for i in 0..<n { v = v << 8 | UInt64(array[at + i]) }
        return v
    }

    /// Whether `range` lies inside the array.
    func holds(_ range: Range<Int>) -> Bool { range.lowerBound >= 0 && range.upperBound <= array.count }

    func slice(_ range: Range<Int>) -> ArraySlice<UInt8>? { holds(range) ? array[range] : nil }

    mutating func fill(_ range: Range<Int>, with value: UInt8) {
        guard holds(range) else { return }
        for i in range { array[i] = value }
    }

    mutating func write(_ bytes: [UInt8], at: Int) {
        guard at >= 0, at <= array.count - bytes.count else { return }
        for (i, b) in bytes.enumerated() { array[at + i] = b }
    }

    /// Hands the array over, leaving this empty (no copy stays behind).
    mutating func take() -> [UInt8] {
        let a = array
        array = []
        return a
    }
}

/// ISO 6709 coordinates as text ("+48.8584+002.2945/", "-33.86+151.21+010.000/"): a sign,
/// two latitude digits, an optional fraction, a sign, three longitude digits.
enum ISO6709 {
    static func find(in file: [UInt8], range: Range<Int>) -> Int? {
        let lower = max(0, range.lowerBound), upper = min(file.count, range.upperBound)
        guard lower < upper else { return nil }
        var i = lower
        while i < upper {
            if isSign(file[i]), let end = number(file, i + 1, upper, digits: 2), end < upper, isSign(file[end]),
               number(file, end + 1, upper, digits: 3) != nil {
                return i
            }
            i += 1
        }
        return nil
    }

    private static func isSign(_ b: UInt8) -> Bool { b == UInt8(ascii: "+") || b == UInt8(ascii: "-") }
    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// The end of `digits` digits and an optional fraction at `at`, or nil.
    private static func number(_ file: [UInt8], _ at: Int, _ upper: Int, digits: Int) -> Int? {
        guard at >= 0, upper - at >= digits else { return nil }
        for k in 0..<digits where !isDigit(file[at + k]) { return nil }
        var p = at + digits
        if p < upper, file[p] == UInt8(ascii: ".") {
            p += 1
            guard p < upper, isDigit(file[p]) else { return nil }
            while p < upper, isDigit(file[p]) { p += 1 }
        }
        // Not the middle of a longer number.
        if p < upper, isDigit(file[p]) { return nil }
        return p
    }
}

/// Names of metadata keys and tags that carry a location.
enum LocationNames {
    static func isLocation(_ name: some Collection<UInt8>) -> Bool {
        let lower = String(decoding: name, as: UTF8.self).lowercased()
        return ["location", "gps", "iso6709", "latitude", "longitude", "coordinates"].contains { lower.contains($0) }
    }
}
