// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

@Suite("item IDs on the command line: unique prefixes, like git and restic")
struct ReferenceTests {
    @Test("export, view, delete, fade set and album move take a unique prefix; a bad one fails in one line")
    func prefixes() throws {
        let cli = try CLI()
        try cli.initVault()
        let a = cli.file("a.jpg", [1, 2, 3])
        let ids = try cli.importIDs([a, cli.file("b.jpg", [4]), cli.file("c.jpg", [5]), cli.file("d.jpg", [6])])
        func short(_ id: String) -> String { String(id.prefix(8)) }
        let exported = try cli.run(["export", short(ids[0]), "-o", "-"], pinStdin: true)
        #expect(exported.code == 0 && exported.stdout == Data([1, 2, 3]), "export: \(exported.stderr)")
        let viewed = try cli.run(["view", "--no-inline", short(ids[0]).uppercased()], pinStdin: true,
                                 environment: ["NU11VLT_VIEWER": "cmp \(a)"])
        #expect(viewed.code == 0, "view: \(viewed.stderr)")
        #expect(try cli.run(["album", "create", "Trip"], pinStdin: true).code == 0)
        let moved = try cli.run(["album", "move", "--to", "Trip", short(ids[1])], pinStdin: true)
        #expect(moved.code == 0, "album move: \(moved.stderr)")
        let faded = try cli.run(["fade", "set", short(ids[2]), "1h"], pinStdin: true)
        #expect(faded.code == 0, "fade set: \(faded.stderr)")
        let deleted = try cli.run(["delete", short(ids[3])], pinStdin: true)
        #expect(deleted.code == 0, "delete: \(deleted.stderr)")
        let left = try cli.listJSON(["--limit", "100"]).compactMap { $0["id"] as? String }
        #expect(!left.contains(ids[3]) && left.contains(ids[0]))
        expectCleanError(try cli.run(["export", "abc", "-o", "-"], pinStdin: true), code: 64, mentions: "4 to 32 hex digits")
        expectCleanError(try cli.run(["delete", "wxyz"], pinStdin: true), code: 64, mentions: "not an ID")
        let absent = ids.contains { $0.hasPrefix("0000") } ? "ffff" : "0000"
        expectCleanError(try cli.run(["export", absent, "-o", "-"], pinStdin: true), code: 4, mentions: "no item")
    }
}
