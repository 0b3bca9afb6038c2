// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage
import Testing
@testable import Nu11Vault

func secret(_ s: String) -> SecretBytes {
    var b = Array(s.utf8)
    return SecretBytes(consuming: &b)
}

/// A throwaway vault at the KDF floor (a cost a user may also choose).
final class TestVault {
    let root: String
    let location: VaultLocation
    private var opened: Vault?

    init(pin: String = "test-pin") throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("n11v-\(UUID().uuidString)").path
        location = VaultLocation(vaultRoot: root + "/vault", keyStoreRoot: root + "/ks")
        try LockedVault.create(at: location, pin: secret(pin), parameters: .floor)
        opened = try LockedVault(location).unlock(pin: secret(pin))
    }

    var vault: Vault {
        get throws {
            guard let opened else { throw Nu11Error(.internalError, "vault closed") }
            return opened
        }
    }

    /// Releases the vault (and its lock), as the end of a command does.
    func close() { opened = nil }

    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = root + "/" + name
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    func exported(_ id: ItemID) throws -> [UInt8] {
        var sink = MemorySink()
        try vault.items.export(ItemRef(id), to: &sink)
        return sink.bytes
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }
}

@Suite("vault")
struct VaultTests {
    @Test("import → list → export is byte-identical at chunk boundaries")
    func roundTrip() throws {
        let t = try TestVault()
        for size in [0, 1, 16383, 16384, 16385, 70_000] {
            let bytes = SecureRandom.bytes(size)
            let item = try (try t.vault).items.importFile(at: t.file("f\(size).jpg", bytes))
            // Random bytes named .jpg: the type comes from the content, never from the name.
            #expect(item.size == UInt64(size) && item.name == "f\(size).jpg" && item.type == "application/octet-stream")
            #expect(!item.thumbnail && item.width == nil)
            #expect(try t.exported(item.id) == bytes)
        }
        let page = try (try t.vault).items.list(limit: 4)
        #expect(page.items.count == 4 && page.next == page.items.last?.id)
        let rest = try (try t.vault).items.list(limit: 4, after: page.next)
        #expect(rest.items.count == 2 && rest.next == nil)
        #expect(Set((page.items + rest.items).map(\.id)).count == 6)
    }

    @Test("the index runs with the seed's pragmas on the program's own connection")
    func pragmas() throws {
        let t = try TestVault()
        #expect(try (try t.vault).indexPragma("journal_mode") == "wal")
        #expect(try (try t.vault).indexPragma("synchronous") == "2")   // FULL
        #expect(try (try t.vault).indexPragma("secure_delete") == "1")
        #expect(try (try t.vault).indexPragma("auto_vacuum") == "1")   // FULL
        #expect(try (try t.vault).indexPragma("foreign_keys") == "1")
        #expect(throws: Nu11Error.self) { _ = try (try t.vault).indexPragma("x; DROP TABLE item") }
    }

    @Test("a tampered item is named; every other item still exports")
    func tamper() throws {
        let t = try TestVault()
        let a = try (try t.vault).items.importFile(at: t.file("a", SecureRandom.bytes(40_000)))
        let bBytes = SecureRandom.bytes(100)
        let b = try (try t.vault).items.importFile(at: t.file("b", bBytes))
        let path = t.location.path(id: a.id, kind: .file, domain: .vault, album: nil)
        var data = try ProtectedFiles.read(path)
        data[24 + 56 + 20_000] ^= 1
        try ProtectedFiles.writeAtomically(data, to: path)
        let dest = t.root + "/out"
        #expect { _ = try (try t.vault).items.export(a.ref, toFile: dest) } throws: { error in
            let e = error as? Nu11Error
            return e?.code == .corrupted && e?.message.contains(a.id.hex) == true
        }
        #expect(!FileManager.default.fileExists(atPath: dest), "no partial export")
        #expect(try t.exported(b.id) == bBytes)
        // Swapping two files is detected too.
        let pathB = t.location.path(id: b.id, kind: .file, domain: .vault, album: nil)
        try ProtectedFiles.writeAtomically(try ProtectedFiles.read(pathB), to: path)
        #expect { _ = try t.exported(a.id) } throws: { ($0 as? Nu11Error)?.code == .corrupted }
    }

    @Test("albums: create, rename, move (file renamed, ciphertext unchanged), delete both ways")
    func albums() throws {
        let t = try TestVault()
        try (try t.vault).albums.createAlbum("Trips")
        #expect { try (try t.vault).albums.createAlbum("Trips") } throws: { ($0 as? Nu11Error)?.code == .alreadyExists }
        #expect { try (try t.vault).albums.createAlbum(" bad") } throws: { ($0 as? Nu11Error)?.code == .invalidArgument }
        let bytes = SecureRandom.bytes(5000)
        let item = try (try t.vault).items.importFile(at: t.file("p.png", bytes), album: "Trips")
        #expect(item.album == "Trips")
        let id = item.id
        let albumID = try #require(item.albumID)
        let inAlbum = t.location.path(id: id, kind: .file, domain: .vault, album: albumID)
        let cipher = try ProtectedFiles.read(inAlbum)
        try (try t.vault).albums.moveItem(item.ref, toAlbum: nil)
        let inPhotos = t.location.path(id: id, kind: .file, domain: .vault, album: nil)
        #expect(try ProtectedFiles.read(inPhotos) == cipher)
        #expect(!FileManager.default.fileExists(atPath: inAlbum))
        try (try t.vault).albums.moveItem(item.ref, toAlbum: "Trips")
        try (try t.vault).albums.renameAlbum("Trips", to: "Voyages")
        #expect(try (try t.vault).albums.list().map(\.name) == ["Voyages"])
        #expect(try (try t.vault).albums.list().first?.items == 1)
        #expect(try (try t.vault).items.list(album: "Voyages").items.map(\.id) == [item.id])
        #expect { _ = try (try t.vault).items.list(album: "Trips") } throws: { ($0 as? Nu11Error)?.code == .notFound }
        try (try t.vault).albums.deleteAlbum("Voyages", items: .moveItemsToPhotos)
        #expect(try t.exported(item.id) == bytes)
        #expect(try (try t.vault).items.list(photosOnly: true).items.count == 1)
        try (try t.vault).albums.createAlbum("Gone")
        let doomed = try (try t.vault).items.importFile(at: t.file("d", [1, 2, 3]), album: "Gone")
        try (try t.vault).albums.deleteAlbum("Gone", items: .deleteItems)
        #expect { _ = try t.exported(doomed.id) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        #expect(try (try t.vault).albums.list().isEmpty)
    }

    @Test("delete crypto-shreds: key record, file and index row are gone")
    func delete() throws {
        let t = try TestVault()
        let item = try (try t.vault).items.importFile(at: t.file("x", [9, 9]))
        let id = item.id
        try (try t.vault).items.delete([item.ref])
        // Its pack (read as bytes) no longer names it in any slot.
        let pack = FileManager.default.contents(atPath: t.root + "/ks/keys/\(KeyPack.shard(of: item.id)).n11p").map(Array.init) ?? []
        let idBytes = item.id.bytes
        #expect(!stride(from: 8, to: max(8, pack.count - 83), by: 84).contains { pack[($0 + 8)..<($0 + 24)].elementsEqual(idBytes) })
        #expect(!FileManager.default.fileExists(atPath: t.location.path(id: id, kind: .file, domain: .vault, album: nil)))
        #expect { _ = try t.exported(item.id) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        #expect { try (try t.vault).items.delete([item.ref]) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        #expect { try (try t.vault).items.delete([ItemRef("zz")]) } throws: { ($0 as? Nu11Error)?.code == .invalidArgument }
    }

    @Test("bad input: no vault, wrong PIN, special files, folders without recursion")
    func badInput() throws {
        let t = try TestVault()
        let nowhere = VaultLocation(vaultRoot: t.root + "/none", keyStoreRoot: t.root + "/none-ks")
        #expect { _ = try LockedVault(nowhere).unlock(pin: secret("x")) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        #expect { _ = try (try t.vault).items.importFile(at: "/dev/null") } throws: { ($0 as? Nu11Error)?.code == .invalidArgument }
        #expect { _ = try (try t.vault).items.importFile(at: t.root) } throws: { ($0 as? Nu11Error)?.code == .invalidArgument }
        #expect { _ = try (try t.vault).items.importFile(at: t.root + "/missing") } throws: { ($0 as? Nu11Error)?.code == .notFound }
        #expect { _ = try ImportSource.expand([t.root], recursive: false) } throws: {
            ($0 as? Nu11Error)?.code == .invalidArgument
        }
        #expect { _ = try (try t.vault).items.importFile(at: t.file("a", [1]), album: "Nope") } throws: {
            ($0 as? Nu11Error)?.code == .notFound
        }
        #expect { try LockedVault.create(at: t.location, pin: secret("1234"), parameters: .floor) } throws: {
            ($0 as? Nu11Error)?.code == .alreadyExists
        }
        let nested = VaultLocation(vaultRoot: t.root + "/v2", keyStoreRoot: t.root + "/v2/ks")
        #expect { try LockedVault.create(at: nested, pin: secret("1234"), parameters: .floor) } throws: {
            ($0 as? Nu11Error)?.code == .invalidArgument
        }
        t.close()
        #expect { _ = try LockedVault(t.location).unlock(pin: secret("wrong")) } throws: { ($0 as? Nu11Error) == .wrongPIN }
        #expect(try LockedVault(t.location).unlock(pin: secret("test-pin")).items.list().items.isEmpty, "nothing was half-imported")
    }

    @Test("changing the PIN re-wraps keys only; content files are untouched")
    func changePIN() throws {
        let t = try TestVault(pin: "old-pin")
        let item = try (try t.vault).items.importFile(at: t.file("a", [4, 5, 6]))
        let path = t.location.path(id: item.id, kind: .file, domain: .vault, album: nil)
        let before = try ProtectedFiles.read(path)
        try (try t.vault).profiles.changePIN(new: secret("new-pin"))
        #expect(try ProtectedFiles.read(path) == before)
        t.close()
        #expect { _ = try LockedVault(t.location).unlock(pin: secret("old-pin")) } throws: { ($0 as? Nu11Error) == .wrongPIN }
    }
}

@Suite("lazy reads and previews")
struct LazyReadTests {
    @Test("random-access reads: first, middle and last chunk, straddling ranges, past the end")
    func ranges() throws {
        let t = try TestVault()
        let c = 16384
        let bytes = (0..<(5 * c + 321)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        let item = try (try t.vault).items.importFile(at: t.file("big.jpg", bytes))
        let v = try t.vault
        for (offset, count) in [(0, 10), (0, c), (2 * c + 5, 100), (c - 10, 20), (3 * c - 1, c + 2),
                                (bytes.count - 7, 7), (bytes.count - 7, 1000), (bytes.count, 5)] {
            #expect(try v.items.read(item.ref, offset: UInt64(offset), count: count)
                    == Array(bytes[offset..<min(bytes.count, offset + count)]), "\(offset)+\(count)")
        }
        #expect(throws: Nu11Error.self) { _ = try v.items.read(item.ref, offset: UInt64(bytes.count + 1), count: 1) }
        // Previews come from the in-memory cache the second time, bounded by the setting.
        #expect(try v.items.preview(item.ref, bytes: 1000) == Array(bytes[0..<1000]))
        #expect(v.previewCache.count == 1 && v.previewCache.totalBytes == 1000)
        #expect(v.previewCache.capacity == 64 << 20)
        // Damage in a chunk a read does not touch does not matter; damage in one it touches does.
        let path = t.location.path(id: item.id, kind: .file, domain: .vault, album: nil)
        var file = try ProtectedFiles.read(path, limit: 1 << 24)
        file[24 + 56 + 3 * (c + 16) + 100] ^= 1
        try ProtectedFiles.writeAtomically(file, to: path)
        #expect(try v.items.read(item.ref, offset: 0, count: 100) == Array(bytes[0..<100]))
        #expect { _ = try v.items.read(item.ref, offset: UInt64(3 * c + 50), count: 10) } throws: {
            ($0 as? Nu11Error)?.code == .corrupted
        }
    }
}
