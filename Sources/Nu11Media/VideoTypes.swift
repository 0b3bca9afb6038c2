// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format

/// The video containers nu11vlt makes a poster frame for (FFmpeg in the image helper), told
/// by their first bytes.
public enum VideoFormat: String, Sendable, CaseIterable {
    case mp4, quicktime, matroska

    /// The container the first bytes announce, or nil. HEIF's `ftyp` brands are images.
    public static func sniff(_ head: some Collection<UInt8>) -> VideoFormat? {
        let b = Array(head.prefix(16))
        if b.count >= 4 && b[0] == 0x1A && b[1] == 0x45 && b[2] == 0xDF && b[3] == 0xA3 { return .matroska }
        guard b.count >= 12, Array(b[4..<8]) == Array("ftyp".utf8), let brand = String(bytes: b[8..<12], encoding: .ascii) else { return nil }
        if brand == "qt  " { return .quicktime }
        let mp4 = ["isom", "iso2", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "M4V ", "3gp4", "3gp5", "3gp6", "3g2a", "MSNV", "dash", "XAVC", "f4v ", "kddi"]
        return mp4.contains(brand) ? .mp4 : nil
    }

    public var mimeType: String {
        switch self {
        case .mp4: "video/mp4"
        case .quicktime: "video/quicktime"
        case .matroska: "video/x-matroska"
        }
    }
}

/// What the helper found in a video: the container's facts and the poster frame's thumbnails.
public struct VideoAnalysis: Sendable {
    /// As displayed (after the container's rotation).
    public var width: Int
    public var height: Int
    /// Milliseconds, nil when the container does not say.
    public var durationMS: Int?
    /// The container's creation date as written (ISO 8601), not yet trusted: see `VideoDate`.
    public var created: String?
    /// Whether the container carries a location (QuickTime's ISO 6709 tag).
    public var hasLocation: Bool
    public var thumbnails: ThumbnailPair

    public init(width: Int, height: Int, durationMS: Int?, created: String?, hasLocation: Bool, thumbnails: ThumbnailPair) {
        self.width = width
        self.height = height
        self.durationMS = durationMS
        self.created = created
        self.hasLocation = hasLocation
        self.thumbnails = thumbnails
    }
}

/// A container's creation date: `2024-05-01T10:20:30.000000Z` (MP4's creation_time, UTC),
/// `2024-05-01T12:20:30+0200` (Apple's creationdate, with its time zone) or
/// `2024-05-01 10:20:30` (UTC). Anything else, and QuickTime's zero date (1904), is nil.
public enum VideoDate {
    public static func parse(_ text: String) -> Date? {
        guard let m = text.wholeMatch(of: /(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})?/) else { return nil }
        var parts = DateComponents()
        parts.year = Int(m.1)
        parts.month = Int(m.2)
        parts.day = Int(m.3)
        parts.hour = Int(m.4)
        parts.minute = Int(m.5)
        parts.second = Int(m.6)
        var offset = 0
        if let zone = m.8, zone != "Z" {
            let digits = zone.dropFirst().filter(\.isNumber)
            let hours = Int(digits.prefix(2)) ?? 0, minutes = Int(digits.suffix(2)) ?? 0
            guard hours <= 14 && minutes < 60 else { return nil }
            offset = (hours * 3600 + minutes * 60) * (zone.first == "-" ? -1 : 1)
        }
        guard let year = parts.year, (1971...9999).contains(year), let month = parts.month, (1...12).contains(month),
              let day = parts.day, (1...31).contains(day), let hour = parts.hour, hour < 24,
              let minute = parts.minute, minute < 60, let second = parts.second, second < 61,
              let zone = TimeZone(secondsFromGMT: offset) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let date = calendar.date(from: parts), calendar.component(.day, from: date) == day else { return nil }
        return date
    }
}

extension ImageWire {
    /// A video payload: `width u32 | height u32 | duration ms u64 (all ones: unknown) |
    /// location u8 | created length u8 | created (UTF-8) | thumbnail bundle`.
    public static func encode(_ v: VideoAnalysis) -> [UInt8] {
        let created = Array((v.created ?? "").utf8.prefix(63))
        return be(UInt64(v.width), 4) + be(UInt64(v.height), 4) + be(v.durationMS.map { UInt64(max($0, 0)) } ?? UInt64.max, 8)
            + [v.hasLocation ? 1 : 0, UInt8(created.count)] + created + ThumbnailEnvelope.encode(v.thumbnails.bundleImages)
    }

    /// Checks every field before use: sides 1...16384, a duration under a year, a date of
    /// printable ASCII, a bundle with both sizes.
    public static func decodeVideo(_ p: [UInt8]) throws(ImageDecodeError) -> VideoAnalysis {
        let bad = ImageDecodeError(reason: "the image helper answered nonsense")
        guard p.count >= 18 else { throw bad }
        let width = Int(read(p[0...], 4)), height = Int(read(p[4...], 4)), duration = read(p[8...], 8)
        let createdCount = Int(p[17])
        guard (1...16384).contains(width), (1...16384).contains(height), p[16] <= 1, createdCount < 64, 18 + createdCount <= p.count,
              duration == UInt64.max || duration < 366 * 86_400_000 else { throw bad }
        let createdBytes = Array(p[18..<(18 + createdCount)])
        guard createdBytes.allSatisfy({ (0x20..<0x7F).contains($0) }),
              let images = try? ThumbnailEnvelope.decode(Array(p[(18 + createdCount)...])), images.count == 2,
              let grid = EncodedThumbnail(images, size: ThumbnailPair.gridCode),
              let preview = EncodedThumbnail(images, size: ThumbnailPair.previewCode) else { throw bad }
        return VideoAnalysis(width: width, height: height, durationMS: duration == UInt64.max ? nil : Int(duration),
                             created: createdBytes.isEmpty ? nil : String(decoding: createdBytes, as: UTF8.self),
                             hasLocation: p[16] == 1, thumbnails: ThumbnailPair(grid: grid, preview: preview))
    }
}
