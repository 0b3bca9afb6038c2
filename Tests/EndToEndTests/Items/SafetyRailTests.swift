// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 17's safety rails and progress for single long operations.
@Suite("safety rails: duplicates, folders as albums, export and wipe progress")
struct SafetyRailTests {
    @Test("--skip-duplicates skips files whose content is in the vault (same size, different bytes still imports); without it they import")
    func duplicates() throws {
        let cli = try CLI()
        try cli.initVault()
        let a = cli.file("a.jpg", Array(repeating: 7, count: 5000))
        _ = try cli.importIDs([a])
        let copy = cli.file("copy-of-a.jpg", Array(repeating: 7, count: 5000))
        let sameSize = cli.file("same-size.jpg", Array(repeating: 8, count: 5000))
        let r = try cli.run(["import", "--skip-duplicates", copy, sameSize], pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stderr.contains("skipped") && r.stderr.contains("copy-of-a.jpg is already in the vault"), "\(r.stderr)")
        let names = try cli.listJSON().compactMap { $0["name"] as? String }
        #expect(names.sorted() == ["a.jpg", "same-size.jpg"], "\(names)")
        let again = try cli.run(["import", copy], pinStdin: true)
        let count = try cli.listJSON().count
        #expect(again.code == 0 && count == 3, "a script without the flag imports as before")
    }

    @Test("--albums-from-folders keeps the folder structure as albums (made when missing), needs -r")
    func foldersAsAlbums() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["album", "create", "Trips"], pinStdin: true).code == 0)
        for (path, byte) in [("Trips/a.jpg", 1), ("Trips/Rome/b.jpg", 2), ("Trips/Rome/c.jpg", 3), ("Trips/Oslo/d.jpg", 4)] {
            try FileManager.default.createDirectory(atPath: cli.root + "/" + (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: cli.root + "/" + path, contents: Data([UInt8(byte)]))
        }
        expectCleanError(try cli.run(["import", "--albums-from-folders", cli.root + "/Trips"], pinStdin: true), code: 64, mentions: "needs -r")
        let r = try cli.run(["import", "-r", "--albums-from-folders", cli.root + "/Trips/"], pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        var albumOf: [String: String] = [:]
        for item in try cli.listJSON() { albumOf[item["name"] as? String ?? ""] = item["album"] as? String }
        #expect(albumOf == ["a.jpg": "Trips", "b.jpg": "Trips/Rome", "c.jpg": "Trips/Rome", "d.jpg": "Trips/Oslo"], "\(albumOf)")
        let albums = try cli.run(["album", "list"], pinStdin: true).out
        #expect(albums.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 3, "\(albums)")
    }

    @Test("export of one large item and wipe --secure draw a progress line on a terminal")
    func progress() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("big.bin", [UInt8](repeating: 9, count: 24 << 20))])[0]
        try Data((cli.pin + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/pin"))
        let script = try #require(PhotoFixtures.tool("script"))
        let export = try cli.spawn(script, ["-qec", "\(CLI.binary) export \(id) -o \(cli.root)/out.bin --pin-fd 3 3<\(cli.root)/pin", "/dev/null"])
        #expect(export.code == 0 && export.out.contains("\r\u{1B}[Kexporting "), "no export progress: \(export.out.debugDescription)")
        let wipe = try cli.spawn(script, ["-qec", "\(CLI.binary) wipe --secure --yes", "/dev/null"])
        #expect(wipe.code == 0 && wipe.out.contains("\r\u{1B}[Koverwriting "), "no wipe progress: \(wipe.out.debugDescription)")
    }
}
