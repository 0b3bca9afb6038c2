// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 58 ("an item keeps its ID across fade changes and album moves"): through the built
/// binary, an item's ID is the same after an album move, after `fade set` and after the fade
/// is cleared.
@Suite("item IDs across fade changes and album moves")
struct IDStabilityTests {
    @Test("import, album move, fade set, fade set off: the same ID every time, and the README's `fade set ID off` then `fade set ID 7d` works")
    func sameID() throws {
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.run(["album", "create", "Trips"], pinStdin: true).code == 0)
        let id = try cli.importIDs([cli.file("keep.txt", Array("keep me\n".utf8))])[0]
        func listed() throws -> [String] { try cli.listJSON(["--all"]).compactMap { $0["id"] as? String } }
        #expect(try cli.run(["album", "move", id, "--to", "Trips"], pinStdin: true).code == 0)
        #expect(try listed() == [id], "after an album move")
        #expect(try cli.run(["album", "move", id, "--photos"], pinStdin: true).code == 0)
        #expect(try listed() == [id], "after a move back to Photos")
        let set = try cli.run(["fade", "set", id, "1h"], pinStdin: true)
        #expect(set.code == 0, "fade set: \(set.stderr)")
        #expect(try listed() == [id], "after fade set: \(set.out)")
        let off = try cli.run(["fade", "set", id, "off"], pinStdin: true)
        #expect(off.code == 0, "fade set off: \(off.stderr)")
        #expect(try listed() == [id], "after fade set off: \(off.out)")
        let again = try cli.run(["fade", "set", id, "7d"], pinStdin: true)
        #expect(again.code == 0, "fade set again by the same ID: \(again.stderr)")
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data("keep me\n".utf8))
    }
}
