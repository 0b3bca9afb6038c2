// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Testing
@testable import Nu11Media
import Nu11ImageCodec

/// A little-endian TIFF/EXIF block: IFD0 {Make, Model, ExifIFD → DateTimeOriginal, GPS IFD →
/// GPSLatitudeRef, GPSLatitude (3 rationals, out of line)}, then IFD1 offset 0.
func exifBlock(gps: Bool = true, bigEndian: Bool = false) -> [UInt8] {
    var b: [UInt8] = []
    func u16(_ v: Int) -> [UInt8] { bigEndian ? [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    func u32(_ v: Int) -> [UInt8] { bigEndian ? [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
    func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: [UInt8]) -> [UInt8] { u16(tag) + u16(type) + u32(count) + value }
    let ifd0Count = gps ? 4 : 3
    let ifd0 = 8, ifd0Size = 2 + ifd0Count * 12 + 4
    let make = ifd0 + ifd0Size                 // "Canon\0" (6)
    let model = make + 6                       // "EOS R5 Test\0" (12)
    let exif = model + 12, exifSize = 2 + 12 + 4
    let date = exif + exifSize                 // 20 bytes
    let gpsIFD = date + 20, gpsSize = 2 + 2 * 12 + 4
    let lat = gpsIFD + gpsSize                 // 24 bytes
    b += bigEndian ? [0x4D, 0x4D, 0x00, 0x2A] : [0x49, 0x49, 0x2A, 0x00]
    b += u32(ifd0)
    b += u16(ifd0Count)
    b += entry(0x010F, 2, 6, u32(make))
    b += entry(0x0110, 2, 12, u32(model))
    b += entry(0x8769, 4, 1, u32(exif))
    if gps { b += entry(0x8825, 4, 1, u32(gpsIFD)) }
    b += u32(0)
    b += Array("Canon\0".utf8) + Array("EOS R5 Test\0".utf8)
    b += u16(1) + entry(0x9003, 2, 20, u32(date)) + u32(0)
    b += Array("2021:07:14 10:30:00\0".utf8)
    b += u16(2) + entry(0x0001, 2, 2, Array("N\0\0\0".utf8)) + entry(0x0002, 5, 3, u32(lat)) + u32(0)
    b += (0..<24).map { UInt8(0xA0 + $0) }
    return b
}

@Suite("Media: formats, EXIF, location stripping")
struct MediaTests {
    @Test("formats are told by their bytes, never by their names")
    func sniff() {
        #expect(ImageFormat.sniff([0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0, count: 12)) == .jpeg)
        #expect(ImageFormat.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == .png)
        #expect(ImageFormat.sniff(Array("RIFF\0\0\0\0WEBPVP8 ".utf8)) == .webp)
        #expect(ImageFormat.sniff([0, 0, 0, 0x18] + Array("ftypheic".utf8)) == .heif)
        #expect(ImageFormat.sniff([0, 0, 0, 0x18] + Array("ftypisom".utf8)) == nil, "an MP4 is not a HEIF")
        #expect(ImageFormat.sniff(Array("RIFF\0\0\0\0AVI LIST".utf8)) == nil)
        #expect(ImageFormat.sniff(Array("%PDF-1.7".utf8)) == nil)
        #expect(ImageFormat.sniff([0xFF, 0xD8]) == nil, "too short")
        #expect(ImageFormat.sniff([]) == nil)
        #expect(ImageFormat.suggested(byName: "IMG_0001.HEIC") == .heif && ImageFormat.suggested(byName: "notes.txt") == nil)
    }

    @Test("EXIF: capture date, camera and GPS, in both byte orders; no GPS directory, no GPS")
    func exifParse() {
        for big in [false, true] {
            let summary = ExifSummary.parse(exifBlock(bigEndian: big))
            #expect(summary.taken == "2021:07:14 10:30:00" && summary.hasGPS, "\(summary)")
            #expect(summary.camera == "Canon EOS R5 Test")
            #expect(ExifSummary.parse(Array("Exif\0\0".utf8) + exifBlock(bigEndian: big)).hasGPS)
        }
        #expect(!ExifSummary.parse(exifBlock(gps: false)).hasGPS)
        var offset = ExifSummary()
        offset.taken = "2021:07:14 10:30:00"
        offset.takenOffset = "+02:00"
        #expect(offset.takenDate == Date(timeIntervalSince1970: 1_626_251_400))
    }

    @Test("EXIF: damaged blocks never crash and never claim what they cannot show")
    func exifHostile() {
        var rng = SystemRandomNumberGenerator()
        let good = exifBlock()
        for _ in 0..<2000 {
            var b = good
            for _ in 0..<Int.random(in: 1...6, using: &rng) { b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            _ = ExifSummary.parse(Array(b.prefix(Int.random(in: 0...b.count, using: &rng))))
        }
        #expect(ExifSummary.parse([]) == ExifSummary())
        #expect(ExifSummary.parse([0x49, 0x49, 0x2A, 0x00, 0xFF, 0xFF, 0xFF, 0x7F]) == ExifSummary(), "IFD0 far past the end")
        #expect(ExifSummary.parse([0x49, 0x49, 0x2B, 0x00, 8, 0, 0, 0]) == ExifSummary(), "BigTIFF/garbage magic")
    }

    @Test("GPS removal in place: IFD0 loses the pointer, the directory and its values are zeroed, nothing else moves")
    func removeGPS() throws {
        for big in [false, true] {
            let block = exifBlock(bigEndian: big)
            var tiff = try #require(TIFFStructure(block, base: 0))
            let ranges = try #require(try tiff.removeGPS())
            #expect(tiff.bytes.count == block.count && !ranges.isEmpty)
            let after = ExifSummary.parse(tiff.bytes)
            #expect(!after.hasGPS && after.taken == "2021:07:14 10:30:00" && after.camera == "Canon EOS R5 Test")
            #expect(TIFFStructure(tiff.bytes, base: 0)?.entries(at: 8)?.count == 3)
            #expect(!tiff.bytes.contains(0xA5), "the latitude values were not zeroed")
            var again = try #require(TIFFStructure(tiff.bytes, base: 0))
            #expect(try again.removeGPS() == nil, "a second removal finds nothing")
        }
        var none = try #require(TIFFStructure(exifBlock(gps: false), base: 0))
        #expect(try none.removeGPS() == nil)
    }

    @Test("a GPS directory pointing outside the block is refused, not half-removed")
    func removeGPSDamaged() throws {
        var block = exifBlock()
        // GPSLatitude's out-of-line offset → far past the end.
        let lat = block.count - 24 - 4 - 12 + 8
        block[lat] = 0xFF; block[lat + 1] = 0xFF; block[lat + 2] = 0x00; block[lat + 3] = 0x10
        var tiff = try #require(TIFFStructure(block, base: 0))
        #expect(throws: LocationStripError.self) { try tiff.removeGPS() }
    }

    @Test("XMP GPS values are blanked in place, attributes and elements alike")
    func xmp() {
        let text = #"<x:xmpmeta><rdf:Description exif:GPSLatitude="48,51.5N" exif:GPSLongitude = '2,17.7E' tiff:Model="X"><exif:GPSAltitude>35/1</exif:GPSAltitude></rdf:Description></x:xmpmeta>"#
        var bytes = Array(text.utf8)
        let ranges = LocationStripper.blankXMPLocation(&bytes)
        let out = String(decoding: bytes, as: UTF8.self)
        #expect(ranges.count == 3 && bytes.count == text.utf8.count)
        #expect(!out.contains("48,51.5N") && !out.contains("2,17.7E") && !out.contains("35/1") && out.contains("tiff:Model=\"X\""))
    }

    @Test("stripping leaves files that are not images alone, and CRC-32 matches its check value")
    func notImage() throws {
        var text = Array("just text with exif:GPS in it?".utf8)
        let report = try LocationStripper.strip(&text)
        #expect(report.notAnImage && !report.changed && text == Array("just text with exif:GPS in it?".utf8))
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    /// An 8×8 JPEG made by ImageMagick (`convert -size 8x8 xc:red -quality 50`), without its SOI.
    static let tinyJPEGBody: [UInt8] = {
        let hex = "ffe000104a46494600010100000100010000ffdb004300100b0c0e0c0a100e0d0e1211101318281a181616183123251d283a333d3c3933383740485c4e404457453738506d51575f626768673e4d71797064785c656763ffdb0043011112121815182f1a1a2f634238426363636363636363636363636363636363636363636363636363636363636363636363636363636363636363636363636363ffc00011080008000803012200021101031101ffc4001500010100000000000000000000000000000005ffc40014100100000000000000000000000000000000ffc4001501010100000000000000000000000000000506ffc40014110100000000000000000000000000000000ffda000c03010002110311003f008a00b5e3ffd9"
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            out.append(UInt8(hex[i..<j], radix: 16) ?? 0)
            i = j
        }
        return out
    }()

    @Test("a JPEG with two EXIF segments loses the location from both, in place (the decoder reads only the first)")
    func twoExifSegments() throws {
        func app1(_ tiff: [UInt8]) -> [UInt8] {
            [0xFF, 0xE1, UInt8((tiff.count + 8) >> 8), UInt8((tiff.count + 8) & 0xFF)] + Array("Exif".utf8) + [0, 0] + tiff
        }
        // The second copy differs (another camera), so it is not found by the first one's bytes.
        var other = exifBlock()
        if let r = LocationStripper.occurrences(of: Array("EOS R5".utf8), in: other, limit: 1).first { other[r + 5] = UInt8(ascii: "6") }
        let original = [0xFF, 0xD8] + app1(exifBlock()) + app1(other) + Self.tinyJPEGBody
        var file = original
        let report = try LocationStripper.strip(&file)
        #expect(report.removedGPS && file.count == original.count)
        let blocks = LocationStripper.exifBlocks(in: file)
        #expect(blocks.count == 2)
        for base in blocks {
            let summary = ExifSummary.parse(Array(file[base...]))
            #expect(!summary.hasGPS && summary.camera?.hasPrefix("Canon EOS R") == true, "a block kept its location")
        }
        #expect(Array(file.suffix(Self.tinyJPEGBody.count)) == Self.tinyJPEGBody, "the image data changed")
    }

    @Test("a JPEG whose only location is in XMP is stripped, not refused: blanked values are no location")
    func xmpOnlyJPEG() throws {
        let packet = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]
            + Array(#"<x:xmpmeta><rdf:Description exif:GPSLatitude="48,51.5N" exif:GPSLongitude="2,17.7E"/></x:xmpmeta>"#.utf8)
        let original = [0xFF, 0xD8, 0xFF, 0xE1, UInt8((packet.count + 2) >> 8), UInt8((packet.count + 2) & 0xFF)] + packet + Self.tinyJPEGBody
        var file = original
        let report = try LocationStripper.strip(&file)
        #expect(report.blankedXMP && file.count == original.count)
        #expect(LocationStripper.occurrences(of: Array("48,51.5N".utf8), in: file, limit: 1).isEmpty)
        #expect(!LocationStripper.xmpLocationLeft(file) && LocationStripper.xmpLocationLeft(original))
    }

    @Test("libvips refuses what is not a vetted image format, and a bomb before decoding a pixel")
    func codecRefusals() {
        let pdf = Array("%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n".utf8)
        let svg = Array(#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>"#.utf8)
        for bytes in [pdf, svg, [UInt8](repeating: 0, count: 64)] {
            #expect(throws: ImageDecodeError.self) { try bytes.withUnsafeBytes { try ImageCodec.thumbnails($0) } }
        }
        // A PNG header that declares 60000 × 60000 pixels.
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        png += [0, 0, 0xEA, 0x60, 0, 0, 0xEA, 0x60, 8, 0, 0, 0, 0]
        png += withUnsafeBytes(of: CRC32.checksum(png[12...]).bigEndian, Array.init)
        let idat = Array("IDAT".utf8) + [0x78, 0x01, 0x01, 0x10, 0x00, 0xEF, 0xFF] + [UInt8](repeating: 0, count: 16) + [0x00, 0x10, 0x00, 0x01]
        png += [0, 0, 0, UInt8(idat.count - 4)] + idat + withUnsafeBytes(of: CRC32.checksum(idat).bigEndian, Array.init)
        png += [0, 0, 0, 0] + Array("IEND".utf8) + withUnsafeBytes(of: CRC32.checksum(Array("IEND".utf8)).bigEndian, Array.init)
        do {
            _ = try png.withUnsafeBytes { try ImageCodec.header($0) }
            Issue.record("a 3.6-gigapixel image was accepted")
        } catch {
            let reason = (error as? ImageDecodeError)?.reason ?? "\(error)"
            #expect(reason.contains("megapixels"), "\(reason)")
        }
    }
}

@Suite("Thumbnail envelope")
struct ThumbnailEnvelopeTests {
    let images = [ThumbnailEnvelope.Image(size: 1, encoding: 1, width: 256, height: 171, bytes: [1, 2, 3]),
                  ThumbnailEnvelope.Image(size: 2, encoding: 1, width: 1600, height: 1067, bytes: Array(repeating: 9, count: 70_000))]

    @Test("opens only for its item, under its key, as a thumbnail")
    func bound() throws {
        let key = SecretBytes(randomCount: 32)
        let header = N11Header(kind: .file, domain: .vault, itemID: ItemID())
        let sealed = try ThumbnailEnvelope.seal(images, header: header, itemKey: key)
        #expect(try ThumbnailEnvelope.open(sealed, expected: header, itemKey: key) == images)
        // Another item's ID, another key, another domain: refused.
        #expect(throws: Nu11Error.self) { try ThumbnailEnvelope.open(sealed, expected: N11Header(kind: .file, domain: .vault, itemID: ItemID()), itemKey: key) }
        #expect(throws: Nu11Error.self) { try ThumbnailEnvelope.open(sealed, expected: header, itemKey: SecretBytes(randomCount: 32)) }
        #expect(throws: Nu11Error.self) { try ThumbnailEnvelope.open(sealed, expected: N11Header(kind: .file, domain: .fade, itemID: header.itemID), itemKey: key) }
        // A header edited in place (another ID or domain, same key) fails: the header is the context.
        for (offset, flip) in [(8, UInt8(0x5A)), (6, Domain.vault.rawValue ^ Domain.fade.rawValue)] {
            var edited = sealed
            edited[offset] ^= flip
            var expected = try N11Header.parse(edited.prefix(N11Header.byteCount))
            expected.version = N11Header.currentVersion
            #expect(throws: Nu11Error.self) { try ThumbnailEnvelope.open(edited, expected: expected, itemKey: key) }
        }
        // Not the item's content: the same key and header under the item context fail.
        var sink = MemorySink()
        #expect(throws: Nu11Error.self) { try N11Envelope.open(from: MemorySource(sealed), to: &sink, expected: header, itemKey: key) }
        // Every truncation and every bit flip is refused.
        for cut in [0, 10, 24, 40, sealed.count / 2, sealed.count - 1] {
            #expect(throws: Nu11Error.self) { try ThumbnailEnvelope.open(Array(sealed.prefix(cut)), expected: header, itemKey: key) }
        }
        for position in stride(from: 0, to: sealed.count, by: 997) {
            var flipped = sealed
            flipped[position] ^= 0x01
            #expect(throws: Nu11Error.self) { try ThumbnailEnvelope.open(flipped, expected: header, itemKey: key) }
        }
    }

    @Test("bundles with lying lengths or another version are refused")
    func bundle() {
        let plain = ThumbnailEnvelope.encode(images)
        #expect((try? ThumbnailEnvelope.decode(plain)) == images)
        var long = plain
        long[6 + 9] = 0xFF
        #expect(throws: Nu11Error.self) { try ThumbnailEnvelope.decode(long) }
        #expect(throws: Nu11Error.self) { try ThumbnailEnvelope.decode(plain + [0]) }
        var version = plain
        version[4] = 2
        #expect(throws: Nu11Error.self) { try ThumbnailEnvelope.decode(version) }
        #expect(throws: Nu11Error.self) { try ThumbnailEnvelope.decode(Array(plain.prefix(5))) }
    }
}

@Suite("Videos: containers and dates")
struct VideoFormatTests {
    func ftyp(_ brand: String) -> [UInt8] { [0, 0, 0, 24] + Array("ftyp".utf8) + Array(brand.utf8) + [0, 0, 2, 0] }

    @Test("containers are told by their bytes: MP4 brands, QuickTime, Matroska; HEIF is an image, not a video")
    func sniff() {
        #expect(VideoFormat.sniff(ftyp("isom")) == .mp4 && VideoFormat.sniff(ftyp("mp42")) == .mp4)
        #expect(VideoFormat.sniff(ftyp("qt  ")) == .quicktime)
        #expect(VideoFormat.sniff([0x1A, 0x45, 0xDF, 0xA3, 0x9F]) == .matroska)
        #expect(VideoFormat.sniff(ftyp("heic")) == nil && ImageFormat.sniff(ftyp("heic")) == .heif)
        #expect(VideoFormat.sniff(ftyp("avif")) == nil && VideoFormat.sniff(ftyp("xxxx")) == nil)
        #expect(VideoFormat.sniff(Array("ftypisom".utf8)) == nil, "ftyp must be at offset 4")
        #expect(VideoFormat.sniff([UInt8]()) == nil && VideoFormat.sniff([0x1A, 0x45]) == nil)
    }

    @Test("creation dates: UTC, with a zone, with a space; QuickTime's zero date, impossible dates and junk are nil")
    func dates() {
        #expect(VideoDate.parse("2024-05-01T10:20:30.000000Z") == Date(timeIntervalSince1970: 1_714_558_830))
        #expect(VideoDate.parse("2024-05-01T12:20:30+0200") == Date(timeIntervalSince1970: 1_714_558_830))
        #expect(VideoDate.parse("2024-05-01T05:20:30-05:00") == Date(timeIntervalSince1970: 1_714_558_830))
        #expect(VideoDate.parse("2024-05-01 10:20:30") == Date(timeIntervalSince1970: 1_714_558_830))
        for junk in ["1904-01-01T00:00:00.000000Z", "1970-01-01T00:00:00Z", "2024-13-01T00:00:00Z", "2024-02-30T00:00:00Z",
                     "2024-05-01T25:00:00Z", "2024-05-01T10:20:30+2500", "yesterday", "", "2024-05-01", "2024-05-01T10:20:30Zjunk"] {
            #expect(VideoDate.parse(junk) == nil, "\(junk) parsed")
        }
    }

    @Test("a video answer with lying fields is refused before use")
    func wire() throws {
        let jpeg = EncodedThumbnail(encoding: .jpeg, width: 2, height: 1, bytes: [0xFF, 0xD8, 0xFF, 0xD9])
        let pair = ThumbnailPair(grid: jpeg, preview: jpeg)
        let good = VideoAnalysis(width: 240, height: 320, durationMS: 2000, created: "2024-05-01T10:20:30Z", hasLocation: true, thumbnails: pair)
        let bytes = ImageWire.encode(good)
        let back = try ImageWire.decodeVideo(bytes)
        #expect(back.width == 240 && back.height == 320 && back.durationMS == 2000 && back.created == good.created && back.hasLocation)
        var unknown = good
        unknown.durationMS = nil
        unknown.created = nil
        #expect(try ImageWire.decodeVideo(ImageWire.encode(unknown)).durationMS == nil)
        func mutated(_ at: Int, _ value: UInt8) -> [UInt8] {
            var b = bytes
            b[at] = value
            return b
        }
        let lies: [(String, [UInt8])] = [
            ("width 0", [0, 0, 0, 0] + bytes[4...]),
            ("width over 16384", [0, 1, 0, 0] + bytes[4...]),
            ("a duration of centuries", Array(bytes[0..<8]) + [0, 0, 0x10, 0, 0, 0, 0, 0] + bytes[16...]),
            ("location 2", mutated(16, 2)),
            ("a date longer than its field", mutated(17, 200)),
            ("a control character in the date", mutated(18, 0x0A)),
            ("a truncated bundle", Array(bytes.dropLast(3))),
            ("nothing", []),
        ]
        for (what, payload) in lies {
            #expect(throws: ImageDecodeError.self, "\(what) was accepted") { try ImageWire.decodeVideo(payload) }
        }
    }

    @Test("FFmpeg refuses what is not a vetted container, from memory, with a one-line reason")
    func codecRefusals() {
        let samples: [[UInt8]] = [[], Array("not a video".utf8), ftyp("isom"), ftyp("isom") + [UInt8](repeating: 0xFF, count: 4096),
                                  [0x1A, 0x45, 0xDF, 0xA3] + [UInt8](repeating: 0, count: 64)]
        for sample in samples {
            let result = sample.withUnsafeBytes { raw in Result { () throws(ImageDecodeError) in try ImageCodec.video(raw) } }
            guard case .failure(let error) = result else {
                Issue.record("\(sample.prefix(12)) was decoded")
                continue
            }
            #expect(!error.reason.isEmpty && !error.reason.contains("\n"), "\(error.reason)")
        }
    }
}
