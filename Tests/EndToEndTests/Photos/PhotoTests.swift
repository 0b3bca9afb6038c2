// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Photos as photos (issue 14): real files made in the test, imported through the built
/// binary; thumbnails checked by ImageMagick, locations by exiftool.
@Suite("Photos")
struct PhotoTests {
    func item(_ cli: CLI, named name: String) throws -> [String: Any] {
        try #require(try cli.listJSON(["--limit", "1000"]).first { ($0["name"] as? String) == name }, "\(name) not listed")
    }

    @Test("every file of the corpus imports; good ones get upright thumbnails of the right size, bad ones a one-line warning")
    func corpus() throws {
        let cli = try CLI()
        try cli.initVault()
        let files = try PhotoFixtures.corpus(cli)
        let r = try cli.run(["import"] + files.good + files.bad, pinStdin: true)
        #expect(r.code == 0, "import: \(r.stderr)")
        #expect(!r.stderr.contains("Fatal error") && !r.stderr.contains("VIPS"), "libvips spoke: \(r.stderr)")
        let warnings = r.stderr.split(separator: "\n")
        #expect(warnings.count == files.bad.count, "one warning per bad file: \(r.stderr)")
        for bad in files.bad {
            let name = (bad as NSString).lastPathComponent
            #expect(warnings.filter { $0.hasPrefix("nu11vlt: warning: \(name): ") && $0.contains("without a thumbnail") }.count == 1,
                    "no one-line warning for \(name): \(r.stderr)")
            let listed = try item(cli, named: name)
            #expect(listed["thumbnail"] as? Bool == false && listed["width"] is NSNull)
            let out = cli.root + "/out-" + name
            #expect(try cli.run(["export", try #require(listed["id"] as? String), "-o", out], pinStdin: true).code == 0)
            #expect(FileManager.default.contentsEqual(atPath: out, andPath: bad), "\(name) did not come back byte-identical")
        }
        #expect(try item(cli, named: "notanimage.jpg")["type"] as? String == "application/octet-stream")
        // Displayed sizes (orientation applied) and the two thumbnail sizes.
        let expected: [(String, Int, Int, Int, Int)] = [
            ("land.jpg", 200, 400, 200, 400), ("portrait.heic", 300, 600, 300, 600), ("alpha.png", 300, 200, 300, 200),
            ("one.gif", 1, 1, 1, 1), ("huge.jpg", 12000, 8000, 1600, 1067),
        ]
        for (name, w, h, pw, ph) in expected {
            let listed = try item(cli, named: name)
            #expect(listed["width"] as? Int == w && listed["height"] as? Int == h, "\(name): \(listed)")
            #expect(listed["thumbnail"] as? Bool == true, "\(name) has no thumbnail")
            let id = try #require(listed["id"] as? String)
            for (size, long) in [("grid", 256), ("preview", 1600)] {
                let out = cli.root + "/\(size)-\(name).img"
                let t = try cli.run(["thumbnail", id, "--size", size, "-o", out], pinStdin: true)
                #expect(t.code == 0, "thumbnail \(size) of \(name): \(t.stderr)")
                let (tw, th) = try PhotoFixtures.size(cli, out)
                let want = size == "preview" ? (pw, ph) : (max(w, h) <= long ? (w, h) : (w >= h ? (long, Int((Double(h) * Double(long) / Double(w)).rounded())) : (Int((Double(w) * Double(long) / Double(h)).rounded()), long)))
                #expect(abs(tw - want.0) <= 1 && abs(th - want.1) <= 1, "\(size) of \(name) is \(tw)×\(th), expected \(want)")
            }
        }
        // Orientation 6: the red left half of the stored landscape is the top once upright.
        let land = try #require(try item(cli, named: "land.jpg")["id"] as? String)
        let grid = cli.root + "/land-grid.jpg"
        #expect(try cli.run(["thumbnail", land, "-o", grid], pinStdin: true).code == 0)
        let top = try PhotoFixtures.pixel(cli, grid, x: 64, y: 20), bottom = try PhotoFixtures.pixel(cli, grid, x: 64, y: 236)
        #expect(top.count == 3 && top[0] > 200 && top[2] < 60, "top of the upright tile is not red: \(top)")
        #expect(bottom.count == 3 && bottom[2] > 200 && bottom[0] < 60, "bottom of the upright tile is not blue: \(bottom)")
        let meta = try item(cli, named: "land.jpg")
        #expect(meta["gps"] as? Bool == true && meta["camera"] as? String == "Canon EOS R5 Marker")
        #expect((meta["taken"] as? String)?.hasPrefix("2021-07-1") == true, "capture date: \(String(describing: meta["taken"]))")
        // The check reads every thumbnail too.
        #expect(try cli.run(["check"], pinStdin: true).code == 0)
    }

    @Test("a decompression bomb and a 96-megapixel photo import in bounded memory (peak RSS < 256 MiB)")
    func boundedMemory() throws {
        let cli = try CLI()
        try cli.initVault()
        let files = try PhotoFixtures.corpus(cli)
        let time = try #require(PhotoFixtures.tool("time"), "GNU time is not installed")
        for path in [files.bomb, files.huge] {
            let r = try cli.spawn(time, ["-f", "maxrss=%M", CLI.binary, "import", "--pin-stdin", path], input: Data((cli.pin + "\n").utf8))
            #expect(r.code == 0, "import \(path): \(r.stderr)")
            let kib = r.stderr.split(separator: "\n").compactMap { $0.hasPrefix("maxrss=") ? Int($0.dropFirst(7)) : nil }.first
            let peak = try #require(kib, "no RSS in: \(r.stderr)")
            #expect(peak < 256 * 1024, "\(path): peak RSS \(peak / 1024) MiB")
        }
    }

    @Test("export --strip-location: exiftool finds no GPS, the JPEG's image data is byte-identical; HEIC too; the setting makes it the default")
    func stripLocation() throws {
        let cli = try CLI()
        try cli.initVault()
        let land = try PhotoFixtures.orientedJPEGWithGPS(cli)
        try PhotoFixtures.run(cli, "convert", ["-size", "300x600", "gradient:green-yellow", cli.root + "/p.png"])
        try PhotoFixtures.run(cli, "heif-enc", ["-q", "60", cli.root + "/p.png", "-o", cli.root + "/gps.heic"])
        try PhotoFixtures.run(cli, "exiftool", ["-q", "-overwrite_original", "-GPSLatitude=48.8584", "-GPSLatitudeRef=N",
                                                "-GPSLongitude=2.2945", "-GPSLongitudeRef=E", cli.root + "/gps.heic"])
        let before = try PhotoFixtures.run(cli, "exiftool", ["-a", "-G1", "-s", "-gps:all", land]).out
        #expect(before.contains("GPSLatitude"), "the fixture has no GPS: \(before)")
        let ids = try cli.importIDs([land, cli.root + "/gps.heic"])
        for (id, original) in zip(ids, [land, cli.root + "/gps.heic"]) {
            let plain = cli.root + "/plain-" + (original as NSString).lastPathComponent
            let out = cli.root + "/stripped-" + (original as NSString).lastPathComponent
            #expect(try cli.run(["export", id, "-o", plain], pinStdin: true).code == 0)
            #expect(try PhotoFixtures.run(cli, "exiftool", ["-a", "-s", "-gps:all", plain]).out.contains("GPSLatitude"))
            let r = try cli.run(["export", id, "--strip-location", "-o", out], pinStdin: true)
            #expect(r.code == 0, "strip \(original): \(r.stderr)")
            let after = try PhotoFixtures.run(cli, "exiftool", ["-a", "-G1", "-s", "-gps:all", "-xmp:all", out]).out
            #expect(!after.contains("GPS"), "GPS left in \(out): \(after)")
            #expect(try PhotoFixtures.run(cli, "exiftool", ["-s", "-Model", out]).out.contains("Canon") == original.hasSuffix(".jpg"),
                    "other EXIF was lost")
        }
        let original = try Data(contentsOf: URL(fileURLWithPath: land))
        let stripped = try Data(contentsOf: URL(fileURLWithPath: cli.root + "/stripped-land.jpg"))
        #expect(PhotoFixtures.jpegImageData(original) != nil && PhotoFixtures.jpegImageData(original) == PhotoFixtures.jpegImageData(stripped),
                "the image data changed")
        #expect(original.count == stripped.count, "only the metadata segment may change")
        // The setting makes stripping the default; --keep-location overrides it.
        #expect(try cli.run(["settings", "set", "export.strip_location", "true"], pinStdin: true).code == 0)
        #expect(try cli.run(["export", ids[0], "-o", cli.root + "/default.jpg"], pinStdin: true).code == 0)
        #expect(!(try PhotoFixtures.run(cli, "exiftool", ["-s", "-gps:all", cli.root + "/default.jpg"]).out.contains("GPS")))
        #expect(try cli.run(["export", ids[0], "--keep-location", "-o", cli.root + "/kept.jpg"], pinStdin: true).code == 0)
        #expect(FileManager.default.contentsEqual(atPath: cli.root + "/kept.jpg", andPath: land))
        // Exports get the source's modification time back.
        let mtime = { (p: String) in (try? FileManager.default.attributesOfItem(atPath: p)[.modificationDate] as? Date) ?? nil }
        let kept = try #require(mtime(cli.root + "/kept.jpg")), source = try #require(mtime(land))
        #expect(abs(kept.timeIntervalSince(source)) < 0.001, "mtime \(kept) vs \(source)")
    }

    @Test("archives carry photos: thumbnails are made again on import (portable and secure); a portable archive can drop locations")
    func archives() throws {
        let cli = try CLI()
        try cli.initVault()
        let land = try PhotoFixtures.orientedJPEGWithGPS(cli)
        _ = try cli.importIDs([land])
        for kind in ["--portable", "--secure"] {
            let file = cli.root + "/a\(kind).nu11vlt"
            let extra = kind == "--portable" ? [kind, "--strip-location"] : [kind]
            #expect(try cli.exportArchive(file, extra: extra).code == 0)
            let other = try CLI(pin: cli.pin)
            try other.initVault()
            if kind == "--secure" {
                // A secure archive opens only with its own key store: import into a copy of this one.
                try FileManager.default.removeItem(atPath: other.keystore)
                try FileManager.default.removeItem(atPath: other.vault)
                try FileManager.default.copyItem(atPath: cli.keystore, toPath: other.keystore)
                try FileManager.default.copyItem(atPath: cli.vault, toPath: other.vault)
                _ = try other.run(["delete", try #require(try other.listJSON().first?["id"] as? String)], pinStdin: true)
            }
            let r = try other.importArchive(file)
            #expect(r.code == 0, "\(kind) import: \(r.stderr)")
            let item = try #require(try other.listJSON().first { ($0["name"] as? String) == "land.jpg" })
            #expect(item["thumbnail"] as? Bool == true && item["width"] as? Int == 200, "\(kind): \(item)")
            let id = try #require(item["id"] as? String)
            #expect(try other.run(["thumbnail", id, "-o", other.root + "/t.jpg"], pinStdin: true).code == 0)
            let out = other.root + "/out.jpg"
            #expect(try other.run(["export", id, "--keep-location", "-o", out], pinStdin: true).code == 0)
            let gps = try PhotoFixtures.run(other, "exiftool", ["-s", "-gps:all", out]).out
            #expect(gps.contains("GPSLatitude") == (kind == "--secure"), "\(kind): location after the round trip: \(gps)")
        }
    }
}
