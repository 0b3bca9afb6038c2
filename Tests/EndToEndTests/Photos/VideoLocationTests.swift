// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Videos lose their location on the way out (issue 56): MP4, QuickTime and Matroska/WebM
/// files made by ffmpeg with an ISO 6709 location, exported with `--strip-location`, with the
/// `export.strip_location` setting and in a portable archive; ffprobe must find no location
/// tag, the video must still decode, and its media packets (ffmpeg's framemd5) and MP4 `mdat`
/// payload must be byte-identical. A container whose location cannot be removed is refused.
@Suite("Video locations")
struct VideoLocationTests {
    static let place = "+48.8584+002.2945/"

    /// name → ffmpeg arguments after the test source (a 1 s, 64×64 clip).
    static let clips: [(String, [String])] = [
        // keys/ilst "location" and a 3GPP `loci` box
        ("keys.mp4", ["-metadata", "location=\(place)", "-movflags", "use_metadata_tags"]),
        // `loci` only
        ("plain.mp4", ["-metadata", "location=\(place)", "-movflags", "+faststart"]),
        // Apple's key in meta/keys/ilst, as an iPhone writes it
        ("IMG_0002.MOV", ["-metadata", "com.apple.quicktime.location.ISO6709=+48.8584+002.2945+035.000/", "-movflags", "use_metadata_tags"]),
        // QuickTime's `©xyz` in udta
        ("xyz.mov", ["-metadata", "location=\(place)"]),
        ("clip.mkv", ["-metadata", "location=\(place)"]),
        ("clip.webm", ["-c:v", "libvpx", "-b:v", "200k", "-metadata", "location=\(place)"]),
    ]

    static func make(_ cli: CLI, _ name: String, _ extra: [String]) throws -> String {
        let path = cli.root + "/" + name
        try PhotoFixtures.run(cli, "ffmpeg", ["-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=duration=1:size=64x64:rate=5"]
                              + extra + [path])
        return path
    }

    /// Every tag ffprobe reads, of the file and its streams, lowercased.
    static func tags(_ cli: CLI, _ path: String) throws -> String {
        try PhotoFixtures.run(cli, "ffprobe", ["-v", "error", "-show_format", "-show_streams", "-show_chapters", path]).out.lowercased()
    }

    /// The media packets, as ffmpeg reads them (one MD5 a packet).
    static func packets(_ cli: CLI, _ path: String) throws -> [String] {
        try PhotoFixtures.run(cli, "ffmpeg", ["-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]).out
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    /// The payload of the top-level `mdat` box of an MP4/QuickTime file.
    static func mdat(_ data: Data) -> Data? {
        let b = [UInt8](data)
        var p = 0
        while p + 8 <= b.count {
            var size = Int(b[p]) << 24 | Int(b[p + 1]) << 16 | Int(b[p + 2]) << 8 | Int(b[p + 3])
            var header = 8
            if size == 1, p + 16 <= b.count {
                size = b[(p + 8)..<(p + 16)].reduce(0) { $0 << 8 | Int($1) }
                header = 16
            }
            if size == 0 { size = b.count - p }
            guard size >= header, p + size <= b.count else { return nil }
            if b[(p + 4)..<(p + 8)].elementsEqual("mdat".utf8) { return Data(b[(p + header)..<(p + size)]) }
            p += size
        }
        return nil
    }

    /// No location, still decodes, same size, same media.
    static func expectStripped(_ cli: CLI, _ out: String, original: String, _ note: String) throws {
        let tags = try Self.tags(cli, out)
        let located = tags.split(separator: "\n").filter { $0.hasPrefix("tag:") && ($0.contains("location") || $0.contains("xyz")) }
        #expect(located.isEmpty && !tags.contains("48.8584"), "\(note): location left: \(located)")
        let decode = try cli.spawn(try #require(PhotoFixtures.tool("ffmpeg")), ["-v", "error", "-i", out, "-f", "null", "-"])
        #expect(decode.code == 0 && decode.stderr.isEmpty, "\(note): does not decode: \(decode.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: original)), after = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(before.count == after.count, "\(note): the size changed")
        #expect(before != after, "\(note): exported byte-identical to the original")
        #expect(try packets(cli, out) == packets(cli, original), "\(note): the media packets changed")
        if !out.hasSuffix(".mkv") && !out.hasSuffix(".webm") {
            #expect(mdat(before) != nil && mdat(before) == mdat(after), "\(note): the mdat payload changed")
        }
        let raw = String(decoding: after, as: Unicode.ASCII.self)
        #expect(!raw.contains("48.8584"), "\(note): the coordinates are still in the file")
    }

    /// The clips, imported: name → (original path, item ID).
    static func imported(_ cli: CLI) throws -> [String: (path: String, id: String)] {
        var originals: [String: String] = [:]
        for (name, extra) in Self.clips {
            let path = try Self.make(cli, name, extra)
            #expect(try Self.tags(cli, path).contains("tag:location") || Self.tags(cli, path).contains("tag:com.apple.quicktime.location"),
                    "\(name): the fixture has no location tag")
            originals[name] = path
        }
        let r = try cli.run(["import"] + Self.clips.map { originals[$0.0] ?? "" }, pinStdin: true)
        #expect(r.code == 0, "import: \(r.stderr)")
        let listed = try cli.listJSON()
        var out: [String: (path: String, id: String)] = [:]
        for (name, _) in Self.clips {
            let item = try #require(listed.first { $0["name"] as? String == name }, "\(name) not listed")
            #expect(item["gps"] as? Bool == true, "\(name): the vault does not record its location: \(item)")
            out[name] = (try #require(originals[name]), try #require(item["id"] as? String))
        }
        return out
    }

    @Test("--strip-location (to a file and to stdout) and the setting (export --all): no location in MP4, MOV, MKV or WebM; the media byte-identical")
    func stripped() throws {
        let cli = try CLI()
        try cli.initVault()
        let clips = try Self.imported(cli)
        for (name, _) in Self.clips {
            let clip = try #require(clips[name])
            let out = cli.root + "/stripped-" + name
            let e = try cli.run(["export", clip.id, "--strip-location", "-o", out], pinStdin: true)
            #expect(e.code == 0, "strip \(name): \(e.stderr)")
            try Self.expectStripped(cli, out, original: clip.path, "--strip-location \(name)")
        }
        let mov = try #require(clips["IMG_0002.MOV"])
        let piped = try cli.run(["export", mov.id, "--strip-location", "-o", "-"], pinStdin: true)
        let file = try Data(contentsOf: URL(fileURLWithPath: cli.root + "/stripped-IMG_0002.MOV"))
        #expect(piped.code == 0 && piped.stdout == file, "stdout: \(piped.stderr)")
        // The setting makes it the default; --keep-location gives the original back.
        #expect(try cli.run(["settings", "set", "export.strip_location", "true"], pinStdin: true).code == 0)
        let folder = cli.root + "/all"
        let all = try cli.run(["export", "--all", "-o", folder], pinStdin: true)
        #expect(all.code == 0, "export --all: \(all.stderr)")
        for (name, _) in Self.clips {
            try Self.expectStripped(cli, folder + "/" + name, original: try #require(clips[name]).path, "setting, export --all \(name)")
        }
        let kept = cli.root + "/kept.mov"
        #expect(try cli.run(["export", mov.id, "--keep-location", "-o", kept], pinStdin: true).code == 0)
        #expect(FileManager.default.contentsEqual(atPath: kept, andPath: mov.path))
    }

    @Test("a portable archive made with --strip-location carries no video location")
    func archived() throws {
        let cli = try CLI()
        try cli.initVault()
        let clips = try Self.imported(cli)
        let archive = cli.root + "/v.nu11vlt"
        let a = try cli.exportArchive(archive, extra: ["--portable", "--strip-location"])
        #expect(a.code == 0, "archive export: \(a.stderr)")
        let other = try CLI(pin: cli.pin)
        try other.initVault()
        #expect(try other.importArchive(archive).code == 0)
        let folder = other.root + "/from-archive"
        #expect(try other.run(["export", "--all", "--keep-location", "-o", folder], pinStdin: true).code == 0)
        for item in try other.listJSON() {
            let name = try #require(item["name"] as? String)
            #expect(item["gps"] as? Bool == false, "\(name) came out of the archive with a location: \(item)")
            try Self.expectStripped(other, folder + "/" + name, original: try #require(clips[name]).path, "archive \(name)")
        }
    }

    @Test("a truncated clip that claims a location, and a location in a comment, are refused with one line: nothing exported")
    func refused() throws {
        let cli = try CLI()
        try cli.initVault()
        // moov first (faststart), then the media data, cut off: FFmpeg still reads the location.
        let whole = try Data(contentsOf: URL(fileURLWithPath: try Self.make(cli, "full.mp4", ["-metadata", "location=\(Self.place)",
                                                                                             "-movflags", "+faststart+use_metadata_tags"])))
        let cut = cli.root + "/cut.mp4"
        try whole.prefix(whole.count - 200).write(to: URL(fileURLWithPath: cut))
        #expect(try Self.tags(cli, cut).contains("location"), "the truncated fixture shows no location")
        // A location where no tag belongs: the comment.
        let comment = try Self.make(cli, "comment.mov", ["-metadata", "comment=shot at \(Self.place)"])
        let r = try cli.run(["import", cut, comment], pinStdin: true)
        #expect(r.code == 0, "import: \(r.stderr)")
        let listed = try cli.listJSON()
        let cutItem = try #require(listed.first { $0["name"] as? String == "cut.mp4" })
        #expect(cutItem["gps"] as? Bool == true, "the vault does not record the truncated clip's location: \(cutItem)")
        for name in ["cut.mp4", "comment.mov"] {
            let id = try #require(listed.first { $0["name"] as? String == name }?["id"] as? String)
            let out = cli.root + "/out-" + name
            let e = try cli.run(["export", id, "--strip-location", "-o", out], pinStdin: true)
            #expect(e.code != 0, "\(name) was exported")
            let lines = e.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains(id) && lines[0].contains(name) && lines[0].contains("location")
                    && lines[0].contains("hint:"), "\(name): not one line naming the item with a hint: \(e.stderr)")
            #expect(!e.stderr.contains("Fatal") && !e.stderr.contains("Swift runtime"), "\(e.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out), "\(name): a file was left at \(out)")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.root).filter { $0.contains("out-") }
            #expect(leftovers.isEmpty, "temp files left: \(leftovers)")
            let piped = try cli.run(["export", id, "--strip-location", "-o", "-"], pinStdin: true)
            #expect(piped.code != 0 && piped.stdout.isEmpty, "\(name): bytes reached stdout")
        }
        // The setting refuses them too, and so does a portable archive: nothing is written.
        #expect(try cli.run(["settings", "set", "export.strip_location", "true"], pinStdin: true).code == 0)
        let id = try #require(cutItem["id"] as? String)
        #expect(try cli.run(["export", id, "-o", cli.root + "/default.mp4"], pinStdin: true).code != 0)
        #expect(!FileManager.default.fileExists(atPath: cli.root + "/default.mp4"))
        let archive = cli.root + "/refused.nu11vlt"
        let a = try cli.exportArchive(archive, extra: ["--portable"])
        #expect(a.code != 0 && a.stderr.contains(id), "archive export: \(a.stderr)")
        #expect(!FileManager.default.fileExists(atPath: archive), "an archive was left")
    }
}
