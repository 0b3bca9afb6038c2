// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Why a JPEG's orientation could not be set; the export is refused rather than written
/// the wrong way up.
public struct OrientationError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
    public init(reason: String) { self.reason = reason }
}

/// EXIF orientation values (1...8) as a horizontal flip followed by clockwise quarter turns,
/// and a user's rotation added on top.
public enum ExifOrientation {
    /// (flip, turns) of each value 1...8, in order.
    private static let parts: [(flip: Bool, turns: Int)] = [
        (false, 0), (true, 0), (false, 2), (true, 2), (true, 3), (false, 1), (true, 1), (false, 3),
    ]

    /// The value that shows what `value` shows, then turned `quarterTurns` clockwise. A value
    /// outside 1...8 is read as 1 (upright), as decoders do.
    public static func turned(_ value: Int, by quarterTurns: Int) -> Int {
        let p = (1...8).contains(value) ? parts[value - 1] : parts[0]
        let turns = ((p.turns + quarterTurns) % 4 + 4) % 4
        return (parts.firstIndex { $0.flip == p.flip && $0.turns == turns } ?? 0) + 1
    }
}

/// Sets the EXIF Orientation of a JPEG without touching its image data: the tag's value is
/// replaced in place when IFD0 has one; when it has none, a copy of IFD0 with the tag added is
/// appended to the EXIF block and the TIFF header points at it (every other offset stays
/// valid, nothing moves); a JPEG without EXIF gets a minimal APP1 `Exif` segment after SOI
/// (and any APP0). Only the segments before the first SOS are read or changed.
public enum JPEGOrientation {
    /// Where the first SOS marker of a JPEG starts (the end of its header segments), nil
    /// while `bytes` is too short to tell; throws when they are not a JPEG's segments.
    public static func headerEnd(_ bytes: UnsafeRawBufferPointer) throws(OrientationError) -> Int? {
        guard bytes.count >= 2 else { return nil }
        guard bytes[0] == 0xFF, bytes[1] == 0xD8 else { throw OrientationError(reason: "it is not a JPEG file") }
        var p = 2
        while true {
            guard p + 2 <= bytes.count else { return nil }
            guard bytes[p] == 0xFF else { throw OrientationError(reason: "its JPEG segments are damaged") }
            let marker = bytes[p + 1]
            if marker == 0xFF { p += 1; continue }  // fill byte
            if marker == 0xDA { return p }
            if marker == 0xD9 || marker == 0x01 || (0xD0...0xD7).contains(marker) || marker == 0xD8 {
                throw OrientationError(reason: "its JPEG segments are damaged")
            }
            guard p + 4 <= bytes.count else { return nil }
            let length = Int(bytes[p + 2]) << 8 | Int(bytes[p + 3])
            guard length >= 2 else { throw OrientationError(reason: "its JPEG segments are damaged") }
            p += 2 + length
        }
    }

    /// The header (`SOI` up to the first SOS) with its orientation turned `quarterTurns`
    /// clockwise from what it shows now. Unchanged when the result is upright and there was
    /// nothing to say so (no EXIF block, or none with an orientation).
    public static func turn(header: [UInt8], quarterTurns: Int) throws(OrientationError) -> [UInt8] {
        guard quarterTurns % 4 != 0 else { return header }
        var p = 2
        var afterAPP0 = 2
        while p + 4 <= header.count, header[p] == 0xFF {
            let marker = header[p + 1]
            if marker == 0xDA { break }
            let length = Int(header[p + 2]) << 8 | Int(header[p + 3])
            let end = p + 2 + length
            guard end <= header.count else { break }
            if marker == 0xE0 && p == afterAPP0 { afterAPP0 = end }
            if marker == 0xE1, length >= 2 + 6 + 8, Array(header[(p + 4)..<(p + 10)]) == exifPrefix {
                let tiff = Array(header[(p + 10)..<end])
                let turned = try turnTIFF(tiff, quarterTurns: quarterTurns)
                guard turned != tiff else { return header }
                let newLength = 2 + 6 + turned.count
                guard newLength <= 0xFFFF else {
                    throw OrientationError(reason: "its EXIF block is too large to add an orientation to")
                }
                return Array(header[..<p]) + [0xFF, 0xE1, UInt8(newLength >> 8), UInt8(newLength & 0xFF)] + exifPrefix + turned
                    + Array(header[end...])
            }
            p = end
        }
        let value = ExifOrientation.turned(1, by: quarterTurns)
        // A minimal big-endian TIFF: header, IFD0 with the one entry, no next IFD.
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1,
                             0, UInt8(value), 0, 0, 0, 0, 0, 0]
        let length = 2 + 6 + tiff.count
        return Array(header[..<afterAPP0]) + [0xFF, 0xE1, 0, UInt8(length)] + exifPrefix + tiff + Array(header[afterAPP0...])
    }

    static let exifPrefix: [UInt8] = Array("Exif".utf8) + [0, 0]

    /// A TIFF structure (EXIF block) whose IFD0 orientation is turned.
    static func turnTIFF(_ tiff: [UInt8], quarterTurns: Int) throws(OrientationError) -> [UInt8] {
        let damaged = OrientationError(reason: "its EXIF block is damaged, so its orientation cannot be set")
        guard tiff.count >= 8 else { throw damaged }
        let little: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: throw damaged
        }
        func u16(_ at: Int) -> Int { little ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1]) }
        func u32(_ at: Int) -> Int { little ? u16(at) | u16(at + 2) << 16 : u16(at) << 16 | u16(at + 2) }
        func put16(_ v: Int) -> [UInt8] { little ? [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] : [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func put32(_ v: Int) -> [UInt8] { little ? put16(v & 0xFFFF) + put16(v >> 16 & 0xFFFF) : put16(v >> 16 & 0xFFFF) + put16(v & 0xFFFF) }
        guard u16(2) == 42 else { throw damaged }
        let ifd = u32(4)
        guard ifd >= 8, ifd + 2 <= tiff.count else { throw damaged }
        let n = u16(ifd)
        guard ifd + 2 + 12 * n + 4 <= tiff.count else { throw damaged }
        var out = tiff
        var entries: [[UInt8]] = []
        for i in 0..<n {
            let e = ifd + 2 + 12 * i
            if u16(e) == 0x0112 {
                // SHORT, one value, held in the entry itself: replaced in place.
                guard u16(e + 2) == 3, u32(e + 4) == 1 else { throw damaged }
                let value = ExifOrientation.turned(u16(e + 8), by: quarterTurns)
                out.replaceSubrange((e + 8)..<(e + 10), with: put16(value))
                return out
            }
            entries.append(Array(tiff[e..<(e + 12)]))
        }
        let value = ExifOrientation.turned(1, by: quarterTurns)
        if value == 1 { return tiff }
        let next = u32(ifd + 2 + 12 * n)
        let entry = put16(0x0112) + put16(3) + put32(1) + put16(value) + [0, 0]
        let at = entries.firstIndex { (little ? Int($0[0]) | Int($0[1]) << 8 : Int($0[0]) << 8 | Int($0[1])) > 0x0112 } ?? entries.count
        entries.insert(entry, at: at)
        if out.count % 2 == 1 { out.append(0) }  // IFDs start on a word boundary
        let newIFD = out.count
        out += put16(entries.count) + entries.flatMap { $0 } + put32(next)
        out.replaceSubrange(4..<8, with: put32(newIFD))
        return out
    }
}
