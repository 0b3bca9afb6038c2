// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
@testable import Nu11Storage
import Testing

/// Key packs (docs/FORMAT.md §4.3): the format's negative cases, and crypto-shredding checked
/// as someone with the disk would — through a hard link to the pack made beforehand (the
/// witness), which sees the same inode whatever nu11vlt does with the name.
@Suite("key packs")
struct KeyPackTests {
    struct Store {
        let root: String
        let store: KeyStore
        let keys: DomainKeys
    }

    func makeStore() throws -> Store {
        let root = try scratchDirectory()
        let (store, unlocked) = try KeyStore.create(root: root + "/ks", pin: pin("2468"), parameters: .floor)
        return Store(root: root, store: store, keys: unlocked.keys)
    }

    func record(_ keys: DomainKeys, id: ItemID = ItemID(), domain: Domain = .vault) throws -> ItemKeyRecord {
        try ItemKeyRecord.seal(itemKey: SecretBytes(randomCount: 32), domain: domain, kind: .file, itemID: id,
                               domainKey: keys.key(for: domain))
    }

    func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test("the format: header, free and damaged slots, a newer version refused")
    func format() throws {
        let keys = DomainKeys.generate(role: .primary)
        let a = try record(keys)
        #expect(try KeyPack.slots([], name: "x").isEmpty)
        #expect(try KeyPack.slots(KeyPack.header, name: "x").isEmpty)
        let pack = KeyPack.encode([a]) + KeyPack.freeSlot + [UInt8](repeating: 7, count: 84) + [1, 2, 3]
        #expect(try KeyPack.slots(pack, name: "x") == [.record(a), .free, .damaged, .damaged])
        #expect { _ = try KeyPack.slots(Array("N11Q".utf8) + [1, 0, 0, 0], name: "x") } throws: { ($0 as? Nu11Error)?.code == .corrupted }
        #expect { _ = try KeyPack.slots(Array("N11P".utf8) + [2, 0, 0, 0], name: "x") } throws: { ($0 as? Nu11Error)?.code == .unsupportedVersion }
        #expect { _ = try KeyPack.slots([0x4e, 0x31], name: "x") } throws: { ($0 as? Nu11Error)?.code == .corrupted }
        // A slot whose record does not parse (a bad domain byte) is damaged, never a record.
        var bad = a.encoded()
        bad[5] = 0xee
        #expect(try KeyPack.slots(KeyPack.header + bad, name: "x") == [.damaged])
    }

    @Test("records land in 256 packs by their ID's first byte; a deleted slot is reused; lookups find each")
    func writeReadDestroy() throws {
        let t = try makeStore()
        defer { try? FileManager.default.removeItem(atPath: t.root) }
        let records = try (0..<600).map { _ in try record(t.keys) }
        try t.store.writeItemKeys(records, durable: true)
        let packs = try FileManager.default.contentsOfDirectory(atPath: t.root + "/ks/keys")
        #expect(packs.count <= 256 && packs.allSatisfy { $0.count == 7 && $0.hasSuffix(".n11p") })
        #expect(mode(t.root + "/ks/keys") == 0o700 && packs.allSatisfy { mode(t.root + "/ks/keys/" + $0) == 0o600 })
        #expect(Set(try t.store.itemKeyIDs()) == Set(records.map(\.itemID)))
        for r in records.prefix(20) { #expect(try t.store.itemKeyRecord(r.itemID) == r) }
        let gone = records[3]
        try t.store.destroyItemKey(gone.itemID)
        #expect(!t.store.hasItemKey(gone.itemID))
        #expect { _ = try t.store.itemKeyRecord(gone.itemID) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        // The next record of that shard takes the freed slot: the pack does not grow.
        let path = t.store.packPath(gone.itemID)
        let size = try ProtectedFiles.read(path, limit: 1 << 20).count
        var sameShard = ItemID()
        while KeyPack.shard(of: sameShard) != KeyPack.shard(of: gone.itemID) { sameShard = ItemID() }
        let next = try record(t.keys, id: sameShard)
        try t.store.storeItemKey(next)
        #expect(try ProtectedFiles.read(path, limit: 1 << 20).count == size)
        #expect(try t.store.itemKeyRecord(sameShard) == next)
        // Writing a record again replaces it in its slot (no second copy).
        let replaced = try record(t.keys, id: sameShard)
        try t.store.storeItemKey(replaced)
        #expect(try t.store.itemKeyRecord(sameShard) == replaced)
        #expect(!contains(try ProtectedFiles.read(path, limit: 1 << 20), next.wrapped))
    }

    @Test("a commit group's records in one pack: each in its own slot, one written twice replaced in place, freed slots reused")
    func oneGroupOnePack() throws {
        let t = try makeStore()
        defer { try? FileManager.default.removeItem(atPath: t.root) }
        let records = try (0..<300).map { _ in try record(t.keys, id: ItemID(firstByte: 0xa7)) }
        #expect(Set(records.map { KeyPack.shard(of: $0.itemID) }) == ["a7"])
        // The same item twice in one write (its record replaced): one slot, the second record.
        let again = try record(t.keys, id: records[5].itemID)
        try t.store.writeItemKeys(records + [again], durable: true)
        let path = t.store.packPath("a7")
        let size = try ProtectedFiles.read(path, limit: 1 << 20).count
        #expect(size == KeyPack.headerCount + 300 * KeyPack.slotCount)
        #expect(try t.store.itemKeyRecord(records[5].itemID) == again)
        #expect(!contains(try ProtectedFiles.read(path, limit: 1 << 20), records[5].wrapped))
        for r in records where r.itemID != again.itemID { #expect(try t.store.itemKeyRecord(r.itemID) == r) }
        // Ten destroyed, ten new in one write: the freed slots, the pack no larger.
        try t.store.destroyItemKeys(records.suffix(10).map(\.itemID))
        let fresh = try (0..<10).map { _ in try record(t.keys, id: ItemID(firstByte: 0xa7)) }
        try t.store.writeItemKeys(fresh, durable: true)
        #expect(try ProtectedFiles.read(path, limit: 1 << 20).count == size)
        #expect(Set(try t.store.itemKeyIDs()) == Set(records.prefix(290).map(\.itemID) + fresh.map(\.itemID)))
    }

    @Test("deletion zeroes the record in place: a hard link made before sees no byte of it")
    func witnessOfDeletion() throws {
        let t = try makeStore()
        defer { try? FileManager.default.removeItem(atPath: t.root) }
        let records = try (0..<300).map { _ in try record(t.keys) }
        try t.store.writeItemKeys(records, durable: true)
        let victim = records[17]
        let witness = t.root + "/witness"
        #expect(link(t.store.packPath(victim.itemID), witness) == 0)
        #expect(contains(try ProtectedFiles.read(witness, limit: 1 << 20), victim.wrapped))
        // Records added to the same pack after the link still land in the same inode.
        var more = ItemID()
        while KeyPack.shard(of: more) != KeyPack.shard(of: victim.itemID) { more = ItemID() }
        let later = try record(t.keys, id: more)
        try t.store.storeItemKey(later)
        try t.store.destroyItemKeys([victim.itemID, later.itemID])
        let seen = try ProtectedFiles.read(witness, limit: 1 << 20)
        #expect(!contains(seen, victim.wrapped) && !contains(seen, victim.itemID.bytes), "the deleted record survives in its pack")
        #expect(!contains(seen, later.wrapped), "a record added after the link survives its deletion")
        for r in records where r.itemID != victim.itemID { #expect(t.store.hasItemKey(r.itemID)) }
    }

    @Test("a rotation rewrites each pack once, and zeroes the pack it replaced (the witness of the old file)")
    func rotation() throws {
        let t = try makeStore()
        defer { try? FileManager.default.removeItem(atPath: t.root) }
        let records = try (0..<2_000).map { _ in try record(t.keys) } + [try record(t.keys, domain: .fade)]
        try t.store.writeItemKeys(records, durable: false)
        try t.store.destroyItemKey(records[5].itemID)
        let witness = t.root + "/witness"
        #expect(link(t.store.packPath(records[0].itemID), witness) == 0)
        let new = t.keys.rotated(created: 1)
        var steps = 0
        let count = try t.store.rewrapItemKeys(domains: [.vault], from: [t.keys], to: new) { _, _ in steps += 1 }
        #expect(count == records.count - 2, "the fade record and the deleted one are not re-wrapped")
        #expect(steps >= 2)
        let old = try ProtectedFiles.read(witness, limit: 1 << 20)
        #expect(!old.isEmpty && old.allSatisfy { $0 == 0 }, "the replaced pack still holds the previous wraps")
        for r in records.dropFirst(6) where r.domain == .vault {
            #expect(try t.store.itemKeyRecord(r.itemID).opens(under: new.main))
        }
        #expect(try t.store.itemKeyRecord(records.last?.itemID ?? ItemID()).opens(under: t.keys.key(for: .fade)))
        #expect(!t.store.hasItemKey(records[5].itemID))
        // Idempotent: run again (a resumed rotation), nothing left to re-wrap.
        #expect(try t.store.rewrapItemKeys(domains: [.vault], from: [t.keys], to: new) == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: t.root + "/ks/keys").allSatisfy { !$0.hasPrefix(".n11tmp") })
    }

    @Test("loose records (the layout before packs) are adopted, crash-safe: again after a cut, strays left with a reason")
    func adoption() throws {
        let t = try makeStore()
        defer { try? FileManager.default.removeItem(atPath: t.root) }
        let items = t.root + "/ks/items"
        try ProtectedFiles.makeDirectory(items)
        let records = try (0..<40).map { _ in try record(t.keys) }
        for r in records { try ProtectedFiles.writeAtomically(r.encoded(), to: items + "/\(r.itemID.hex).key") }
        // Misnamed, a symlink, and a temp file of an interrupted write.
        let misnamed = items + "/\(ItemID().hex).key"
        try ProtectedFiles.writeAtomically(try record(t.keys).encoded(), to: misnamed)
        #expect(symlink("/etc/hostname", items + "/\(ItemID().hex).key") == 0)
        FileManager.default.createFile(atPath: items + "/.n11tmp-0001", contents: Data([1]))
        // A cut after the packs were written but before any file went: the packs already hold
        // the first ten; adopting again must not duplicate them.
        try t.store.writeIntoPacks(Array(records.prefix(10)), durable: true)
        let (adopted, refused) = try t.store.adoptLooseItemKeys()
        #expect(adopted == 40 && refused.count == 2, "\(refused)")
        #expect(Set(try t.store.itemKeyIDs()) == Set(records.map(\.itemID)))
        for r in records {
            #expect(try t.store.itemKeyRecord(r.itemID) == r)
            #expect(!FileManager.default.fileExists(atPath: items + "/\(r.itemID.hex).key"))
            let pack = try KeyPackFile(t.store.packPath(r.itemID), exclusive: false)
            #expect(pack?.slots(naming: r.itemID).count == 1)
        }
        #expect(FileManager.default.fileExists(atPath: misnamed), "a stray was destroyed on a guess")
        // Once the strays are gone, the folder goes too.
        try FileManager.default.removeItem(atPath: misnamed)
        try FileManager.default.removeItem(atPath: items + "/" + (try FileManager.default.contentsOfDirectory(atPath: items).first { $0.hasSuffix(".key") } ?? ""))
        #expect(try t.store.adoptLooseItemKeys().adopted == 0)
        #expect(!FileManager.default.fileExists(atPath: items))
    }

    @Test("loose records not yet adopted are read where they are; a deletion shreds the file; a write adopts them first")
    func looseRecordsUntilAdopted() throws {
        let t = try makeStore()
        defer { try? FileManager.default.removeItem(atPath: t.root) }
        let items = t.root + "/ks/items"
        try ProtectedFiles.makeDirectory(items)
        let (kept, doomed, other) = (try record(t.keys), try record(t.keys), try record(t.keys))
        for r in [kept, doomed] { try ProtectedFiles.writeAtomically(r.encoded(), to: items + "/\(r.itemID.hex).key") }
        // A loose file that names another item than the one it holds is never read as it.
        let liar = ItemID()
        try ProtectedFiles.writeAtomically(other.encoded(), to: items + "/\(liar.hex).key")
        // As after an adoption that could not write: read in place.
        #expect(try t.store.itemKeyRecord(kept.itemID) == kept)
        #expect(Set(try t.store.itemKeyIDs()) == [kept.itemID, doomed.itemID])
        #expect { _ = try t.store.itemKeyRecord(liar) } throws: { ($0 as? Nu11Error)?.code == .corrupted }
        // A hard link made beforehand to the loose file: the deletion overwrites it in place.
        let witness = t.root + "/witness"
        #expect(link(items + "/\(doomed.itemID.hex).key", witness) == 0)
        try t.store.destroyItemKey(doomed.itemID)
        #expect(!FileManager.default.fileExists(atPath: items + "/\(doomed.itemID.hex).key"))
        #expect(!contains([UInt8](try Data(contentsOf: URL(fileURLWithPath: witness))), Array(doomed.encoded().suffix(48))), "the shredded loose record survives")
        #expect { _ = try t.store.itemKeyRecord(doomed.itemID) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        // A write adopts first, so a pack and a loose file never hold two versions of a record.
        try t.store.storeItemKey(other)
        #expect(!FileManager.default.fileExists(atPath: items + "/\(kept.itemID.hex).key"))
        #expect(try KeyPackFile(t.store.packPath(kept.itemID), exclusive: false)?.slots(naming: kept.itemID).count == 1)
        #expect(FileManager.default.fileExists(atPath: items + "/\(liar.hex).key"), "a stray was destroyed on a guess")
    }

    @Test("a torn slot is reported, set aside by the repair and freed for the next record")
    func damagedSlot() throws {
        let t = try makeStore()
        defer { try? FileManager.default.removeItem(atPath: t.root) }
        let a = try record(t.keys)
        try t.store.storeItemKey(a)
        let path = t.store.packPath(a.itemID)
        // A torn append: half a record after the first slot.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(try record(t.keys).encoded().prefix(40)))
        try handle.close()
        let damaged = try t.store.damagedKeySlots()
        #expect(damaged.count == 1 && damaged.first?.slot == 1)
        let aside = try t.store.quarantineDamagedSlot(pack: path, slot: 1)
        #expect(try ProtectedFiles.read(aside).count == 40)
        #expect(try t.store.damagedKeySlots().isEmpty)
        var sameShard = ItemID()
        while KeyPack.shard(of: sameShard) != KeyPack.shard(of: a.itemID) { sameShard = ItemID() }
        try t.store.storeItemKey(try record(t.keys, id: sameShard))
        #expect(try ProtectedFiles.read(path).count == 8 + 84 * 2, "the freed slot was not reused")
        #expect(try t.store.itemKeyRecord(a.itemID) == a && t.store.hasItemKey(sameShard))
    }
}
