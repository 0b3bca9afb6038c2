// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Testing
@testable import Nu11Vault

@Suite("the export plan: many items into one folder, one unlock, nothing replaced")
struct ExportPlanTests {
    static func id() throws -> ItemID { try ItemID(bytes: Array(repeating: 0xab, count: 16)) }

    @Test("hostile and awkward names become one safe, visible path component")
    func safeNames() throws {
        for (name, safe) in [("beach.jpg", "beach.jpg"), ("../../.bashrc", "_._.._.bashrc"), ("a/b", "a_b"), ("..", "item-abababab"),
                             (".", "item-abababab"), ("", "item-abababab"), (".profile", "_profile"), ("tab\there", "tab_here"),
                             ("back\\slash", "back_slash")] {
            #expect(ExportPlan.safeName(name, id: try Self.id()) == safe, "\(name)")
        }
        let long = String(repeating: "é", count: 200) + ".jpeg"
        let cut = ExportPlan.safeName(long, id: try Self.id())
        #expect(cut.utf8.count <= 255 && cut.utf8.count > 245 && cut.hasSuffix("é.jpeg"), "\(cut.utf8.count): \(cut)")
        let numbered = ExportPlan.numbered(String(repeating: "x", count: 251) + ".jpg", 12)
        #expect(numbered.utf8.count == 255 && numbered.hasSuffix(" (12).jpg"), "\(numbered)")
        #expect(ExportPlan.numbered("README", 2) == "README (2)" && ExportPlan.numbered("a.tar.gz", 3) == "a.tar (3).gz")
    }

    @Test("names taken in the folder or by an earlier item get (2), (3); nothing there is touched")
    func uniqueNames() throws {
        let t = try TestVault()
        let vault = try t.vault
        let first = try vault.items.importFile(at: try t.file("same.txt", [1]))
        try FileManager.default.createDirectory(atPath: t.root + "/sub", withIntermediateDirectories: true)
        let second = try vault.items.importFile(at: try t.file("sub/same.txt", [2]))
        let folder = t.root + "/out"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data([9]).write(to: URL(fileURLWithPath: folder + "/same.txt"))
        let plan = try ExportPlan(items: try vault.items.select(.items([first.ref, second.ref, first.ref])), folder: folder)
        #expect(plan.entries.map(\.fileName) == ["same (2).txt", "same (3).txt"], "a repeated ID is exported once")
        let report = try vault.items.export(plan, stripLocation: false)
        #expect(report.written.count == 2 && report.failed.isEmpty && report.bytes == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/same.txt")) == Data([9]), "an existing file was replaced")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/same (2).txt")) == Data([1]))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/same (3).txt")) == Data([2]))
        #expect { _ = try ExportPlan(items: [], folder: t.root + "/missing") } throws: { ($0 as? Nu11Error)?.code == .notFound }
    }

    @Test("a file that appears after the plan is not replaced: the export stops there and says so")
    func raceNeverReplaces() throws {
        let t = try TestVault()
        let vault = try t.vault
        _ = try vault.items.importFile(at: try t.file("a.bin", [1, 2]))
        let folder = t.root + "/out"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let plan = try ExportPlan(items: try vault.items.select(.all), folder: folder)
        try Data([7]).write(to: URL(fileURLWithPath: folder + "/a.bin"))
        #expect { _ = try vault.items.export(plan, stripLocation: false) } throws: { ($0 as? Nu11Error)?.code == .alreadyExists }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/a.bin")) == Data([7]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["a.bin"], "a temp file was left")
    }

    @Test("200 items by album and all: one Argon2id run (the unlock), byte-identical files; a damaged item is reported, the rest written")
    func oneUnlockManyItems() throws {
        let t = try TestVault()
        t.close()
        let runs = KDFRunCounter()
        try Argon2id.$runs.withValue(runs) {
            let vault = try LockedVault(t.location).unlock(pin: secret("test-pin"))
            _ = try vault.albums.createAlbum("Trip")
            var sources: [String: Data] = [:]
            for i in 0..<200 {
                let bytes = (0..<(i * 37 % 5000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }
                let path = try t.file("f\(i).bin", bytes)
                sources["f\(i).bin"] = Data(bytes)
                _ = try vault.items.importFile(at: path, album: i % 2 == 0 ? "Trip" : nil)
            }
            for (selection, folder, count) in [(ExportSelection.album("Trip"), "trip", 100), (.all, "all", 200)] {
                let plan = try ExportPlan(items: try vault.items.select(selection), folder: try mkdir(t.root + "/" + folder))
                let report = try vault.items.export(plan, stripLocation: false)
                #expect(report.written.count == count && report.failed.isEmpty)
                for entry in report.written {
                    #expect(try Data(contentsOf: URL(fileURLWithPath: plan.folder + "/" + entry.fileName)) == sources[entry.item.name])
                }
            }
            #expect(runs.count == 1, "an export ran Argon2id again: \(runs.count) runs")
            // Damage one item: it is reported, the others are written.
            let victim = try #require(try vault.items.select(.album("Trip")).first)
            let path = t.location.path(id: victim.id, kind: .file, domain: victim.domain, album: victim.albumID)
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            data[data.count - 1] ^= 1
            try data.write(to: URL(fileURLWithPath: path))
            let plan = try ExportPlan(items: try vault.items.select(.album("Trip")), folder: try mkdir(t.root + "/again"))
            let report = try vault.items.export(plan, stripLocation: false)
            #expect(report.failed.map(\.entry.item.id) == [victim.id] && report.written.count == 99)
            #expect(!FileManager.default.fileExists(atPath: plan.folder + "/" + victim.name), "a damaged item left a file")
        }
    }

    @Test("a date range selects by capture date (else the file's mtime, else import time), both ends included; a reversed range is refused")
    func takenRange() throws {
        let t = try TestVault()
        let vault = try t.vault
        _ = try vault.items.importFile(at: try t.file("now.bin", [1]))
        // The date as stored (the import's own summary may carry finer precision than the index keeps).
        let item = try #require(try vault.items.list().items.first)
        let at = item.sortDate
        #expect(item.taken == nil && item.modified != nil && at == item.modified, "a plain file's date is its mtime")
        #expect(try vault.items.select(.taken(from: at, to: at)).map(\.id) == [item.id])
        #expect(try vault.items.select(.taken(from: at.addingTimeInterval(1), to: nil)).isEmpty)
        #expect(try vault.items.select(.taken(from: nil, to: at.addingTimeInterval(-1))).isEmpty)
        #expect(try vault.items.list(taken: (nil, nil)).items.map(\.id) == [item.id])
        #expect { _ = try vault.items.select(.taken(from: at, to: at.addingTimeInterval(-60))) } throws: { ($0 as? Nu11Error)?.code == .invalidArgument }
    }

    func mkdir(_ path: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
