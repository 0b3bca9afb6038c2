// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Walks an MP4/QuickTime file's boxes (ISO/IEC 14496-12, Apple's QuickTime File Format) and
/// overwrites what carries a location with a `free` box of the same size:
///
/// - `©xyz` (QuickTime/Android ISO 6709 text) and `loci` (3GPP location) boxes, wherever they are;
/// - the `ilst` entries of a `meta` box whose `keys` name a location
///   (`com.apple.quicktime.location.ISO6709`, FFmpeg's `location`, …);
/// - GPS values in XMP packets (`uuid` BE7ACFCB-…, QuickTime's `XMP_`), blanked with spaces;
/// - `free`/`skip` padding that holds an ISO 6709 coordinate (left-over metadata) is zeroed.
///
/// Refused: a compressed movie header (`cmov`), a track of GPS telemetry (GoPro `gpmd`, Google
/// `camm`, Apple timed metadata naming a location), and a box that does not fit its parent.
struct BoxWalk {
    var bytes: Bytes
    var report = VideoLocationStripper.Report()
    /// Every byte range outside `mdat` (for the ISO 6709 scan).
    var metadata: [Range<Int>] = []
    private var strip = false

    init(file: [UInt8]) { bytes = Bytes(array: file) }

    private static let containers: Set<String> = ["moov", "trak", "udta", "mdia", "minf", "stbl", "moof", "traf", "edts", "mvex"]
    private static let xmpUUID: [UInt8] = [0xBE, 0x7A, 0xCF, 0xCB, 0x97, 0xA9, 0x42, 0xE8, 0x9C, 0x71, 0x99, 0x94, 0x91, 0xE3, 0xAF, 0xAC]

    struct Box {
        var start: Int
        var header: Int
        var end: Int
        var type: [UInt8]
        /// The type as ISO 8859-1 (QuickTime's `©xyz` starts with 0xA9).
        var name: String { String(String.UnicodeScalarView(type.map { Unicode.Scalar($0) })) }
        var payload: Range<Int> { (start + header)..<end }
    }

    func damaged(_ what: String) -> LocationStripError {
        LocationStripError(reason: "its \(what) is damaged or truncated, so its location cannot be removed safely")
    }

    mutating func run(strip: Bool) throws(LocationStripError) {
        self.strip = strip
        guard let first = try boxes(in: 0..<bytes.count).first, first.name == "ftyp" else { throw damaged("MP4/QuickTime container") }
        for box in try boxes(in: 0..<bytes.count) {
            if box.name == "mdat" {
                metadata.append(box.start..<box.payload.lowerBound)
            } else {
                metadata.append(box.start..<box.end)
                try visit(box, depth: 1)
            }
        }
    }

    /// The boxes that tile `range` one after the other. Fewer than 8 bytes left over (QuickTime's
    /// 32-bit terminator in `udta`) end the list; so does a zero size with a zero type, when
    /// only zeros follow.
    func boxes(in range: Range<Int>) throws(LocationStripError) -> [Box] {
        var list: [Box] = []
        var p = range.lowerBound
        while p < range.upperBound {
            let left = range.upperBound - p
            guard left >= 8, let size32 = bytes.be(p, 4), let type = bytes.slice((p + 4)..<(p + 8)) else {
                guard bytes.slice(p..<range.upperBound)?.allSatisfy({ $0 == 0 }) == true else { throw damaged("box list") }
                break
            }
            var header = 8, size = Int(size32)
            if size32 == 1 {
                guard left >= 16, let large = bytes.be(p + 8, 8), large <= UInt64(left) else { throw damaged("box \(Box(start: p, header: 8, end: p, type: Array(type)).name)") }
                header = 16
                size = Int(large)
            } else if size32 == 0 {
                if type.allSatisfy({ $0 == 0 }) {
                    guard bytes.slice(p..<range.upperBound)?.allSatisfy({ $0 == 0 }) == true else { throw damaged("box list") }
                    break
                }
                size = left
            }
            guard size >= header, size <= left else { throw damaged("box \(Box(start: p, header: 8, end: p, type: Array(type)).name)") }
            list.append(Box(start: p, header: header, end: p + size, type: Array(type)))
            p += size
        }
        return list
    }

    private mutating func visit(_ box: Box, depth: Int) throws(LocationStripError) {
        guard depth <= VideoLocationStripper.maxDepth else { throw damaged("box nesting") }
        switch box.name {
        case "cmov":
            throw LocationStripError(reason: "its movie header is compressed (cmov), so its location cannot be removed without rewriting the file")
        case "\u{A9}xyz", "loci":
            overwrite(box)
        case "meta":
            try visitMeta(box, depth: depth)
        case "stsd":
            try checkSampleEntries(box)
        case "uuid":
            if box.payload.count >= 16, bytes.slice(box.payload.lowerBound..<(box.payload.lowerBound + 16)).map(Array.init) == Self.xmpUUID {
                blankXMP(box.payload.lowerBound + 16..<box.end)
            }
        case "XMP_":
            blankXMP(box.payload)
        case "free", "skip", "wide":
            if ISO6709.find(in: bytes.array, range: box.payload) != nil {
                report.removed += 1
                if strip { bytes.fill(box.payload, with: 0) }
            }
        default:
            if Self.containers.contains(box.name) {
                for child in try boxes(in: box.payload) { try visit(child, depth: depth + 1) }
            }
        }
    }

    /// ISO `meta` is a full box (4 bytes of version and flags before its children); Apple's
    /// QuickTime `meta` is not. Its children start where a `hdlr` box is.
    private mutating func visitMeta(_ box: Box, depth: Int) throws(LocationStripError) {
        let p = box.payload.lowerBound
        let plain = bytes.slice((p + 4)..<(p + 8)).map(Array.init) == Array("hdlr".utf8)
        guard plain || box.end - p >= 4 else { throw damaged("metadata box") }
        let children = try boxes(in: (plain ? p : p + 4)..<box.end)
        var locationKeys: Set<UInt32> = []
        for child in children where child.name == "keys" {
            locationKeys.formUnion(try keys(child))
        }
        for child in children {
            if child.name == "ilst" {
                for item in try boxes(in: child.payload) {
                    let index = UInt32(bytes.be(item.start + 4, 4) ?? 0)
                    if locationKeys.contains(index) || item.name == "\u{A9}xyz" || item.name == "loci" {
                        overwrite(item)
                    } else if item.name == "XMP_" {
                        blankXMP(item.payload)
                    }
                }
            } else if child.name != "keys" && child.name != "hdlr" {
                try visit(child, depth: depth + 1)
            }
        }
    }

    /// The 1-based indices of `keys` entries (`size u32 | namespace | name`) that name a location.
    private func keys(_ box: Box) throws(LocationStripError) -> Set<UInt32> {
        let p = box.payload.lowerBound
        guard let count = bytes.be(p + 4, 4) else { throw damaged("metadata keys") }
        var found: Set<UInt32> = []
        var at = p + 8
        var index: UInt32 = 1
        while at < box.end, UInt64(index) <= count {
            guard let size = bytes.be(at, 4), size >= 8, size <= UInt64(box.end - at),
                  let name = bytes.slice((at + 8)..<(at + Int(size))) else { throw damaged("metadata keys") }
            if LocationNames.isLocation(name) { found.insert(index) }
            at += Int(size)
            index += 1
        }
        return found
    }

    /// A sample description whose format is GPS telemetry: refused (the samples are media data).
    private func checkSampleEntries(_ box: Box) throws(LocationStripError) {
        let p = box.payload.lowerBound + 8
        guard p <= box.end else { throw damaged("sample description") }
        for entry in try boxes(in: p..<box.end) {
            let timed = entry.name == "mebx" && bytes.slice(entry.payload).map { LocationNames.isLocation($0) } == true
            if entry.name == "gpmd" || entry.name == "camm" || timed {
                throw LocationStripError(reason: "it has a track of location data (\(entry.name)), which cannot be removed without rewriting the file")
            }
        }
    }

    /// The box becomes `free` (same size, same header form), its payload zeros.
    private mutating func overwrite(_ box: Box) {
        report.removed += 1
        guard strip else { return }
        bytes.write(Array("free".utf8), at: box.start + 4)
        bytes.fill(box.payload, with: 0)
    }

    /// Blanks GPS values in the XMP packet in `range`, in place.
    private mutating func blankXMP(_ range: Range<Int>) {
        guard var packet = bytes.slice(range).map(Array.init) else { return }
        defer { for i in packet.indices { packet[i] = 0 } }
        // A value that is already blank (spaces) is no location.
        let blanked = LocationStripper.blankXMPLocation(&packet).filter { r in
            bytes.slice((range.lowerBound + r.lowerBound)..<(range.lowerBound + r.upperBound))?.contains { $0 != 0x20 } == true
        }
        guard !blanked.isEmpty else { return }
        report.blankedXMP += blanked.count
        if strip { bytes.write(packet, at: range.lowerBound) }
    }
}
