// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Walks a Matroska/WebM file's elements (RFC 8794 EBML, RFC 9559 Matroska) and overwrites
/// every `SimpleTag` whose `TagName` names a location (`LOCATION`, as FFmpeg writes it;
/// anything with GPS, ISO6709, LATITUDE, …) with a `Void` element of the same size — the whole
/// `Tag` when no other tag is left in it. A `CRC-32` element at the head of a changed master
/// element is recomputed. Clusters (the media) are stepped over, never read; one of unknown
/// size (live recordings) ends where the next top-level element starts.
struct EBMLWalk {
    var bytes: Bytes
    var report = VideoLocationStripper.Report()
    /// Every byte range that is not inside a Cluster (for the ISO 6709 scan).
    var metadata: [Range<Int>] = []
    private var strip = false

    init(file: [UInt8]) { bytes = Bytes(array: file) }

    enum ID {
        static let ebml: UInt32 = 0x1A45_DFA3, segment: UInt32 = 0x1853_8067, cluster: UInt32 = 0x1F43_B675
        static let tags: UInt32 = 0x1254_C367, tag: UInt32 = 0x7373, simpleTag: UInt32 = 0x67C8, tagName: UInt32 = 0x45A3
        static let void: UInt32 = 0xEC, crc: UInt32 = 0xBF
        /// What may follow a Cluster at the top of a Segment.
        static let topLevel: Set<UInt32> = [0x114D_9B74, 0x1549_A966, 0x1654_AE6B, 0x1C53_BB6B, 0x1043_A770, 0x1941_A469,
                                            tags, cluster, segment, ebml]
    }

    struct Element {
        var start: Int
        var id: UInt32
        var dataStart: Int
        /// nil: unknown size (it lasts until its parent ends).
        var size: Int?
        var end: Int
        var data: Range<Int> { dataStart..<end }
    }

    func damaged(_ what: String) -> LocationStripError {
        LocationStripError(reason: "its \(what) is damaged or truncated, so its location cannot be removed safely")
    }

    /// The element header at `p`, its size checked against `limit`.
    func element(at p: Int, limit: Int) throws(LocationStripError) -> Element {
        guard p < limit, let first = bytes.u8(p), first != 0 else { throw damaged("Matroska element") }
        let idLength = first.leadingZeroBitCount + 1
        guard idLength <= 4, idLength <= limit - p, let id = bytes.be(p, idLength) else { throw damaged("Matroska element") }
        let s = p + idLength
        guard s < limit, let lead = bytes.u8(s), lead != 0 else { throw damaged("Matroska element size") }
        let sizeLength = lead.leadingZeroBitCount + 1
        guard sizeLength <= limit - s, let raw = bytes.be(s, sizeLength) else { throw damaged("Matroska element size") }
        let value = raw & ~(UInt64(1) << UInt64(7 * sizeLength))
        let unknown = value == (UInt64(1) << UInt64(7 * sizeLength)) - 1
        let dataStart = s + sizeLength
        if unknown { return Element(start: p, id: UInt32(id), dataStart: dataStart, size: nil, end: limit) }
        guard value <= UInt64(limit - dataStart) else { throw damaged("Matroska element \(String(id, radix: 16))") }
        return Element(start: p, id: UInt32(id), dataStart: dataStart, size: Int(value), end: dataStart + Int(value))
    }

    /// The children of a master element, each of known size.
    func children(of range: Range<Int>) throws(LocationStripError) -> [Element] {
        var list: [Element] = []
        var p = range.lowerBound
        while p < range.upperBound {
            let e = try element(at: p, limit: range.upperBound)
            guard e.size != nil else { throw damaged("Matroska tag list") }
            list.append(e)
            p = e.end
        }
        return list
    }

    mutating func run(strip: Bool) throws(LocationStripError) {
        self.strip = strip
        let header = try element(at: 0, limit: bytes.count)
        guard header.id == ID.ebml, header.size != nil else { throw damaged("Matroska header") }
        metadata.append(header.start..<header.end)
        var p = header.end
        while p < bytes.count {
            if bytes.slice(p..<bytes.count)?.allSatisfy({ $0 == 0 }) == true { break }  // padding at the end
            let e = try element(at: p, limit: bytes.count)
            switch e.id {
            case ID.segment: try segment(e)
            default:
                guard e.size != nil, e.id == ID.ebml || e.id == ID.void else { throw damaged("Matroska file") }
                metadata.append(e.start..<e.end)
            }
            p = e.end
        }
    }

    private mutating func segment(_ segment: Element) throws(LocationStripError) {
        metadata.append(segment.start..<segment.dataStart)
        var p = segment.dataStart
        while p < segment.end {
            var e = try element(at: p, limit: segment.end)
            if e.id == ID.cluster {
                if e.size == nil { e.end = try clusterEnd(e, limit: segment.end) }
                metadata.append(e.start..<e.dataStart)
            } else {
                guard e.size != nil else { throw damaged("Matroska element \(String(e.id, radix: 16)) of unknown size") }
                metadata.append(e.start..<e.end)
                if e.id == ID.tags { try tags(e) }
            }
            p = e.end
        }
    }

    /// Where a Cluster of unknown size ends: at the first top-level element after it.
    private func clusterEnd(_ cluster: Element, limit: Int) throws(LocationStripError) -> Int {
        var p = cluster.dataStart
        while p < limit {
            let e = try element(at: p, limit: limit)
            if ID.topLevel.contains(e.id) { return p }
            guard e.size != nil else { throw damaged("Matroska cluster") }
            p = e.end
        }
        return limit
    }

    private mutating func tags(_ tags: Element) throws(LocationStripError) {
        var changed = false
        for tag in try children(of: tags.data) where tag.id == ID.tag {
            let simple = try children(of: tag.data).filter { $0.id == ID.simpleTag }
            var located: [Element] = []
            for e in simple {
                if try isLocation(e) { located.append(e) }
            }
            if !simple.isEmpty && located.count == simple.count {
                void(tag)
                changed = true
                continue
            }
            var inner = false
            for e in simple {
                if located.contains(where: { $0.start == e.start }) {
                    void(e)
                    inner = true
                } else if try nested(e, depth: 1) {
                    inner = true
                }
            }
            if inner { fixCRC(tag) }
            changed = changed || inner
        }
        if changed { fixCRC(tags) }
    }

    /// Voids the location tags nested in a SimpleTag; true when it changed.
    private mutating func nested(_ simple: Element, depth: Int) throws(LocationStripError) -> Bool {
        guard depth <= VideoLocationStripper.maxDepth else { throw damaged("Matroska tag nesting") }
        var changed = false
        for e in try children(of: simple.data) where e.id == ID.simpleTag {
            if try isLocation(e) {
                void(e)
                changed = true
            } else if try nested(e, depth: depth + 1) {
                changed = true
            }
        }
        if changed { fixCRC(simple) }
        return changed
    }

    private func isLocation(_ simple: Element) throws(LocationStripError) -> Bool {
        guard let name = try children(of: simple.data).first(where: { $0.id == ID.tagName }) else { return false }
        return bytes.slice(name.data).map { LocationNames.isLocation($0) } ?? false
    }

    /// The element becomes a Void element of the same length: ID 0xEC, a size field as long
    /// as fits (up to 8 bytes), zeros.
    private mutating func void(_ e: Element) {
        report.removed += 1
        guard strip else { return }
        let length = e.end - e.start
        guard length >= 2 else { return }
        let sizeLength = min(8, length - 1)
        let payload = UInt64(length - 1 - sizeLength)
        let field = payload | UInt64(1) << UInt64(7 * sizeLength)
        var header: [UInt8] = [0xEC]
        for k in stride(from: sizeLength - 1, through: 0, by: -1) { header.append(UInt8(truncatingIfNeeded: field >> UInt64(8 * k))) }
        bytes.write(header, at: e.start)
        bytes.fill((e.start + header.count)..<e.end, with: 0)
    }

    /// A CRC-32 element first in a master element covers the rest of it (little-endian).
    private mutating func fixCRC(_ master: Element) {
        guard strip, let first = try? element(at: master.dataStart, limit: master.end), first.id == ID.crc, first.size == 4,
              let covered = bytes.slice(first.end..<master.end) else { return }
        let crc = CRC32.checksum(covered)
        bytes.write([UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)], at: first.dataStart)
    }
}
