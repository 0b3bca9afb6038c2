// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Testing
@testable import Nu11Vault

/// Issue 57, tells as a class: the same session — a library-sized folder import (the listing
/// file's bulk path), the gallery's listing, summaries, a page — run once with the owner's PIN
/// and once with the backup PIN on two copies of one key store; every key-store file the
/// backup session creates, changes or removes must be one the owner's session does too (names
/// compared with their random hex masked), and the listing cache (`listing.n11g`) must come
/// through a backup session byte for byte.
@Suite("a backup-PIN session leaves no tell in the key store")
struct BackupTellsTests {
    /// Every file under `root`: its path (hex runs masked) → its files' bytes.
    static func tree(_ root: String) throws -> [String: [String: Data]] {
        var out: [String: [String: Data]] = [:]
        let walker = FileManager.default.enumerator(atPath: root)
        while let relative = walker?.nextObject() as? String {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDir), !isDir.boolValue else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative))
            // Random hex names masked: IDs, and key packs' shards (which items a pack holds is random).
            let masked = relative.replacingOccurrences(of: "[0-9a-f]{8,}", with: "<hex>", options: .regularExpression)
                .replacingOccurrences(of: "(^|/)[0-9a-f]{2}\\.n11p$", with: "$1<shard>.n11p", options: .regularExpression)
            out[masked, default: [:]][relative] = bytes
        }
        return out
    }

    /// The masked names whose files were created, changed or removed between two trees.
    static func changed(_ before: [String: [String: Data]], _ after: [String: [String: Data]]) -> Set<String> {
        Set(Set(before.keys).union(after.keys).filter { before[$0] != after[$0] })
    }

    func session(_ location: VaultLocation, pin: String, files: [String]) throws {
        let v = try LockedVault(location).unlock(pin: secret(pin))
        #expect(try v.items.importFiles(files).count == files.count)
        let ids = try v.items.datedItemIDs()
        _ = try v.items.summaries(ids.prefix(50).map { $0.id })
        _ = try v.items.list(limit: 20)
        v.lock()
    }

    @Test("owner's session vs backup session on copies of one key store: the backup one changes nothing the owner's does not; listing.n11g untouched")
    func sameSessionBothPINs() throws {
        let t = try TestVault()
        let v = try t.vault
        try v.profiles.setBackupPIN(secret("backup-pin-1"))
        _ = try v.items.importFile(at: try t.file("owner.txt", [1]))
        _ = try v.items.datedItemIDs()  // the owner's listing file
        v.lock()
        t.close()
        let first = try LockedVault(t.location).unlock(pin: secret("backup-pin-1"))
        _ = try first.items.importFile(at: try t.file("backup.txt", [2]))
        first.lock()
        let listing = t.location.keyStoreRoot + "/listing.n11g"
        let listingBefore = try #require(FileManager.default.contents(atPath: listing), "the owner's listing wrote no file")

        var files: [String] = []
        for i in 0..<ListingFile.extendAfter { files.append(try t.file("lib\(i).txt", Array("item \(i)".utf8))) }
        var locations: [VaultLocation] = []
        for name in ["owner", "backup"] {
            let copy = t.root + "/" + name
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: t.location.vaultRoot, toPath: copy + "/vault")
            try FileManager.default.copyItem(atPath: t.location.keyStoreRoot, toPath: copy + "/ks")
            locations.append(VaultLocation(vaultRoot: copy + "/vault", keyStoreRoot: copy + "/ks"))
        }
        let before = try Self.tree(t.location.keyStoreRoot)
        try session(locations[0], pin: "test-pin", files: files)
        try session(locations[1], pin: "backup-pin-1", files: files)
        let byOwner = Self.changed(before, try Self.tree(locations[0].keyStoreRoot))
        let byBackup = Self.changed(before, try Self.tree(locations[1].keyStoreRoot))
        #expect(byBackup.subtracting(byOwner).isEmpty, "files only a backup session changes (a tell): \(byBackup.subtracting(byOwner).sorted())")
        #expect(FileManager.default.contents(atPath: locations[1].keyStoreRoot + "/listing.n11g") == listingBefore,
                "a backup session wrote the listing cache (it would tell a backup PIN is in use)")
        #expect(byOwner.contains("listing.n11g"), "the owner's session did not write the listing file: the comparison proves nothing")
    }
}
