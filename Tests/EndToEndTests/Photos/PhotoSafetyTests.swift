// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Thumbnails are as protected as the photos: bound to their item, shredded with it, never
/// on disk in the clear, never spilled by libvips.
@Suite("Photo safety")
struct PhotoSafetyTests {
    func thumbnails(_ cli: CLI) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Thumbnails")) ?? []).sorted()
    }

    func photos(_ cli: CLI, _ count: Int) throws -> [String] {
        try (0..<count).map { i in
            let path = cli.root + "/photo\(i).jpg"
            try PhotoFixtures.run(cli, "convert", ["-size", "320x240", "plasma:fractal", "-quality", "85", path])
            return path
        }
    }

    @Test("a swap of two items' thumbnail files is detected; repair sets them aside and `thumbnails --missing` makes new ones")
    func swapDetected() throws {
        let cli = try CLI()
        try cli.initVault()
        let ids = try cli.importIDs(try photos(cli, 2))
        let a = cli.vault + "/Thumbnails/\(ids[0]).n11thumb", b = cli.vault + "/Thumbnails/\(ids[1]).n11thumb"
        try FileManager.default.moveItem(atPath: a, toPath: cli.root + "/t")
        try FileManager.default.moveItem(atPath: b, toPath: a)
        try FileManager.default.moveItem(atPath: cli.root + "/t", toPath: b)
        for id in ids {
            let r = try cli.run(["thumbnail", id, "-o", cli.root + "/x-\(id).jpg"], pinStdin: true)
            expectCleanError(r, code: 5, mentions: "swapped")
            #expect(!FileManager.default.fileExists(atPath: cli.root + "/x-\(id).jpg"))
        }
        let check = try cli.run(["check"], pinStdin: true)
        #expect(check.code == 5 && ids.allSatisfy { check.out.contains("DAMAGED  \($0)") }, "check: \(check.out)")
        #expect(try cli.run(["check", "--repair"], pinStdin: true).code == 0)
        #expect(thumbnails(cli).isEmpty, "swapped thumbnails stayed: \(thumbnails(cli))")
        let backfill = try cli.run(["thumbnails", "--missing", "--json"], pinStdin: true)
        #expect(backfill.code == 0, "backfill: \(backfill.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: backfill.stdout) as? [String: Any])
        #expect(result["made"] as? Int == 2 && result["failed"] as? Int == 0, "\(result)")
        for id in ids { #expect(try cli.run(["thumbnail", id, "-o", cli.root + "/ok-\(id).jpg"], pinStdin: true).code == 0) }
        #expect(try cli.run(["check"], pinStdin: true).code == 0)
    }

    @Test("delete (standard and secure), fade expiry and fade set shred thumbnails with the item")
    func shreddedWithItem() throws {
        let cli = try CLI()
        try cli.initVault()
        let ids = try cli.importIDs(try photos(cli, 4))
        #expect(thumbnails(cli).count == 4)
        #expect(try cli.run(["delete", ids[0]], pinStdin: true).code == 0)
        #expect(try cli.run(["delete", "--secure", ids[1]], pinStdin: true).code == 0)
        #expect(thumbnails(cli) == [ids[2], ids[3]].sorted().map { "\($0).n11thumb" }, "\(thumbnails(cli))")
        // fade set keeps the item's ID (issue 58): its thumbnail, made again under its new key, is there.
        let set = try cli.run(["fade", "set", ids[2], "2s"], pinStdin: true)
        #expect(set.code == 0, "fade set: \(set.stderr)")
        let faded = try #require(try cli.listJSON().first { $0["fadesAt"] is String }?["id"] as? String)
        #expect(thumbnails(cli) == [faded, ids[3]].sorted().map { "\($0).n11thumb" }, "\(thumbnails(cli))")
        cli.clockAhead = "+1h"  // the deadline passes (faketime: no sleep)
        _ = try cli.run(["list"], pinStdin: true)
        #expect(thumbnails(cli) == ["\(ids[3]).n11thumb"], "a faded item's thumbnail stayed: \(thumbnails(cli))")
    }

    @Test("no decoded pixels or EXIF strings outside the vault's ciphertext; libvips never writes a temp file")
    func markerScan() throws {
        let cli = try CLI()
        try cli.initVault()
        let land = try PhotoFixtures.orientedJPEGWithGPS(cli)
        let tmp = cli.root + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let strace = try #require(PhotoFixtures.tool("strace"), "strace is not installed")
        // VIPS_DISC_THRESHOLD=0 would make libvips decode to a temp file if it could.
        let traced = try cli.spawn(strace, ["-f", "-e", "trace=open,openat,creat,mkdir,rename", "-o", cli.root + "/trace",
                                            CLI.binary, "import", "--pin-stdin", land],
                                   input: Data((cli.pin + "\n").utf8), environment: ["TMPDIR": tmp, "VIPS_DISC_THRESHOLD": "0"])
        #expect(traced.code == 0, "import: \(traced.stderr)")
        let trace = try String(contentsOfFile: cli.root + "/trace", encoding: .utf8)
        // libvips names its temp files "vips-N-XXXXXX" (its modules folder is "vips-modules-…").
        let suspicious = trace.split(separator: "\n").filter {
            $0.contains(tmp) || $0.range(of: #"vips-[0-9]+-"#, options: .regularExpression) != nil
        }
        #expect(suspicious.isEmpty, "a temp file was opened: \(suspicious)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp).isEmpty)
        let id = try #require(try cli.listJSON().first?["id"] as? String)
        let tile = try cli.run(["thumbnail", id, "-o", "-"], pinStdin: true, environment: ["TMPDIR": tmp])
        try #require(tile.code == 0 && tile.stdout.count > 200, "thumbnail: \(tile.stderr)")
        _ = try cli.run(["list", "--thumbnails"], pinStdin: true, environment: ["TMPDIR": tmp, "TERM": "xterm-kitty"])
        _ = try cli.run(["view", "--inline", id], pinStdin: true, environment: ["TMPDIR": tmp, "TERM": "xterm-kitty"])
        try FileManager.default.removeItem(atPath: land)
        // Markers: an EXIF string, the decoded tile's bytes, and a run of decoded red pixels.
        let markers: [(String, [UInt8])] = [
            ("EXIF camera", Array("Canon EOS R5 Marker".utf8)),
            ("thumbnail bytes", Array(tile.stdout[(tile.stdout.count / 2)..<(tile.stdout.count / 2 + 48)])),
            ("decoded pixels", [UInt8]((0..<16).flatMap { _ in [UInt8(254), 0, 0] })),
        ]
        var scanned = 0
        for folder in [cli.vault, cli.keystore, tmp, cli.root + "/run"] {
            let walker = FileManager.default.enumerator(atPath: folder)
            while let rel = walker?.nextObject() as? String {
                let path = folder + "/" + rel
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                scanned += 1
                for (what, marker) in markers {
                    #expect(data.range(of: Data(marker)) == nil, "\(what) found in \(path)")
                }
            }
        }
        #expect(scanned >= 5, "the scan saw only \(scanned) files")
    }

    @Test("list --sort taken orders by capture date; --thumbnails draws kitty tiles; view paints the preview first")
    func listingAndView() throws {
        let cli = try CLI()
        try cli.initVault()
        let recent = try photos(cli, 1)[0]
        let old = try PhotoFixtures.orientedJPEGWithGPS(cli)  // taken 2021, imported after
        let ids = try cli.importIDs([recent, old])
        #expect(try cli.listJSON().compactMap { $0["id"] as? String } == ids)
        #expect(try cli.listJSON(["--sort", "taken"]).compactMap { $0["id"] as? String } == [ids[1], ids[0]])
        let page = try cli.run(["list", "--sort", "taken", "--limit", "1", "--json"], pinStdin: true)
        let document = try JSONSerialization.jsonObject(with: page.stdout) as? [String: Any]
        #expect(document?["next"] as? String == ids[1], "paging by capture date: \(page.out)")
        let grid = try cli.run(["list", "--thumbnails"], pinStdin: true, environment: ["TERM": "xterm-kitty"])
        #expect(grid.code == 0)
        let tiles = grid.out.components(separatedBy: "\u{1B}_Ga=T,f=100").count - 1
        #expect(tiles == 2, "expected 2 kitty tiles, got \(tiles)")
        let firstPNG = try #require(Self.kittyImages(grid.out).first)
        #expect(firstPNG.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a kitty tile is not a PNG")
        let plain = try cli.run(["list", "--thumbnails"], pinStdin: true, environment: ["TERM": "dumb"])
        #expect(plain.code == 0 && !plain.out.contains("\u{1B}_G") && plain.stderr.contains("kitty graphics"))
        let view = try cli.run(["view", "--inline", ids[1]], pinStdin: true, environment: ["TERM": "xterm-kitty"])
        #expect(view.code == 0, "view: \(view.stderr)")
        let images = Self.kittyImages(view.out)
        #expect(images.count == 2 && images.allSatisfy { $0.starts(with: [0x89, 0x50, 0x4E, 0x47]) }, "preview then full image: \(images.count)")
        #expect(view.out.contains("i=7,C=1"), "the preview must leave the cursor for the full image to replace it")
    }

    @Test("images are decoded in a helper without keys (its lock-down: SandboxTests); nu11vlt and the app link no image or video library; no network call")
    func helperLockedDown() throws {
        let cli = try CLI()
        // GTK links libpng, libjpeg and libtiff (gdk-pixbuf) into the app; its images come as
        // raw pixels (THREAT-MODEL "Images"), so only the decoders the helper runs are checked there.
        let decoders = ["libvips", "libheif", "libcurl", "libavformat", "libavcodec", "libswscale"]
        for (binary, banned) in [(CLI.binary, decoders + ["libjpeg", "libpng", "libwebp", "libtiff"]),
                                 (GUITests.binDir + "/nu11vlt-app", decoders)] {
            let ldd = try cli.spawn("/usr/bin/ldd", [binary])
            for lib in banned { #expect(!ldd.out.contains(lib), "\(binary) links \(lib)") }
        }
        // The whole import, helper included, makes no network call.
        try cli.initVault()
        let land = try PhotoFixtures.orientedJPEGWithGPS(cli)
        let strace = try #require(PhotoFixtures.tool("strace"))
        let r = try cli.spawn(strace, ["-f", "-qq", "-e", "trace=network", "-o", cli.root + "/net", CLI.binary, "import", "--pin-stdin", land],
                              input: Data((cli.pin + "\n").utf8))
        #expect(r.code == 0)
        let calls = StraceLines.networkCalls(try String(contentsOfFile: cli.root + "/net", encoding: .utf8))
        #expect(calls.isEmpty, "network system calls: \(calls)")
        #expect(try cli.listJSON().first?["thumbnail"] as? Bool == true, "the helper made no thumbnail")
    }

    /// The PNG payloads of kitty graphics escapes (chunks joined).
    static func kittyImages(_ out: String) -> [[UInt8]] {
        var images: [[UInt8]] = []
        var current = ""
        for part in out.components(separatedBy: "\u{1B}_G").dropFirst() {
            guard let semi = part.firstIndex(of: ";"), let end = part.range(of: "\u{1B}\\") else { continue }
            let keys = part[..<semi]
            current += part[part.index(after: semi)..<end.lowerBound]
            if keys.contains("m=0") {
                images.append([UInt8](Data(base64Encoded: current) ?? Data()))
                current = ""
            }
        }
        return images
    }
}

/// `thumbnails --missing` makes each thumbnail durable before its name appears: the system
/// calls themselves are read (strace), so a writer prepared for a batch and published alone
/// (the old trap: no fsync at all) fails here.
@Suite("Thumbnail durability")
struct ThumbnailDurabilityTests {
    @Test("thumbnails --missing: every thumbnail's temp file is fsynced before its rename, and its folder after")
    func backfillIsDurable() throws {
        let cli = try CLI()
        try cli.initVault()
        let strace = try #require(PhotoFixtures.tool("strace"), "strace is not installed")
        var photos: [String] = []
        for i in 0..<3 {
            let path = cli.root + "/d\(i).jpg"
            try PhotoFixtures.run(cli, "convert", ["-size", "320x240", "plasma:fractal", path])
            photos.append(path)
        }
        let ids = try cli.importIDs(photos)
        for id in ids { try FileManager.default.removeItem(atPath: cli.vault + "/Thumbnails/\(id).n11thumb") }
        _ = try cli.run(["check", "--repair"], pinStdin: true)
        let r = try cli.spawn(strace, ["-f", "-y", "-qq", "-e", "trace=fsync,fdatasync,rename,renameat,renameat2", "-o", cli.root + "/trace",
                                       CLI.binary, "thumbnails", "--missing", "--json", "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
        #expect(r.code == 0, "thumbnails --missing: \(r.stderr)")
        let lines = try String(contentsOfFile: cli.root + "/trace", encoding: .utf8).split(separator: "\n").map(String.init)
        var renamed = 0
        for (at, line) in lines.enumerated() where line.contains("rename") && line.contains("/Thumbnails/") && line.contains(".n11thumb") {
            guard let temp = line.firstMatch(of: /"([^"]+\/Thumbnails\/[^"\/]+)"/)?.1, !temp.hasSuffix(".n11thumb") else { continue }
            renamed += 1
            #expect(lines[..<at].contains { $0.contains("fsync(") && $0.contains(String(temp)) },
                    "the thumbnail was renamed into place before its content was fsynced: \(line)")
            #expect(lines[(at + 1)...].contains { $0.contains("fsync(") && $0.contains("/Thumbnails>") },
                    "the Thumbnails folder was not fsynced after the rename: \(line)")
        }
        #expect(renamed == ids.count, "expected \(ids.count) thumbnails renamed into place, saw \(renamed): \(lines.filter { $0.contains("rename") })")
    }
}
