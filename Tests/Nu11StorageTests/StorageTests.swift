// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Testing
@testable import Nu11Storage

func scratchDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("n11s-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func mode(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
}

func pin(_ s: String) -> SecretBytes {
    var b = Array(s.utf8)
    return SecretBytes(consuming: &b)
}

@Suite("protected files", .serialized)
struct ProtectedFileTests {
    @Test("0600 files and 0700 folders even under umask 000, atomic replace")
    func permissions() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let old = umask(0)
        defer { umask(old) }
        let dir = root + "/a/b/c"
        try ProtectedFiles.makeDirectory(dir)
        #expect(mode(dir) == 0o700)
        #expect(mode(root + "/a") == 0o700)
        try ProtectedFiles.writeAtomically([1, 2, 3], to: dir + "/f")
        #expect(mode(dir + "/f") == 0o600)
        try ProtectedFiles.writeAtomically([4, 5], to: dir + "/f")
        #expect(try ProtectedFiles.read(dir + "/f") == [4, 5])
        #expect(try ProtectedFiles.list(dir) == ["f"], "no temp file left behind")
    }

    @Test("an aborted write leaves the destination untouched and no temp file")
    func abort() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try ProtectedFiles.writeAtomically([7], to: root + "/f")
        let writer = try AtomicFileWriter(destination: root + "/f")
        var sink = writer.sink
        try sink.write([9, 9, 9])
        writer.abort()
        #expect(try ProtectedFiles.read(root + "/f") == [7])
        #expect(try ProtectedFiles.list(root) == ["f"])
    }

    @Test("a write told not to replace refuses a destination that appeared after it began, and leaves it as it was")
    func noReplace() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let writer = try AtomicFileWriter(destination: root + "/f")
        writer.replaceExisting = false
        var sink = writer.sink
        try sink.write([9, 9, 9])
        try ProtectedFiles.writeAtomically([7], to: root + "/f")  // someone else's file, meanwhile
        #expect { try writer.commit() } throws: { ($0 as? Nu11Error)?.code == .alreadyExists }
        #expect(try ProtectedFiles.read(root + "/f") == [7])
        #expect(try ProtectedFiles.list(root) == ["f"], "the temp file was left")
        // Where nothing is in the way, it writes as usual.
        let fresh = try AtomicFileWriter(destination: root + "/g")
        fresh.replaceExisting = false
        var freshSink = fresh.sink
        try freshSink.write([1])
        try fresh.commit()
        #expect(try ProtectedFiles.read(root + "/g") == [1])
    }

    @Test("overwrite-and-remove destroys the file; reading errors are clear")
    func secureRemove() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try ProtectedFiles.writeAtomically(Array(repeating: 0x41, count: 100_000), to: root + "/f")
        // A second hard link sees the same blocks: after an overwrite they hold no 0x41 run,
        // which a plain unlink would leave intact.
        #expect(link(root + "/f", root + "/witness") == 0)
        try ProtectedFiles.overwriteAndRemove(root + "/f")
        #expect(!ProtectedFiles.exists(root + "/f"))
        let witness = try ProtectedFiles.read(root + "/witness", limit: 1 << 20)
        #expect(witness.count == 100_000 && witness.filter { $0 == 0x41 }.count < 2_000, "the content was not overwritten")
        #expect { _ = try ProtectedFiles.read(root + "/missing") } throws: { ($0 as? Nu11Error)?.code == .notFound }
        try ProtectedFiles.remove(root + "/missing")
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: "/etc/hostname")
        #expect(throws: Nu11Error.self) { _ = try ProtectedFiles.read(root + "/link") }
    }
}

@Suite("key store")
struct KeyStoreTests {
    @Test("create, unlock, wrong PIN, change PIN without touching item keys")
    func lifecycle() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let ksPath = root + "/ks"
        let (store, unlocked) = try KeyStore.create(root: ksPath, pin: pin("2468"), parameters: .floor)
        #expect(mode(ksPath) == 0o700 && mode(ksPath + "/master.n11k") == 0o600 && mode(ksPath + "/device.n11d") == 0o600)
        #expect { _ = try KeyStore.create(root: ksPath, pin: pin("x1"), parameters: .floor) } throws: {
            ($0 as? Nu11Error)?.code == .alreadyExists
        }
        // An item key, wrapped by the vault key.
        let id = ItemID()
        let itemKey = SecretBytes(randomCount: 32)
        try store.storeItemKey(ItemKeyRecord.seal(itemKey: itemKey, domain: .vault, kind: .file, itemID: id,
                                                  domainKey: unlocked.keys.main))
        let packPath = ksPath + "/keys/\(KeyPack.shard(of: id)).n11p"
        let recordBefore = try ProtectedFiles.read(packPath)
        #expect { _ = try store.unlock(pin: pin("2469")) } throws: { ($0 as? Nu11Error) == .wrongPIN }
        try store.changePIN(current: pin("2468"), new: pin("new passphrase"))
        #expect { _ = try store.unlock(pin: pin("2468")) } throws: { ($0 as? Nu11Error) == .wrongPIN }
        let again = try store.unlock(pin: pin("new passphrase"))
        #expect(again.keys.main.constantTimeEquals(unlocked.keys.main))
        #expect(try ProtectedFiles.read(packPath) == recordBefore, "item keys are not re-wrapped")
        #expect(try store.itemKeyRecord(id).open(domainKey: again.keys.main).constantTimeEquals(itemKey))
        // Crypto-shredding.
        try store.destroyItemKey(id)
        #expect { _ = try store.itemKeyRecord(id) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        #expect(try store.itemKeyIDs().isEmpty)
    }

    @Test("a key store moved without its device key does not open; a damaged master looks like a wrong PIN")
    func deviceBinding() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (store, _) = try KeyStore.create(root: root + "/ks", pin: pin("1111"), parameters: .floor)
        var master = try ProtectedFiles.read(root + "/ks/master.n11k")
        master[40] ^= 1
        try ProtectedFiles.writeAtomically(master, to: root + "/ks/master.n11k")
        #expect { _ = try store.unlock(pin: pin("1111")) } throws: { ($0 as? Nu11Error) == .wrongPIN }
        master[40] ^= 1
        try ProtectedFiles.writeAtomically(master, to: root + "/ks/master.n11k")
        _ = try store.unlock(pin: pin("1111"))
        try ProtectedFiles.writeAtomically(DeviceKeyRecord.encode(SecretBytes(randomCount: 32)), to: root + "/ks/device.n11d")
        #expect { _ = try store.unlock(pin: pin("1111")) } throws: { ($0 as? Nu11Error) == .wrongPIN }
        try ProtectedFiles.remove(root + "/ks/device.n11d")
        #expect { _ = try store.unlock(pin: pin("1111")) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        #expect { _ = try KeyStore(root: root + "/none").unlock(pin: pin("1")) } throws: {
            ($0 as? Nu11Error)?.code == .notFound
        }
    }
}

@Suite("key store state and settings")
struct KeyStoreStateTests {
    @Test("an older settings file is migrated on load and saved at the current version")
    func settingsMigration() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (store, _) = try KeyStore.create(root: root + "/ks", pin: pin("1234"), parameters: .floor)
        try ProtectedFiles.writeAtomically(
            Settings.sealLegacy(version: 1, values: ["secure_delete": "true"], deviceKey: store.deviceKey()),
            to: root + "/ks/settings.n11c")
        let (settings, damaged) = try store.loadSettings()
        #expect(!damaged && settings.deletionMode == .secure)
        let saved = try ProtectedFiles.read(root + "/ks/settings.n11c")
        #expect(try Settings.open(saved, deviceKey: store.deviceKey()).migrated == false, "saved at the current version")
        // A damaged file: defaults, flagged.
        var bad = saved
        bad[bad.count - 1] ^= 1
        try ProtectedFiles.writeAtomically(bad, to: root + "/ks/settings.n11c")
        #expect(try store.loadSettings().damaged)
    }

    @Test("device state: missing and damaged are told apart from loaded")
    func state() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (store, _) = try KeyStore.create(root: root + "/ks", pin: pin("1234"), parameters: .floor)
        guard case .missing = try store.loadState() else { Issue.record("expected missing"); return }
        try store.saveState(DeviceState(now: 5))
        guard case .loaded(let s) = try store.loadState(), s.latestSeen == 5 else { Issue.record("expected loaded"); return }
        var bytes = try ProtectedFiles.read(root + "/ks/state.n11s")
        bytes[8] ^= 1
        try ProtectedFiles.writeAtomically(bytes, to: root + "/ks/state.n11s")
        guard case .damaged = try store.loadState() else { Issue.record("expected damaged"); return }
        #expect(mode(root + "/ks/state.n11s") == 0o600)
    }
}

@Suite("preview cache")
struct PreviewCacheTests {
    @Test("the total never exceeds the bound; least recently used goes first")
    func bound() {
        let cache = PreviewCache<Int>(capacityBytes: 1000)
        for i in 0..<50 {
            cache.set(i, [UInt8](repeating: UInt8(i), count: 90 + i))
            #expect(cache.totalBytes <= 1000)
        }
        #expect(cache.get(49) != nil && cache.get(0) == nil)
        cache.removeAll()
        cache.set(1, [UInt8](repeating: 1, count: 400))
        cache.set(2, [UInt8](repeating: 2, count: 400))
        _ = cache.get(1)                              // 1 is now the most recent
        cache.set(3, [UInt8](repeating: 3, count: 400))
        #expect(cache.get(2) == nil, "the least recently used entry was evicted")
        #expect(cache.get(1) == [UInt8](repeating: 1, count: 400) && cache.get(3) != nil)
        cache.set(4, [UInt8](repeating: 4, count: 1001))
        #expect(cache.get(4) == nil, "a value larger than the cache is not stored")
        #expect(cache.totalBytes == 800 && cache.count == 2)
        cache.set(1, [UInt8](repeating: 9, count: 10))
        #expect(cache.totalBytes == 410, "replacing a value accounts for the old one")
        cache.remove(3)
        #expect(cache.totalBytes == 10 && cache.count == 1)
        let zero = PreviewCache<Int>(capacityBytes: 0)
        zero.set(1, [1])
        #expect(zero.count == 0)
    }
}

@Suite("forward records")
struct ForwardChainTests {
    @Test("removing the chain that leads to the current keys removes every link of it, the intermediate ones too, and keeps other chains")
    func wholeChain() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (store, _) = try KeyStore.create(root: root + "/ks", pin: pin("1111"), parameters: .floor)
        let a = DomainKeys.generate(role: .backup, created: 1)
        let b = a.rotated(created: 2), c = b.rotated(created: 3), d = c.rotated(created: 4)
        for (old, new) in [(a, b), (b, c), (c, d)] { try store.writeForward(from: old, to: new) }
        let other = DomainKeys.generate(role: .primary, created: 1)
        try store.writeForward(from: other, to: other.rotated(created: 2))
        #expect(try ProtectedFiles.list(root + "/ks/forward").count == 4)
        try store.removeForwards(leadingTo: d)
        #expect(try store.forward(from: a) == nil && store.forward(from: b) == nil && store.forward(from: c) == nil,
                "a link of the chain A→B→C→D stayed")
        #expect(try store.forward(from: other) != nil, "another chain's record was removed")
        #expect(try ProtectedFiles.list(root + "/ks/forward").count == 1)
    }

    /// Issue 57: whatever order the folder lists the links in — a link listed before its
    /// successor included, which a single pass over the listing would leave behind — the
    /// whole chain goes. The links are written in every order (tmpfs lists newest first; other
    /// file systems by a hash of the names, new keys each time), so some listing puts a
    /// predecessor first.
    @Test("every order of writing (and listing) a chain's links: all removed, never a link left before its successor")
    func everyListingOrder() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
        var predecessorListedFirst = 0
        for (n, order) in orders.enumerated() {
            let (store, _) = try KeyStore.create(root: root + "/ks\(n)", pin: pin("1111"), parameters: .floor)
            var keys = [DomainKeys.generate(role: .backup, created: 1)]
            for created in 2...4 { keys.append(keys[created - 2].rotated(created: UInt64(created))) }
            for i in order { try store.writeForward(from: keys[i], to: keys[i + 1]) }
            let listed = try ProtectedFiles.list(root + "/ks\(n)/forward").map { String($0.dropLast(5)) }
            let position = { (k: DomainKeys) in listed.firstIndex(of: ForwardRecord.tag(of: k)) ?? -1 }
            if (0..<2).contains(where: { position(keys[$0]) < position(keys[$0 + 1]) }) { predecessorListedFirst += 1 }
            try store.removeForwards(leadingTo: keys[3])
            let left = try ProtectedFiles.list(root + "/ks\(n)/forward")
            #expect(left.isEmpty, "written in the order \(order), listed as \(listed): \(left.count) link(s) left")
        }
        #expect(predecessorListedFirst > 0, "no listing put a predecessor first: the test proves nothing")
    }
}

@Suite("the preview cache")
struct PreviewCacheZeroingTests {
    @Test("values evicted for space, replaced, removed or dropped with the cache are zeroed")
    func zeroed() {
        let cache = PreviewCache<Int>(capacityBytes: 4096)
        var seen: [[UInt8]] = []
        cache.zeroedWitness = { seen.append($0) }
        for key in 0..<6 { cache.set(key, [UInt8](repeating: UInt8(key + 1), count: 1024)) }  // evicts 0 and 1
        cache.set(5, [UInt8](repeating: 9, count: 512))    // replaces 5
        cache.remove(4)
        cache.removeAll()
        #expect(seen.count == 7, "\(seen.count) values left the cache")
        #expect(seen.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0 == 0 } }, "a value left the cache without being zeroed")
    }
}
