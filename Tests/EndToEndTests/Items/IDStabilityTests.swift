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

    /// The domain bytes of every key record (and slot) naming `id` in the key store's packs.
    static func recordDomains(_ cli: CLI, _ id: String) throws -> [UInt8] {
        let folder = cli.keystore + "/keys"
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/" + id.prefix(2) + ".n11p")))
        var out: [UInt8] = []
        var offset = 8
        while offset + 84 <= bytes.count {
            if bytes[(offset + 8)..<(offset + 24)].map({ String(format: "%02x", $0) }).joined() == id { out.append(bytes[offset + 5]) }
            offset += 84
        }
        return out
    }

    /// Every file in the vault folder whose name holds `id`, relative to it.
    static func files(_ cli: CLI, naming id: String) -> [String] {
        let all = (FileManager.default.enumerator(atPath: cli.vault)?.allObjects as? [String]) ?? []
        return all.filter { $0.contains(id) }.sorted()
    }

    @Test("fade on → off → on by one ID: list --json, export, view and thumbnail after each change, one key record and one copy on disk, then delete by that ID")
    func roundTrip() throws {
        let cli = try CLI()
        try cli.initVault()
        let photo = FaultTests.payload
        #expect(photo.starts(with: [0xFF, 0xD8, 0xFF]), "the JPEG payload was not made (ImageMagick missing?)")
        #expect(try cli.run(["album", "create", "Trips"], pinStdin: true).code == 0)
        let id = try cli.importIDs([cli.file("p.jpg", Array(photo))], extra: ["--album", "Trips"])[0]
        func expectOne(_ when: String, fading: Bool) throws {
            let items = try cli.listJSON()
            #expect(items.compactMap { $0["id"] as? String } == [id], "\(when): \(items)")
            #expect((items.first?["fadesAt"] is String) == fading, "\(when): \(items)")
            #expect(items.first?["thumbnail"] as? Bool == true, "\(when): \(items)")
            #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == photo, "\(when): export")
            let tile = try cli.run(["thumbnail", id, "-o", cli.root + "/tile-\(UUID().uuidString).jpg"], pinStdin: true)
            #expect(tile.code == 0, "\(when): thumbnail: \(tile.stderr)")
            let view = try cli.run(["view", "--no-inline", id], pinStdin: true, environment: ["NU11VLT_VIEWER": "cat >/dev/null"])
            #expect(view.code == 0, "\(when): view: \(view.stderr)")
            // One copy: one key record (of the item's domain), its content file in that domain's
            // folder only, its thumbnail and sidecar, and nothing waiting.
            #expect(try Self.recordDomains(cli, id) == [fading ? 2 : 1], "\(when): key records")
            let files = Self.files(cli, naming: id)
            let content = files.filter { $0.hasSuffix(".n11") }
            #expect(files.count == 3 && files.contains("Meta/\(id).n11m") && files.contains("Thumbnails/\(id).n11thumb"), "\(when): \(files)")
            #expect(content.count == 1 && content[0].hasPrefix(fading ? "Fade/" : "Vault/"), "\(when): \(files)")
            let check = try cli.run(["check"], pinStdin: true)
            #expect(check.code == 0, "\(when): check: \(check.out) \(check.stderr)")
        }
        try expectOne("imported", fading: false)
        let on = try cli.run(["fade", "set", id, "1h", "--json"], pinStdin: true)
        let json = try JSONSerialization.jsonObject(with: on.stdout) as? [String: Any]
        #expect(on.code == 0 && json?["id"] as? String == id && json?["previousID"] as? String == id, "\(on.out) \(on.stderr)")
        try expectOne("after fade set 1h", fading: true)
        let off = try cli.run(["fade", "set", String(id.prefix(6)), "off"], pinStdin: true)
        #expect(off.code == 0 && off.out.hasPrefix(id) && !off.out.contains("changed"), "\(off.out) \(off.stderr)")
        try expectOne("after fade set off", fading: false)
        let again = try cli.run(["fade", "set", id, "7d"], pinStdin: true)
        #expect(again.code == 0 && again.out.hasPrefix(id) && !again.out.contains("changed"), "\(again.out) \(again.stderr)")
        try expectOne("after fade set 7d", fading: true)
        // The fade item keeps its key in the Fade domain only: it still fades, by the same ID.
        cli.clockAhead = "+8d"
        let expired = try cli.run(["export", id, "-o", "-"], pinStdin: true)
        #expect(expired.code == 4 && expired.stdout.isEmpty, "an expired fade item exported: \(expired.code) \(expired.stderr)")
        #expect(try Self.recordDomains(cli, id).isEmpty, "its key survived its deadline")
        #expect(Self.files(cli, naming: id).isEmpty, "files left: \(Self.files(cli, naming: id))")
    }

    @Test("delete by the ID after a fade change back and forth: the item, its one key record and every file go")
    func deleteAfterChanges() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("d.txt", Array("bye\n".utf8))])[0]
        #expect(try cli.run(["fade", "set", id, "1h"], pinStdin: true).code == 0)
        #expect(try cli.run(["fade", "set", id, "off"], pinStdin: true).code == 0)
        let deleted = try cli.run(["delete", id], pinStdin: true)
        #expect(deleted.code == 0 && deleted.out.contains(id), "\(deleted.out) \(deleted.stderr)")
        #expect(try cli.listJSON().isEmpty)
        #expect(try Self.recordDomains(cli, id).isEmpty, "a key record survived")
        #expect(Self.files(cli, naming: id).isEmpty, "files left: \(Self.files(cli, naming: id))")
    }

    @Test("a deadline that outlives the item's fade (an older device state put back after `fade set off`) destroys nothing of the permanent item with that ID")
    func staleDeadline() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("s.txt", Array("stay\n".utf8))], extra: ["--fade", "1h"])[0]
        let state = cli.keystore + "/state.n11s"
        let fading = try Data(contentsOf: URL(fileURLWithPath: state))  // names the deadline
        #expect(try cli.run(["fade", "set", id, "off"], pinStdin: true).code == 0)
        try fading.write(to: URL(fileURLWithPath: state))
        cli.clockAhead = "+2h"  // past the old deadline: the sweep at the start of the next command
        let items = try cli.listJSON()
        #expect(items.compactMap { $0["id"] as? String } == [id] && items.first?["fadesAt"] is NSNull, "\(items)")
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data("stay\n".utf8))
        #expect(try Self.recordDomains(cli, id) == [1], "the permanent item's key record")
        #expect(try cli.run(["check"], pinStdin: true).code == 0)
    }

    @Test("a Live Photo's still keeps its ID and its motion's through fade set and back; delete by the still's ID takes both")
    func livePhoto() throws {
        let cli = try CLI()
        try cli.initVault()
        let roll = cli.root + "/roll"
        try FileManager.default.createDirectory(atPath: roll, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: try VideoTests.iphoneClip(cli), toPath: roll + "/IMG_0001.MOV")
        try PhotoFixtures.run(cli, "convert", ["-size", "240x320", "gradient:teal-white", roll + "/IMG_0001.JPG"])
        #expect(try cli.run(["import", "-r", roll], pinStdin: true).code == 0)
        func pair() throws -> (still: [String: Any], motion: [String: Any]) {
            let items = try cli.listJSON()
            return (try #require(items.first { $0["name"] as? String == "IMG_0001.JPG" }),
                    try #require(items.first { $0["name"] as? String == "IMG_0001.MOV" }))
        }
        let before = try pair()
        let stillID = try #require(before.still["id"] as? String), motionID = try #require(before.motion["id"] as? String)
        #expect(before.still["motion"] as? String == motionID)
        for (args, fading) in [(["fade", "set", stillID, "1h"], true), (["fade", "set", stillID, "off"], false)] {
            let r = try cli.run(args, pinStdin: true)
            #expect(r.code == 0, "\(args): \(r.stderr)")
            let now = try pair()
            #expect(now.still["id"] as? String == stillID && now.motion["id"] as? String == motionID, "\(args): \(now)")
            #expect(now.still["motion"] as? String == motionID, "\(args): the still lost its motion: \(now.still)")
            #expect((now.still["fadesAt"] is String) == fading, "\(args): \(now.still)")
        }
        let deleted = try cli.run(["delete", stillID], pinStdin: true)
        #expect(deleted.code == 0 && deleted.out.contains(motionID), "\(deleted.out) \(deleted.stderr)")
        #expect(try cli.listJSON().isEmpty)
    }
}
