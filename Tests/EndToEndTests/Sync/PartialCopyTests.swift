// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Syncthing's partial copies (`.syncthing.<name>.tmp`, kept a day when a transfer is cut
/// short) of a deleted item's files: one of its key file holds the item's key for every holder
/// of the shared key, one of its sidecar its name (docs/FORMAT.md § 9.6). Issue 60's sync test
/// found one left on a device after the item was deleted elsewhere, mid-transfer.
@Suite("Syncthing's partial copies of deleted items")
struct PartialCopyTests {
    static func plant(_ path: String, ageSeconds: Double = 0) throws {
        try Data(repeating: 0x5A, count: 96).write(to: URL(fileURLWithPath: path))
        if ageSeconds > 0 {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -ageSeconds)], ofItemAtPath: path)
        }
    }

    static func partial(_ folder: String, _ name: String) -> String { folder + "/.syncthing." + name + ".tmp" }

    @Test("a delete removes the item's partial copies; at unlock a shared vault removes those of items it deleted (even fresh) and abandoned ones of items it does not list, and leaves a listed item's and a fresh unknown one")
    func partialCopies() throws {
        let cli = try CLI()
        try cli.initVault()
        let ids = try cli.importIDs([cli.file("x.bin", [1]), cli.file("y.bin", [2])])
        let (x, y) = (ids[0], ids[1])
        _ = try DeviceTests.pair(cli)
        let keys = cli.vault + "/Keys", meta = cli.vault + "/Meta", photos = cli.vault + "/Vault/Photos"
        let unknown = String(repeating: "ab", count: 16), arriving = String(repeating: "cd", count: 16)
        let ofX = [Self.partial(keys, x + ".n11w"), Self.partial(meta, x + ".n11m"), Self.partial(photos, x + ".n11")]
        for path in ofX { try Self.plant(path) }
        let abandoned = [Self.partial(keys, unknown + ".n11w"), Self.partial(meta, unknown + ".n11m")]
        for path in abandoned { try Self.plant(path, ageSeconds: 300) }
        let kept = [Self.partial(meta, arriving + ".n11m"), Self.partial(keys, y + ".n11w")]
        try Self.plant(kept[0])
        try Self.plant(kept[1], ageSeconds: 300)
        let d = try cli.run(["delete", x], pinStdin: true)
        #expect(d.code == 0, "\(d.stderr)")
        let left = ofX.filter { FileManager.default.fileExists(atPath: $0) }
        #expect(left.isEmpty, "partial copies of the deleted item left: \(left)")
        // Put back by a sync peer right after: this device deleted it, so it goes at once.
        try Self.plant(ofX[0])
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        let stale = (abandoned + [ofX[0]]).filter { FileManager.default.fileExists(atPath: $0) }
        #expect(stale.isEmpty, "partial copies left after the unlock: \(stale)")
        let gone = kept.filter { !FileManager.default.fileExists(atPath: $0) }
        #expect(gone.isEmpty, "removed a copy in transit: \(gone)")
        let check = try cli.run(["check"], pinStdin: true)
        #expect(check.code == 0, "\(check.out) \(check.stderr)")
    }

    @Test("a vault that is not shared (one device, synced to a backup peer): a delete removes the item's partial copies too")
    func notShared() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("w.bin", [3, 3])])[0]
        let copies = [Self.partial(cli.vault + "/Meta", id + ".n11m"), Self.partial(cli.vault + "/Thumbnails", id + ".n11thumb")]
        for path in copies { try Self.plant(path) }
        let d = try cli.run(["delete", id, "--secure"], pinStdin: true)
        #expect(d.code == 0, "\(d.stderr)")
        let left = copies.filter { FileManager.default.fileExists(atPath: $0) }
        #expect(left.isEmpty, "partial copies of the deleted item left: \(left)")
    }
}
