// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Real image files made in the test with ImageMagick (`convert`), exiftool and heif-enc
/// (Debian: imagemagick, libimage-exiftool-perl, libheif-examples; scripts/ensure-deps.sh).
enum PhotoFixtures {
    static func tool(_ name: String) -> String? {
        if name.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs a tool; the test fails (with its stderr) when it does.
    @discardableResult
    static func run(_ cli: CLI, _ name: String, _ args: [String]) throws -> CLI.Outcome {
        let path = try #require(tool(name), "\(name) is not installed (scripts/ensure-deps.sh installs it)")
        let r = try cli.spawn(path, args)
        #expect(r.code == 0, "\(name) \(args.joined(separator: " ")): \(r.stderr)")
        return r
    }

    /// A landscape JPEG, left half red and right half blue, tagged EXIF orientation 6
    /// (rotate 90° clockwise to display), with GPS, a capture date and a camera.
    static func orientedJPEGWithGPS(_ cli: CLI, _ name: String = "land.jpg") throws -> String {
        let path = cli.root + "/" + name
        try run(cli, "convert", ["-size", "200x200", "xc:red", "-size", "200x200", "xc:blue", "+append", "-quality", "92", path])
        try run(cli, "exiftool", ["-q", "-overwrite_original", "-Orientation#=6", "-GPSLatitude=48.8584", "-GPSLatitudeRef=N",
                                  "-GPSLongitude=2.2945", "-GPSLongitudeRef=E", "-DateTimeOriginal=2021:07:14 10:30:00",
                                  "-Make=Canon", "-Model=Canon EOS R5 Marker", path])
        return path
    }

    /// The whole corpus of the photos issue: good and bad files.
    struct Corpus {
        var land, heic, alpha, gif, huge, truncated, fake, bomb: String
        var good: [String] { [land, heic, alpha, gif, huge] }
        var bad: [String] { [truncated, fake, bomb] }
    }

    static func corpus(_ cli: CLI) throws -> Corpus {
        let r = cli.root + "/"
        let land = try orientedJPEGWithGPS(cli)
        try run(cli, "convert", ["-size", "300x600", "gradient:green-yellow", r + "portrait.png"])
        try run(cli, "heif-enc", ["-q", "60", r + "portrait.png", "-o", r + "portrait.heic"])
        try run(cli, "convert", ["-size", "300x200", "gradient:red-blue", "-alpha", "set", "-channel", "A", "-evaluate", "set", "50%",
                                 "+channel", r + "alpha.png"])
        try run(cli, "convert", ["-size", "1x1", "xc:green", r + "one.gif"])
        // 96 megapixels is over ImageMagick's default resource policy on Debian: PIL makes it.
        try run(cli, "/usr/bin/python3", ["-c", """
            from PIL import Image, ImageDraw
            im = Image.new('RGB', (12000, 8000), (30, 60, 90))
            ImageDraw.Draw(im).rectangle([0, 0, 5999, 7999], fill=(200, 40, 40))
            im.save('\(r)huge.jpg', quality=80)
            """])
        try run(cli, "convert", ["-size", "800x600", "plasma:fractal", "-quality", "90", r + "cut-source.jpg"])
        let cut = try Data(contentsOf: URL(fileURLWithPath: r + "cut-source.jpg"))
        FileManager.default.createFile(atPath: r + "truncated.jpg", contents: cut.prefix(cut.count / 3))
        FileManager.default.createFile(atPath: r + "notanimage.jpg", contents: Data("this is text, not a JPEG\n".utf8))
        FileManager.default.createFile(atPath: r + "bomb.png", contents: pngBomb())
        return Corpus(land: land, heic: r + "portrait.heic", alpha: r + "alpha.png", gif: r + "one.gif", huge: r + "huge.jpg",
                      truncated: r + "truncated.jpg", fake: r + "notanimage.jpg", bomb: r + "bomb.png")
    }

    /// A 12 KB PNG that declares 60000 × 60000 pixels (3.6 gigapixels).
    static func pngBomb() -> Data {
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be32(UInt32(data.count)) + body + be32(crc32(body))
        }
        // IDAT: a stored (uncompressed) zlib stream is enough to look like image data.
        let raw = [UInt8](repeating: 0, count: 4096)
        var zlib: [UInt8] = [0x78, 0x01, 0x01, UInt8(raw.count & 0xFF), UInt8(raw.count >> 8),
                             UInt8(~raw.count & 0xFF), UInt8((~raw.count >> 8) & 0xFF)] + raw
        zlib += be32(adler32(raw))
        let ihdr = be32(60000) + be32(60000) + [8, 0, 0, 0, 0]
        return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", zlib) + chunk("IEND", []))
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return c ^ 0xFFFF_FFFF
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for x in bytes { a = (a + UInt32(x)) % 65521; b = (b + a) % 65521 }
        return b << 16 | a
    }

    /// Width and height of an image file, read by ImageMagick (independent of libvips).
    static func size(_ cli: CLI, _ path: String) throws -> (Int, Int) {
        let r = try run(cli, "identify", ["-format", "%w %h", path])
        let parts = r.out.split(separator: " ").compactMap { Int($0) }
        return (parts.first ?? -1, parts.count > 1 ? parts[1] : -1)
    }

    /// The colour at a pixel, as "r,g,b" (0…255), read by ImageMagick.
    static func pixel(_ cli: CLI, _ path: String, x: Int, y: Int) throws -> [Int] {
        let r = try run(cli, "convert", [path, "-format", "%[fx:int(255*p{\(x),\(y)}.r)],%[fx:int(255*p{\(x),\(y)}.g)],%[fx:int(255*p{\(x),\(y)}.b)]", "info:"])
        return r.out.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// The bytes of a JPEG from its first SOS marker on (the entropy-coded image data).
    static func jpegImageData(_ data: Data) -> Data? {
        let b = [UInt8](data)
        var i = 2
        while i + 4 <= b.count, b[i] == 0xFF {
            let marker = b[i + 1]
            if marker == 0xDA { return Data(b[i...]) }
            i += 2 + (Int(b[i + 2]) << 8 | Int(b[i + 3]))
        }
        return nil
    }
}
