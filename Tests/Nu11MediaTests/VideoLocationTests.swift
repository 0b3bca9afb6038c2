// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Media

/// The container walkers of `VideoLocationStripper`, on containers built here byte by byte:
/// what they overwrite, what they refuse, and that no input makes them crash (they run in the
/// process that holds the keys). ffmpeg-made files go through the CLI in
/// EndToEndTests/Photos/VideoLocationTests.
@Suite("Video location walkers")
struct VideoLocationWalkerTests {
    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(8 + payload.count) + Array(type.utf8) + payload }
    static func box(_ type: [UInt8], _ payload: [UInt8]) -> [UInt8] { be32(8 + payload.count) + type + payload }
    static let place = Array("+48.8584+002.2945/".utf8)
    static let media: [UInt8] = (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }

    /// ftyp, mdat, moov { udta { ©xyz, meta(full box) { hdlr, keys [location, encoder], ilst } }, uuid(XMP) }.
    static func mp4(xyz: Bool = true, keys: Bool = true, xmp: Bool = true) -> [UInt8] {
        let ftyp = box("ftyp", Array("isom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8))
        let mdat = box("mdat", media)
        var udta: [UInt8] = []
        if xyz { udta += box([0xA9] + Array("xyz".utf8), [0, 18, 0x15, 0xC4] + place) }
        if keys {
            let hdlr = box("hdlr", [UInt8](repeating: 0, count: 8) + Array("mdta".utf8) + [UInt8](repeating: 0, count: 13))
            let k1 = be32(8 + 8) + Array("mdtalocation".utf8), k2 = be32(8 + 7) + Array("mdtaencoder".utf8)
            let keysBox = box("keys", [0, 0, 0, 0] + be32(2) + k1 + k2)
            let item1 = box(be32(1), box("data", [0, 0, 0, 1, 0, 0, 0, 0] + place))
            let item2 = box(be32(2), box("data", [0, 0, 0, 1, 0, 0, 0, 0] + Array("Lavf".utf8)))
            udta += box("meta", [0, 0, 0, 0] + hdlr + keysBox + box("ilst", item1 + item2))
        }
        var moov = box("mvhd", [UInt8](repeating: 0, count: 100)) + box("udta", udta)
        if xmp {
            let packet = Array("<x:xmpmeta><rdf:Description exif:GPSLatitude=\"48,51.5N\" exif:GPSLongitude=\"2,17.67E\"/></x:xmpmeta>".utf8)
            moov += box("uuid", [0xBE, 0x7A, 0xCF, 0xCB, 0x97, 0xA9, 0x42, 0xE8, 0x9C, 0x71, 0x99, 0x94, 0x91, 0xE3, 0xAF, 0xAC] + packet)
        }
        return ftyp + mdat + box("moov", moov)
    }

    static func ebml(_ id: [UInt8], _ payload: [UInt8]) -> [UInt8] {
        // An 8-byte size field, as muxers write for elements they patch later.
        let n = UInt64(payload.count) | 1 << 56
        return id + (0..<8).map { UInt8(truncatingIfNeeded: n >> (8 * (7 - $0))) } + payload
    }

    static func simpleTag(_ name: String, _ value: [UInt8]) -> [UInt8] {
        ebml([0x67, 0xC8], ebml([0x45, 0xA3], Array(name.utf8)) + ebml([0x44, 0x87], value))
    }

    /// EBML header, Segment { Info, Tags { CRC-32, Tag { Targets, LOCATION, ENCODER }, Tag { Targets, LOCATION } }, Cluster }.
    static func mkv(crc: Bool = true) -> [UInt8] {
        let header = ebml([0x1A, 0x45, 0xDF, 0xA3], ebml([0x42, 0x82], Array("matroska".utf8)))
        let info = ebml([0x15, 0x49, 0xA9, 0x66], ebml([0x2A, 0xD7, 0xB1], [0x0F, 0x42, 0x40]))
        let tag1 = ebml([0x73, 0x73], ebml([0x63, 0xC0], []) + simpleTag("LOCATION", place) + simpleTag("ENCODER", Array("Lavf".utf8)))
        let tag2 = ebml([0x73, 0x73], ebml([0x63, 0xC0], []) + simpleTag("LOCATION", place))
        var tagsBody = tag1 + tag2
        if crc {
            let sum = CRC32.checksum(tagsBody)
            tagsBody = [0xBF, 0x84, UInt8(sum & 0xFF), UInt8(sum >> 8 & 0xFF), UInt8(sum >> 16 & 0xFF), UInt8(sum >> 24)] + tagsBody
        }
        let tags = ebml([0x12, 0x54, 0xC3, 0x67], tagsBody)
        let cluster = ebml([0x1F, 0x43, 0xB6, 0x75], [0xE7, 0x81, 0x00] + ebml([0xA3], media))
        return header + ebml([0x18, 0x53, 0x80, 0x67], info + tags + cluster)
    }

    @Test("MP4: ©xyz, the keys/ilst location and XMP GPS are overwritten in place; mdat and the size unchanged")
    func mp4Stripped() throws {
        let original = Self.mp4()
        var file = original
        let report = try VideoLocationStripper.strip(&file, format: .mp4)
        #expect(report.removed == 2 && report.blankedXMP == 2, "\(report)")
        #expect(file.count == original.count)
        #expect(LocationStripper.occurrences(of: Array("48.8584".utf8), in: file, limit: 1).isEmpty, "the coordinates are still there")
        #expect(!LocationStripper.occurrences(of: Self.media, in: file, limit: 1).isEmpty, "the media data changed")
        #expect(LocationStripper.occurrences(of: Array("Lavf".utf8), in: file, limit: 1).count == 1, "other metadata was lost")
        // Verified, and stripping again changes nothing.
        try VideoLocationStripper.verify(file, format: .mp4)
        var again = file
        #expect(try VideoLocationStripper.strip(&again, format: .mp4).changed == false && again == file)
        #expect(throws: LocationStripError.self) { try VideoLocationStripper.verify(original, format: .mp4) }
    }

    @Test("Matroska: LOCATION tags become Void elements (a whole Tag when nothing else is in it); the CRC-32 follows")
    func mkvStripped() throws {
        let original = Self.mkv()
        var file = original
        let report = try VideoLocationStripper.strip(&file, format: .matroska)
        #expect(report.removed == 2 && file.count == original.count, "\(report)")
        #expect(LocationStripper.occurrences(of: Array("LOCATION".utf8), in: file, limit: 1).isEmpty)
        #expect(LocationStripper.occurrences(of: Array("ENCODER".utf8), in: file, limit: 1).count == 1)
        #expect(!LocationStripper.occurrences(of: Self.media, in: file, limit: 1).isEmpty)
        // The Tags element's CRC-32 covers what follows it.
        let tags = try #require(LocationStripper.occurrences(of: [0x12, 0x54, 0xC3, 0x67], in: file, limit: 1).first)
        let body = tags + 4 + 8, end = body + Int(file[(tags + 5)..<(tags + 12)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let stored = file[(body + 2)..<(body + 6)].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        #expect(stored == CRC32.checksum(file[(body + 6)..<end]), "the CRC-32 was not recomputed")
        try VideoLocationStripper.verify(file, format: .matroska)
    }

    @Test("refused: a truncated box or element, a compressed movie header, a GPS telemetry track, a location in a comment")
    func refusals() {
        let mp4 = Self.mp4(), mkv = Self.mkv()
        for (name, file, format) in [("mp4 cut", Array(mp4.dropLast(10)), VideoFormat.mp4), ("mkv cut", Array(mkv.dropLast(10)), .matroska)] {
            var copy = file
            #expect(throws: LocationStripError.self, "\(name)") { try VideoLocationStripper.strip(&copy, format: format) }
            #expect(copy == file, "\(name): changed although refused")
        }
        let ftyp = Self.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0])
        let cmov = ftyp + Self.box("moov", Self.box("cmov", [1, 2, 3, 4]))
        let gpmd = ftyp + Self.box("moov", Self.box("trak", Self.box("stsd", [0, 0, 0, 0] + Self.be32(1) + Self.box("gpmd", [0, 0, 0, 0, 0, 0, 0, 1]))))
        let comment = ftyp + Self.box("moov", Self.box("udta", Self.box([0xA9] + Array("cmt".utf8), [0, 18, 0, 0] + Self.place)))
        for (name, file) in [("cmov", cmov), ("gpmd", gpmd), ("comment", comment)] {
            var copy = file
            #expect(throws: LocationStripError.self, "\(name)") { try VideoLocationStripper.strip(&copy, format: .mp4) }
        }
    }

    @Test("every prefix and 3,000 random mutations of both containers: an answer or a refusal, never a crash")
    func neverCrashes() {
        var rng = SystemRandomNumberGenerator()
        for (original, format) in [(Self.mp4(), VideoFormat.mp4), (Self.mkv(), .matroska)] {
            for n in 0..<original.count {
                var prefix = Array(original.prefix(n))
                _ = try? VideoLocationStripper.strip(&prefix, format: format)
            }
            for _ in 0..<1500 {
                var file = original
                for _ in 0..<Int.random(in: 1...6, using: &rng) {
                    let at = Int.random(in: 0..<file.count, using: &rng)
                    file[at] = [0x00, 0xFF, 0x01, 0x80, UInt8.random(in: 0...255, using: &rng)][Int.random(in: 0..<5, using: &rng)]
                }
                let size = file.count
                if let report = try? VideoLocationStripper.strip(&file, format: format) {
                    #expect(file.count == size)
                    _ = report
                }
            }
        }
    }
}
