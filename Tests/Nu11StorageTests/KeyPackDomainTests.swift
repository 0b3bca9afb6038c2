// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
@testable import Nu11Storage
import Testing

/// Issue 58: an item keeps its ID when it moves between domains (`fade set`), so for the
/// move's window a pack holds one record of the item per domain (FORMAT.md §4.3).
extension KeyPackTests {
    @Test("one record per item and domain: a Fade record beside the Vault one; each read by its domain; destroying one domain's keeps the other")
    func recordPerDomain() throws {
        let t = try makeStore()
        defer { try? FileManager.default.removeItem(atPath: t.root) }
        let id = ItemID()
        let permanent = try record(t.keys, id: id, domain: .vault)
        let fading = try record(t.keys, id: id, domain: .fade)
        try t.store.writeItemKeys([permanent], durable: true)
        try t.store.writeItemKeys([fading], durable: true)
        // Both there (before issue 58 the second replaced the first in its slot).
        #expect(try t.store.itemKeyRecords().filter { $0.itemID == id }.count == 2)
        #expect(try t.store.itemKeyRecord(id, domain: .vault) == permanent)
        #expect(try t.store.itemKeyRecord(id, domain: .fade) == fading)
        #expect(t.store.hasItemKey(id, domain: .vault) && t.store.hasItemKey(id, domain: .fade))
        #expect(!t.store.hasItemKey(id, domain: .backup))
        // A record of the same item and domain replaces its own slot, not the other's.
        let again = try record(t.keys, id: id, domain: .fade)
        try t.store.writeItemKeys([again], durable: true)
        #expect(try t.store.itemKeyRecords().filter { $0.itemID == id } .count == 2)
        #expect(try t.store.itemKeyRecord(id, domain: .fade) == again)
        // The witness (a hard link made before) sees the Vault record zeroed, the Fade one kept.
        let pack = t.root + "/ks/keys/" + KeyPack.shard(of: id) + ".n11p"
        #expect(link(pack, t.root + "/witness") == 0)
        try t.store.destroyItemKeys([id], domain: .vault)
        let witness = [UInt8](try Data(contentsOf: URL(fileURLWithPath: t.root + "/witness")))
        #expect(!contains(witness, permanent.encoded()) && contains(witness, again.encoded()))
        #expect(try t.store.itemKeyRecord(id, domain: .vault) == again, "the other domain's record is what a mismatched read finds")
        #expect(!t.store.hasItemKey(id, domain: .vault) && t.store.hasItemKey(id, domain: .fade))
        // Destroying without a domain takes every record of the item.
        try t.store.writeItemKeys([permanent], durable: true)
        try t.store.destroyItemKeys([id])
        #expect(!t.store.hasItemKey(id))
        let after = [UInt8](try Data(contentsOf: URL(fileURLWithPath: t.root + "/witness")))
        #expect(!contains(after, permanent.encoded()) && !contains(after, again.encoded()))
    }

    @Test("a domain's destruction also frees a torn slot naming the item, never a sound record of another domain")
    func tornSlotOfMove() throws {
        let t = try makeStore()
        defer { try? FileManager.default.removeItem(atPath: t.root) }
        let id = ItemID()
        let permanent = try record(t.keys, id: id, domain: .vault)
        try t.store.writeItemKeys([permanent], durable: true)
        // A second record cut short after its ID field (a crash during the move's write).
        let pack = t.root + "/ks/keys/" + KeyPack.shard(of: id) + ".n11p"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: pack)))
        var torn = try record(t.keys, id: id, domain: .fade).encoded()
        for i in 30..<torn.count { torn[i] = 0 }
        torn[4] = 9  // not a record: damaged
        bytes += torn
        try Data(bytes).write(to: URL(fileURLWithPath: pack))
        #expect(try t.store.damagedKeySlots().count == 1)
        try t.store.destroyItemKeys([id], domain: .fade)
        #expect(try t.store.damagedKeySlots().isEmpty)
        #expect(try t.store.itemKeyRecord(id, domain: .vault) == permanent)
    }
}
