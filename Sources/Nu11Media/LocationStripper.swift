// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format

/// Why a location could not be removed; the export is refused rather than leak it.
public struct LocationStripError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

/// What `LocationStripper.strip` did.
public struct LocationStripReport: Sendable, Equatable {
    /// The file is not an image nu11vlt reads: left as it is.
    public var notAnImage = false
    /// An EXIF GPS block was removed.
    public var removedGPS = false
    /// GPS values in an XMP packet were blanked.
    public var blankedXMP = false
    /// A video: what its container lost (`VideoLocationStripper`).
    public var video: VideoLocationStripper.Report?
    public var changed: Bool { removedGPS || blankedXMP || video?.changed == true }
}

/// Removes location from a photo without re-encoding it: the EXIF GPS directory is
/// unlinked from IFD0 and zeroed, and GPS values in an XMP packet are blanked, all in
/// place — same size, same offsets, the image data byte-identical. Works where the EXIF
/// block is stored uncompressed: JPEG (APP1), PNG (eXIf, CRC recomputed), WebP (EXIF
/// chunk), HEIC/AVIF (Exif item), TIFF (the file is the structure). The result is checked
/// by reading it again; a location that is still there (another place, a compressed
/// packet) fails the strip instead of leaving the export with a location in it. Videos
/// (MP4/QuickTime, Matroska/WebM) go to `VideoLocationStripper`.
public enum LocationStripper {
    public static func strip(_ file: inout [UInt8]) throws(LocationStripError) -> LocationStripReport {
        var report = LocationStripReport()
        guard let format = ImageFormat.sniff(file) else {
            if let video = VideoFormat.sniff(file) {
                report.video = try VideoLocationStripper.stripAndConfirm(&file, format: video)
            } else {
                report.notAnImage = true
            }
            return report
        }
        var changed: [Range<Int>] = []
        for base in try exifPositions(in: file, format: format) {
            guard var tiff = TIFFStructure(file, base: base) else {
                throw LocationStripError(reason: "its EXIF block is damaged, so its location cannot be removed safely")
            }
            if let ranges = try tiff.removeGPS() {
                secureZero(&file)  // the photo's copy before the edit: zeroed, not just freed
                file = tiff.bytes
                changed += ranges
                report.removedGPS = true
            }
        }
        // Every other EXIF block in the file ("Exif\0\0" + a TIFF header): a second APP1
        // segment, a copy in another box — the decoder reads only one of them.
        for base in exifBlocks(in: file) {
            guard var tiff = TIFFStructure(file, base: base), let ranges = try tiff.removeGPS() else { continue }
            secureZero(&file)
            file = tiff.bytes
            changed += ranges
            report.removedGPS = true
        }
        let xmp = blankXMPLocation(&file)
        if !xmp.isEmpty {
            changed += xmp
            report.blankedXMP = true
        }
        if format == .png && !changed.isEmpty { fixPNGChecksums(&file, changed: changed) }
        try verify(file, format: format)
        return report
    }

    /// Where the TIFF header of the file's EXIF block is (every copy of it), when it has a
    /// location to remove.
    static func exifPositions(in file: [UInt8], format: ImageFormat) throws(LocationStripError) -> [Int] {
        if format == .tiff { return ExifSummary.parse(file).hasGPS ? [0] : [] }
        let block = try readEXIF(file)
        guard let block, ExifSummary.parse(block).hasGPS else { return [] }
        let tiff = Array(block[TIFFStructure.tiffStart(in: block)...])
        let hits = occurrences(of: tiff, in: file, limit: 64)
        guard !hits.isEmpty else {
            throw LocationStripError(reason: "its EXIF block is stored in a way Nu11VLT cannot edit in place (\(format.displayName)), so its location cannot be removed without re-encoding")
        }
        return hits
    }

    /// The EXIF block as the decoder sees it (through the image helper). A helper that
    /// cannot read the file means the location cannot be vouched for: refused.
    static func readEXIF(_ file: [UInt8]) throws(LocationStripError) -> [UInt8]? {
        do {
            return try ImageHelper.shared.exif(file)
        } catch {
            throw LocationStripError(reason: "the image cannot be read to find its location (\(error.reason))")
        }
    }

    /// Where the TIFF headers of "Exif\0\0"-prefixed blocks start.
    static func exifBlocks(in file: [UInt8]) -> [Int] {
        let marker = Array("Exif".utf8) + [0, 0]
        return occurrences(of: marker, in: file, limit: 64).map { $0 + marker.count }.filter { p in
            p + 4 <= file.count && (file[p..<(p + 4)].elementsEqual([0x49, 0x49, 0x2A, 0x00]) || file[p..<(p + 4)].elementsEqual([0x4D, 0x4D, 0x00, 0x2A]))
        }
    }

    static func occurrences(of needle: [UInt8], in hay: [UInt8], limit: Int) -> [Int] {
        guard !needle.isEmpty, needle.count <= hay.count else { return [] }
        var found: [Int] = []
        let first = needle[0]
        var i = 0
        while i <= hay.count - needle.count, found.count < limit {
            if hay[i] == first && hay[i..<(i + needle.count)].elementsEqual(needle) { found.append(i) }
            i += 1
        }
        return found
    }

    /// Blanks (with spaces) the values of `exif:GPS…` properties in every XMP packet:
    /// attributes `exif:GPSLatitude="…"` and elements `<exif:GPSLatitude>…</exif:GPSLatitude>`.
    static func blankXMPLocation(_ file: inout [UInt8]) -> [Range<Int>] {
        let key = Array("exif:GPS".utf8)
        var ranges: [Range<Int>] = []
        var i = 0
        while i + key.count <= file.count {
            guard file[i] == key[0], file[i..<(i + key.count)].elementsEqual(key) else { i += 1; continue }
            var j = i + key.count
            while j < file.count, isNameByte(file[j]) { j += 1 }
            let isElement = i > 0 && file[i - 1] == UInt8(ascii: "<")
            var valueStart = j, valueEnd = j
            if isElement, j < file.count, file[j] == UInt8(ascii: ">") {
                valueStart = j + 1
                valueEnd = valueStart
                while valueEnd < file.count, file[valueEnd] != UInt8(ascii: "<") { valueEnd += 1 }
            } else {
                var k = j
                while k < file.count, file[k] == 0x20 { k += 1 }
                if k < file.count, file[k] == UInt8(ascii: "=") {
                    k += 1
                    while k < file.count, file[k] == 0x20 { k += 1 }
                    if k < file.count, file[k] == UInt8(ascii: "\"") || file[k] == UInt8(ascii: "'") {
                        let quote = file[k]
                        valueStart = k + 1
                        valueEnd = valueStart
                        while valueEnd < file.count, file[valueEnd] != quote { valueEnd += 1 }
                    }
                }
            }
            if valueEnd > valueStart {
                for p in valueStart..<valueEnd { file[p] = 0x20 }
                ranges.append(valueStart..<valueEnd)
            }
            i = max(j, valueEnd)
        }
        return ranges
    }

    private static func isNameByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
    }

    /// Recomputes the CRC of every PNG chunk that holds a changed byte.
    static func fixPNGChecksums(_ file: inout [UInt8], changed: [Range<Int>]) {
        var p = 8
        while p + 12 <= file.count {
            let length = Int(file[p]) << 24 | Int(file[p + 1]) << 16 | Int(file[p + 2]) << 8 | Int(file[p + 3])
            let end = p + 8 + length
            guard length >= 0, end + 4 <= file.count else { return }
            let data = (p + 8)..<end
            if changed.contains(where: { $0.overlaps(data) }) {
                let crc = CRC32.checksum(file[(p + 4)..<end])
                file[end] = UInt8(crc >> 24); file[end + 1] = UInt8(crc >> 16 & 0xFF)
                file[end + 2] = UInt8(crc >> 8 & 0xFF); file[end + 3] = UInt8(crc & 0xFF)
            }
            p = end + 4
        }
    }

    /// The result must carry no location nu11vlt can see: no EXIF GPS directory, no XMP
    /// GPS property with a value left.
    static func verify(_ file: [UInt8], format: ImageFormat) throws(LocationStripError) {
        let block = format == .tiff ? file : try readEXIF(file)
        var others = exifBlocks(in: file).map { Array(file[$0...]) }
        defer { for i in others.indices { secureZero(&others[i]) } }
        if ([block].compactMap { $0 } + others).contains(where: { ExifSummary.parse($0).hasGPS }) {
            throw LocationStripError(reason: "a location is still present after stripping (\(format.displayName)); nothing was written")
        }
        if xmpLocationLeft(file) {
            throw LocationStripError(reason: "an XMP location is still present after stripping; nothing was written")
        }
    }

    /// Whether an XMP GPS property still has a value that is not blank (a blanked one is all
    /// spaces, and stays in the packet).
    static func xmpLocationLeft(_ file: [UInt8]) -> Bool {
        var copy = file
        let ranges = blankXMPLocation(&copy)
        guard !ranges.isEmpty else { return false }
        secureZero(&copy)
        return ranges.contains { r in file[r].contains { $0 != 0x20 } }
    }
}

extension TIFFStructure {
    /// Unlinks the GPS directory from IFD0 (the entries after it move up, the count drops,
    /// the next-IFD offset follows) and zeroes the directory and its values. Returns the
    /// changed byte ranges, or nil when there is no GPS directory.
    mutating func removeGPS() throws(LocationStripError) -> [Range<Int>]? {
        let ifd0 = base + firstIFD
        guard let entries = entries(at: firstIFD), let index = entries.firstIndex(where: { $0.tag == 0x8825 }) else {
            return nil
        }
        let damaged = LocationStripError(reason: "its EXIF GPS directory is damaged, so its location cannot be removed safely")
        guard let gpsOffset = value(entries[index]) else { throw damaged }
        var ranges: [Range<Int>] = []
        if let gps = self.entries(at: Int(gpsOffset)) {
            for e in gps where e.byteCount > 4 {
                guard e.dataPosition >= base, e.dataPosition + e.byteCount <= bytes.count else { throw damaged }
                zero(e.dataPosition..<(e.dataPosition + e.byteCount), &ranges)
            }
            let start = base + Int(gpsOffset)
            zero(start..<(start + 2 + gps.count * 12 + 4), &ranges)
        }
        // IFD0 without the GPS pointer: same place, one entry fewer.
        let count = entries.count
        let tableEnd = ifd0 + 2 + count * 12 + 4
        var table = Array(bytes[(ifd0 + 2)..<tableEnd])
        let next = Array(table[(count * 12)...])
        table.removeSubrange((index * 12)..<(index * 12 + 12))
        table.removeLast(4)
        table += next + [UInt8](repeating: 0, count: 12)
        let newCount = UInt16(count - 1)
        bytes[ifd0] = little ? UInt8(newCount & 0xFF) : UInt8(newCount >> 8)
        bytes[ifd0 + 1] = little ? UInt8(newCount >> 8) : UInt8(newCount & 0xFF)
        bytes.replaceSubrange((ifd0 + 2)..<tableEnd, with: table)
        ranges.append(ifd0..<tableEnd)
        return ranges
    }

    private mutating func zero(_ range: Range<Int>, _ ranges: inout [Range<Int>]) {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return }
        for i in range { bytes[i] = 0 }
        ranges.append(range)
    }
}

/// CRC-32 (ISO-HDLC, as PNG uses).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
