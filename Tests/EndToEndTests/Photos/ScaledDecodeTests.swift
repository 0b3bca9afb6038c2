// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// A big JPEG's thumbnails come from a DCT-scaled decode (1/2, 1/4 or 1/8, the smallest that
/// still covers the preview): checked against ImageMagick's full decode, not against our own.
@Suite("Photos: scaled JPEG decode")
struct ScaledDecodeTests {
    /// A 4000×2400 landscape (left half red, right half blue, fine detail everywhere), tagged
    /// EXIF orientation 6: displayed 2400×4000, so its preview is 960×1600 (decoded at 1/2).
    static func bigOriented(_ cli: CLI, _ path: String) throws {
        try PhotoFixtures.run(cli, "/usr/bin/python3", ["-c", """
            from PIL import Image, ImageFilter
            im = Image.effect_noise((4000, 2400), 60).convert('RGB').filter(ImageFilter.GaussianBlur(3))
            r, g, b = im.split()
            left = Image.new('L', (4000, 2400), 0); left.paste(255, (0, 0, 2000, 2400))
            r = Image.composite(Image.eval(r, lambda v: min(255, v + 120)), r, left)
            b = Image.composite(b, Image.eval(b, lambda v: min(255, v + 120)), left)
            Image.merge('RGB', (r, g, b)).save('\(path)', quality=90)
            """])
        try PhotoFixtures.run(cli, "exiftool", ["-q", "-overwrite_original", "-Orientation#=6", path])
    }

    @Test("a big JPEG's preview is upright, the right size, and as close to ImageMagick's full decode as libvips' own; cut short, it gets none")
    func scaledPreview() throws {
        let cli = try CLI()
        try cli.initVault()
        let big = cli.root + "/big.jpg", cut = cli.root + "/cut.jpg"
        try Self.bigOriented(cli, big)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: big))
        FileManager.default.createFile(atPath: cut, contents: bytes.prefix(bytes.count / 2))
        let r = try cli.run(["import", big, cut], pinStdin: true)
        #expect(r.code == 0, "import: \(r.stderr)")
        let warnings = r.stderr.split(separator: "\n")
        #expect(warnings.count == 1 && warnings[0].hasPrefix("nu11vlt: warning: cut.jpg: ") && warnings[0].contains("without a thumbnail"),
                "a JPEG cut in half must be imported without a thumbnail, with one warning: \(r.stderr)")
        let items = try cli.listJSON()
        let listed = try #require(items.first { ($0["name"] as? String) == "big.jpg" })
        #expect(listed["width"] as? Int == 2400 && listed["height"] as? Int == 4000, "\(listed)")
        let id = try #require(listed["id"] as? String)
        let preview = cli.root + "/preview.jpg", grid = cli.root + "/grid.jpg"
        #expect(try cli.run(["thumbnail", id, "--size", "preview", "-o", preview], pinStdin: true).code == 0)
        #expect(try cli.run(["thumbnail", id, "--size", "grid", "-o", grid], pinStdin: true).code == 0)
        let (pw, ph) = try PhotoFixtures.size(cli, preview), (gw, gh) = try PhotoFixtures.size(cli, grid)
        #expect(pw == 960 && ph == 1600, "preview is \(pw)×\(ph), expected 960×1600")
        #expect(abs(gw - 154) <= 1 && gh == 256, "grid tile is \(gw)×\(gh), expected 154×256")
        // Upright: the stored left half (red) is the top once turned.
        let top = try PhotoFixtures.pixel(cli, preview, x: 480, y: 100), bottom = try PhotoFixtures.pixel(cli, preview, x: 480, y: 1500)
        #expect(top.count == 3 && top[0] > 200 && top[2] < 170, "top of the upright preview is not red: \(top)")
        #expect(bottom.count == 3 && bottom[2] > 200 && bottom[0] < 170, "bottom of the upright preview is not blue: \(bottom)")
        // Quality: PSNR against ImageMagick's full-size decode, turned and resized (Lanczos). libvips'
        // full decode of this file scores 44.5 dB, ours 44.6 dB; 40 dB is the floor.
        let reference = cli.root + "/reference.png"
        try PhotoFixtures.run(cli, "convert", [big, "-auto-orient", "-resize", "960x1600", reference])
        let compare = try #require(PhotoFixtures.tool("compare"), "ImageMagick's compare is not installed")
        let c = try cli.spawn(compare, ["-metric", "PSNR", preview, reference, "null:"])
        let psnr = try #require(Double(c.stderr.trimmingCharacters(in: .whitespacesAndNewlines)), "compare said: \(c.stderr)")
        #expect(psnr >= 40, "the preview is \(psnr) dB from a full decode")
    }
}
