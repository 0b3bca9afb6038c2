// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// What nu11vlt reads from a photo's EXIF block: capture date, camera, whether it carries
/// a location. Parsed here (bounds-checked, never trusting an offset) from the TIFF
/// structure libvips hands over.
public struct ExifSummary: Sendable, Equatable {
    /// DateTimeOriginal as written ("YYYY:MM:DD HH:MM:SS"), and its offset if recorded.
    public var taken: String?
    public var takenOffset: String?
    public var make: String?
    public var model: String?
    public var hasGPS = false

    public init() {}

    /// The capture date: with OffsetTimeOriginal when the camera wrote one, else read in
    /// the local time zone (as the camera's clock was).
    public var takenDate: Date? {
        guard let taken, taken.count >= 19 else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        if let offset = takenOffset, offset.count == 6 {
            formatter.dateFormat = "yyyy:MM:dd HH:mm:ssxxx"
            return formatter.date(from: String(taken.prefix(19)) + offset)
        }
        formatter.dateFormat = "yyyy:MM:dd HH:mm:ss"
        formatter.timeZone = TimeZone.current
        return formatter.date(from: String(taken.prefix(19)))
    }

    /// "Make Model", without the make repeated when the model already names it.
    public var camera: String? {
        let make = self.make?.trimmingCharacters(in: .whitespaces) ?? ""
        let model = self.model?.trimmingCharacters(in: .whitespaces) ?? ""
        if model.isEmpty { return make.isEmpty ? nil : make }
        if make.isEmpty || model.lowercased().hasPrefix(make.lowercased()) { return model }
        return make + " " + model
    }

    /// Parses an EXIF block (TIFF bytes, optionally after "Exif\0\0"). Damaged blocks give
    /// what could be read; nothing here throws.
    public static func parse(_ block: [UInt8]) -> ExifSummary {
        var summary = ExifSummary()
        guard let tiff = TIFFStructure(block, base: TIFFStructure.tiffStart(in: block)) else { return summary }
        guard let ifd0 = tiff.entries(at: tiff.firstIFD) else { return summary }
        for entry in ifd0 {
            switch entry.tag {
            case 0x010F: summary.make = tiff.ascii(entry)
            case 0x0110: summary.model = tiff.ascii(entry)
            case 0x8825: summary.hasGPS = (tiff.value(entry).flatMap { tiff.entries(at: Int($0)) }?.isEmpty == false)
            case 0x8769:
                guard let sub = tiff.value(entry).flatMap({ tiff.entries(at: Int($0)) }) else { continue }
                for e in sub {
                    if e.tag == 0x9003 { summary.taken = tiff.ascii(e) }
                    if e.tag == 0x9011 { summary.takenOffset = tiff.ascii(e) }
                }
            default: continue
            }
        }
        return summary
    }
}

/// A TIFF structure inside a larger buffer (an EXIF block in a JPEG, PNG, WebP or HEIF
/// file), read and edited in place. Every offset is checked against the buffer.
struct TIFFStructure {
    struct Entry {
        var position: Int   // of the 12-byte entry, in the buffer
        var tag: UInt16
        var type: UInt16
        var count: UInt32
        var byteCount: Int
        var dataPosition: Int  // where the value bytes are, in the buffer
    }

    var bytes: [UInt8]
    let base: Int
    let little: Bool

    /// Where the TIFF header starts in an EXIF block ("Exif\0\0" is skipped).
    static func tiffStart(in block: [UInt8]) -> Int {
        block.starts(with: Array("Exif".utf8) + [0, 0]) ? 6 : 0
    }

    init?(_ bytes: [UInt8], base: Int) {
        guard base >= 0, bytes.count >= base + 8 else { return nil }
        let order = (bytes[base], bytes[base + 1])
        switch order {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        self.bytes = bytes
        self.base = base
        guard u16(base + 2) == 42 else { return nil }
    }

    var firstIFD: Int { Int(u32(base + 4) ?? 0) }

    func u16(_ at: Int) -> UInt16? {
        guard at >= 0, at + 2 <= bytes.count else { return nil }
        let a = UInt16(bytes[at]), b = UInt16(bytes[at + 1])
        return little ? a | b << 8 : a << 8 | b
    }

    func u32(_ at: Int) -> UInt32? {
        guard let lo = u16(little ? at : at + 2), let hi = u16(little ? at + 2 : at) else { return nil }
        return UInt32(lo) | UInt32(hi) << 16
    }

    static func size(ofType type: UInt16) -> Int {
        switch type {
        case 1, 2, 6, 7: 1
        case 3, 8: 2
        case 4, 9, 11, 13: 4
        case 5, 10, 12: 8
        default: 1
        }
    }

    /// The entries of the IFD at `offset` (relative to the TIFF header), or nil when the
    /// IFD does not fit in the buffer.
    func entries(at offset: Int) -> [Entry]? {
        let start = base + offset
        guard offset >= 8, let count = u16(start), start + 2 + Int(count) * 12 + 4 <= bytes.count else { return nil }
        var out: [Entry] = []
        for i in 0..<Int(count) {
            let p = start + 2 + i * 12
            guard let tag = u16(p), let type = u16(p + 2), let n = u32(p + 4), let v = u32(p + 8) else { return nil }
            let (byteCount, overflow) = Int(n).multipliedReportingOverflow(by: Self.size(ofType: type))
            guard !overflow else { return nil }
            let data = byteCount <= 4 ? p + 8 : base + Int(v)
            out.append(Entry(position: p, tag: tag, type: type, count: n, byteCount: byteCount, dataPosition: data))
        }
        return out
    }

    /// The value of a LONG (or SHORT) entry: an IFD pointer, typically.
    func value(_ entry: Entry) -> UInt32? {
        entry.type == 3 ? u16(entry.position + 8).map(UInt32.init) : u32(entry.position + 8)
    }

    func ascii(_ entry: Entry) -> String? {
        guard entry.type == 2, entry.dataPosition >= 0, entry.dataPosition + entry.byteCount <= bytes.count else { return nil }
        let raw = bytes[entry.dataPosition..<(entry.dataPosition + entry.byteCount)].prefix { $0 != 0 }
        return String(bytes: raw, encoding: .utf8).map { String($0.prefix(64)) }
    }
}
