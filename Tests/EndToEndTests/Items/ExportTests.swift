// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// `export` of many items with one PIN: into a folder, by ID, album, capture date or all.
@Suite("export into a folder")
struct ExportTests {
    func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test("IDs, --album and --all into a folder: byte-identical, 0600 files in a new 0700 folder, taken names numbered, nothing replaced")
    func intoFolder() throws {
        let cli = try CLI()
        try cli.initVault()
        try FileManager.default.createDirectory(atPath: cli.root + "/b", withIntermediateDirectories: true)
        let ids = try cli.importIDs([cli.file("a.txt", [1]), cli.file("same.txt", [2]), cli.file("b/same.txt", [3])])
        #expect(try cli.run(["album", "create", "Trip"], pinStdin: true).code == 0)
        #expect(try cli.run(["album", "move", "--to", "Trip", ids[0], ids[1]], pinStdin: true).code == 0)

        let all = cli.root + "/all"
        let r = try cli.run(["export", "--all", "-o", all], pinStdin: true)
        #expect(r.code == 0 && r.stderr.contains("exported 3 of 3 item(s)"), "\(r.stderr)")
        #expect(contents(all + "/a.txt") == Data([1]) && contents(all + "/same.txt") != nil && contents(all + "/same (2).txt") != nil)
        #expect(Set([contents(all + "/same.txt"), contents(all + "/same (2).txt")]) == [Data([2]), Data([3])])
        var st = stat()
        #expect(stat(all, &st) == 0 && st.st_mode & 0o777 == 0o700)
        #expect(stat(all + "/a.txt", &st) == 0 && st.st_mode & 0o777 == 0o600)

        // An existing folder with a file of that name: it is kept, the item gets " (2)"; the folder keeps its mode.
        let mine = cli.root + "/mine"
        try FileManager.default.createDirectory(atPath: mine, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try Data([9]).write(to: URL(fileURLWithPath: mine + "/a.txt"))
        let album = try cli.run(["export", "--album", "Trip", "-o", mine, "--json"], pinStdin: true)
        #expect(album.code == 0, "\(album.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: album.stdout) as? [String: Any])
        let files = (doc["exported"] as? [[String: Any]])?.compactMap { $0["file"] as? String }.sorted()
        #expect(files == ["a (2).txt", "same.txt"], "\(album.out)")
        #expect(contents(mine + "/a.txt") == Data([9]) && contents(mine + "/a (2).txt") == Data([1]))
        #expect(stat(mine, &st) == 0 && st.st_mode & 0o777 == 0o755, "the user's folder was chmodded")

        // Two IDs; and one ID with -o an existing folder goes into it under its name.
        let two = cli.root + "/two"
        #expect(try cli.run(["export", ids[0], ids[2], "-o", two], pinStdin: true).code == 0)
        #expect(contents(two + "/a.txt") == Data([1]) && contents(two + "/same.txt") == Data([3]))
        #expect(try cli.run(["export", ids[0], "-o", two], pinStdin: true).code == 0)
        #expect(contents(two + "/a (2).txt") == Data([1]))
    }

    @Test("capture dates select; bad combinations are refused before the PIN, one line each")
    func selectionsAndRefusals() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("now.bin", [5])])[0]
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        // Yesterday to tomorrow (whole local days), so an import just before midnight is inside too.
        let today = formatter.string(from: Date().addingTimeInterval(-86_400))
        let tomorrow = formatter.string(from: Date().addingTimeInterval(86_400))
        let r = try cli.run(["export", "--taken-from", today, "--taken-to", tomorrow, "-o", cli.root + "/day"], pinStdin: true)
        #expect(r.code == 0 && contents(cli.root + "/day/now.bin") == Data([5]), "\(r.stderr)")
        #expect(try cli.listJSON(["--taken-from", today]).count == 1)
        #expect(try cli.listJSON(["--taken-to", "2001-01-01"]).isEmpty)
        expectCleanError(try cli.run(["export", "--taken-to", "2001-01-01", "-o", cli.root + "/old"], pinStdin: true),
                         code: 4, mentions: "no item was taken in that range")
        #expect(!FileManager.default.fileExists(atPath: cli.root + "/old/x"))
        // Refused before any PIN is read (no PIN on stdin: a prompt would fail differently).
        for (args, says) in [(["export", "-o", cli.root + "/x"], "give item IDs"),
                             (["export", id, "--all", "-o", cli.root + "/x"], "give one of"),
                             (["export", "--all", "-o", "-"], "folder"),
                             (["export", "--all", "--force", "-o", cli.root + "/x"], "--force does not apply"),
                             (["export", "--taken-from", "2026-02-01", "--taken-to", "2026-01-01", "-o", cli.root + "/x"], "earlier date first"),
                             (["export", "--taken-from", "last tuesday", "-o", cli.root + "/x"], "taken-from"),
                             (["export", "--all", "-o", cli.root + "/no/such/folder"], "does not exist")] {
            expectCleanError(try cli.run(args), code: 64, mentions: says)
        }
        try Data([1]).write(to: URL(fileURLWithPath: cli.root + "/afile"))
        expectCleanError(try cli.run(["export", "--all", "-o", cli.root + "/afile"]), code: 64, mentions: "is a file")
    }

    @Test("a damaged item is named and skipped, the others are written, and the exit says so")
    func damagedItem() throws {
        let cli = try CLI()
        try cli.initVault()
        let ids = try cli.importIDs([cli.file("good.bin", [1, 2, 3]), cli.file("bad.bin", [4, 5, 6])])
        let sealed = try #require(FileManager.default.subpaths(atPath: cli.vault)?.first { $0.hasSuffix(ids[1] + ".n11") })
        var data = try #require(contents(cli.vault + "/" + sealed))
        data[data.count - 1] ^= 1
        try data.write(to: URL(fileURLWithPath: cli.vault + "/" + sealed))
        let r = try cli.run(["export", "--all", "-o", cli.root + "/out"], pinStdin: true)
        expectCleanError(r, code: 5, mentions: "1 of 2 item(s) could not be read; the other 1 were exported")
        #expect(r.stderr.contains("nu11vlt: warning: not exported: bad.bin (\(ids[1]))"), "\(r.stderr)")
        #expect(contents(cli.root + "/out/good.bin") == Data([1, 2, 3]) && contents(cli.root + "/out/bad.bin") == nil)
    }
}
