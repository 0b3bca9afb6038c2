// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage
import Testing
@testable import Nu11Vault

@Suite("the core for a long-lived session: two states, one stretch per PIN, typed references")
struct CoreShapeTests {
    @Test("unlock stretches the PIN once; Skeleton arm/disarm stretch nothing more; a PIN change stretches only the new PIN")
    func oneStretchPerPIN() throws {
        let t = try TestVault()
        t.close()
        let runs = KDFRunCounter()
        try Argon2id.$runs.withValue(runs) {
            let vault = try LockedVault(t.location).unlock(pin: secret("test-pin"))
            #expect(runs.count == 1, "unlock")
            try vault.profiles.enableSkeleton(interval: 86400, secure: false)
            try vault.profiles.disableSkeleton()
            try vault.profiles.enableSkeleton(interval: 86400, secure: false)
            #expect(runs.count == 1, "Skeleton arm/disarm ran Argon2id again")
            try vault.profiles.changePIN(new: secret("new-pin-2"))
            #expect(runs.count == 2, "a PIN change stretches the new PIN only")
            try vault.profiles.disableSkeleton()  // after the change, with the new slot's key
            #expect(runs.count == 2)
            vault.lock()
        }
        #expect { _ = try LockedVault(t.location).unlock(pin: secret("test-pin")) } throws: { ($0 as? Nu11Error) == .wrongPIN }
        let again = try LockedVault(t.location).unlock(pin: secret("new-pin-2"))
        #expect(try KeyStore(root: t.location.keyStoreRoot).readMaster().skeletonArmed == false)
        #expect(again.isPrimary)
    }

    @Test("an unlock with the PIN in hand (the app's) runs the gate once; the prompting unlock runs it before the prompt and again under the lock")
    func oneGatePerUnlock() throws {
        let t = try TestVault()
        t.close()
        let runs = KDFRunCounter()
        try Gate.$runs.withValue(runs) {
            try LockedVault(t.location).unlock(pin: secret("test-pin")).lock()
            #expect(runs.count == 1, "unlock(pin:)")
            _ = try LockedVault(t.location).pinStatus()
            #expect(runs.count == 2, "the prompt's status")
            var prompted = 0
            try LockedVault(t.location).unlock(report: { _ in }, readPIN: { prompted += 1; return secret("test-pin") }).lock()
            #expect(runs.count == 4 && prompted == 1, "the prompting unlock: one gate before the prompt, one with the PIN")
        }
    }

    @Test("lock() zeroes the keys and empties the preview cache; every later call fails clearly")
    func lockZeroes() throws {
        let t = try TestVault()
        let vault = try t.vault
        let item = try vault.items.importFile(at: try t.file("a.jpg", Array(repeating: 7, count: 5000)))
        _ = try vault.items.preview(item.ref)
        #expect(vault.previewCache.count == 1)
        vault.lock()
        #expect(vault.isLocked && vault.previewCache.count == 0)
        #expect { _ = try vault.items.preview(item.ref) } throws: { ($0 as? Nu11Error)?.message.contains("locked") == true }
        #expect { try vault.profiles.enableSkeleton(interval: 60, secure: false) } throws: { ($0 as? Nu11Error)?.message.contains("locked") == true }
        // The lock is released: another handle opens at once.
        #expect(throws: Never.self) { _ = try LockedVault(t.location).unlock(pin: secret("test-pin")) }
    }

    @Test("a library caller cannot create a vault with a PIN under the minimum or a KDF cost under the floor")
    func policyInCore() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("n11p-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let location = VaultLocation(vaultRoot: root + "/v", keyStoreRoot: root + "/k")
        #expect { try LockedVault.create(at: location, pin: secret("1"), parameters: .floor) } throws: {
            ($0 as? Nu11Error)?.code == .invalidArgument
        }
        #expect { try LockedVault.create(at: location, pin: secret("long enough"), parameters: KDFParameters(iterations: 1, memoryKiB: 1024)) } throws: {
            ($0 as? Nu11Error)?.code == .invalidArgument
        }
        #expect(!LockedVault(location).isInitialized)
        let t = try TestVault()
        #expect { try (try t.vault).profiles.changePIN(new: secret("123")) } throws: { ($0 as? Nu11Error)?.code == .invalidArgument }
    }

    func item(_ vault: Vault, _ hex: String) throws -> ItemID {
        let id = try ItemID(hex: hex)
        _ = try vault.items.store(MemorySource([1, 2, 3]), name: "\(hex.prefix(6)).jpg", kind: .file, album: nil, fade: nil, id: id)
        return id
    }

    @Test("an ID prefix of 4+ digits resolves when unique; an ambiguous one lists the candidates; bad text is refused")
    func prefixes() throws {
        let t = try TestVault()
        let vault = try t.vault
        let a = try item(vault, "abcd0000000000000000000000000001")
        let b = try item(vault, "abcd0000000000000000000000000002")
        let c = try item(vault, "abce0000000000000000000000000003")
        #expect(try vault.items.item(ItemRef("abce")).id == c)
        #expect(try vault.items.item(ItemRef("ABCE0")).id == c, "either case")
        #expect(try vault.items.item(ItemRef(a.hex)).id == a)
        #expect { _ = try vault.items.item(ItemRef("abcd")) } throws: { error in
            guard let e = error as? Nu11Error else { return false }
            return e.code == .invalidArgument && e.message.contains("ambiguous") && e.message.contains(a.hex) && e.message.contains(b.hex)
        }
        #expect { _ = try vault.items.item(ItemRef("abcf")) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        for bad in ["abc", "abcg", "", String(repeating: "a", count: 33), "ab cd"] {
            #expect(throws: Nu11Error.self, "\(bad)") { _ = try ItemRef(bad) }
        }
        try vault.items.delete([ItemRef("abce")])
        #expect { _ = try vault.items.item(ItemRef(c)) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        // A prefix only counts visible items: a backup-domain twin would not make it ambiguous.
        try vault.items.delete([ItemRef(b)])
        #expect(try vault.items.item(ItemRef("abcd")).id == a)
    }
}

@Suite("the test clock drives every time policy, without sleep or faketime")
struct TimePolicyTests {
    @Test("a cached preview is never served after its item fades or is deleted, in a session that stays open")
    func previewCacheAndFade() throws {
        let t = try TestVault()
        t.close()
        let clock = TestClock()
        let vault = try LockedVault(t.location, clock: clock).unlock(pin: secret("test-pin"))
        let fading = try vault.items.importFile(at: try t.file("f.jpg", [1, 2, 3, 4]), fade: 60)
        let kept = try vault.items.importFile(at: try t.file("k.jpg", [5, 6]))
        #expect(try vault.items.preview(fading.ref) == [1, 2, 3, 4])
        #expect(try vault.items.preview(kept.ref) == [5, 6])
        #expect(vault.previewCache.count == 2)
        clock.pass(61)
        #expect { _ = try vault.items.preview(fading.ref) } throws: { ($0 as? Nu11Error)?.code == .notFound }
        #expect(vault.previewCache.get(CachedPart(id: fading.id, part: .head)) == nil, "the faded item's preview stayed cached")
        #expect(!(try vault.items.list().items.map(\.id).contains(fading.id)))
        try vault.items.delete([kept.ref])
        #expect(vault.previewCache.count == 0, "a deleted item's preview stayed cached")
    }

    @Test("the Skeleton Switch fires when its interval passes without a check-in; every unlock checks in")
    func skeletonDeadline() throws {
        let t = try TestVault()
        t.close()
        let clock = TestClock()
        try LockedVault(t.location, clock: clock).unlock(pin: secret("test-pin")).profiles.enableSkeleton(interval: 3600, secure: false)
        clock.pass(3000)
        _ = try LockedVault(t.location, clock: clock).unlock(pin: secret("test-pin"))  // checks in
        clock.pass(3000)
        #expect(throws: Never.self) { try LockedVault(t.location, clock: clock).sweep() }
        #expect(try LockedVault(t.location, clock: clock).skeletonStatus().secondsLeft == 600)
        clock.setWall(by: -86400)  // setting the clock back does not postpone it
        clock.pass(601)
        #expect { try LockedVault(t.location, clock: clock).sweep() } throws: {
            ($0 as? Nu11Error)?.message.contains("Skeleton Switch fired") == true
        }
        #expect(!LockedVault(t.location, clock: clock).isInitialized)
    }

    @Test("wrong PINs: the delay grows, runs on the boot clock, and the right PIN resets it")
    func pinDelays() throws {
        let t = try TestVault()
        t.close()
        let clock = TestClock()
        let locked = LockedVault(t.location, clock: clock)
        for _ in 0..<4 { #expect { _ = try locked.unlock(pin: secret("wrong")) } throws: { ($0 as? Nu11Error) == .wrongPIN } }
        #expect(throws: Never.self) { _ = try locked.unlock(pin: secret("test-pin")) }
        for _ in 0..<5 { _ = try? locked.unlock(pin: secret("wrong")) }
        #expect { _ = try locked.unlock(pin: secret("test-pin")) } throws: { ($0 as? Nu11Error)?.code == .lockedOut }
        clock.setWall(by: 3600)  // moving the wall clock does not end the delay
        #expect { _ = try locked.unlock(pin: secret("test-pin")) } throws: { ($0 as? Nu11Error)?.code == .lockedOut }
        clock.pass(DeviceState.delay(afterFailures: 5) + 1)
        #expect(throws: Never.self) { _ = try locked.unlock(pin: secret("test-pin")) }
    }

    @Test("a session that stays open (the app) holds the lock only per operation: another opener gets in between")
    func lockPerOperation() throws {
        let t = try TestVault()
        t.close()
        let app = try LockedVault(t.location).unlock(pin: secret("test-pin"))
        // While the session holds the lock, nobody else can take it (a second opener waits).
        #expect(!Self.lockIsFree(t.location.lockPath))
        app.releaseLockBetweenOperations()
        #expect(Self.lockIsFree(t.location.lockPath))
        // The command line, meanwhile: unlock, import, lock.
        let cli = try LockedVault(t.location).unlock(pin: secret("test-pin"))
        let imported = try cli.items.importFile(at: t.file("from-cli.txt", Array("hello".utf8)))
        cli.lock()
        // The session sees it, each operation under the lock; the lock is free again after.
        let names = try app.exclusive { try app.items.list(limit: 10).items.map(\.name) }
        #expect(names == ["from-cli.txt"] && imported.name == "from-cli.txt")
        #expect(Self.lockIsFree(t.location.lockPath))
        app.lock()
        #expect { try app.exclusive { 1 } } throws: { ($0 as? Nu11Error)?.message == "the vault is locked" }
    }

    @Test("the open session follows a rotation another program made between its operations: new items go under the keys in use; a PIN changed elsewhere ends the session")
    func sessionFollowsRotation() throws {
        let t = try TestVault()
        t.close()
        let app = try LockedVault(t.location).unlock(pin: secret("test-pin"))
        let before = try app.exclusive { try app.items.importFile(at: t.file("before.txt", Array("before".utf8))) }
        app.releaseLockBetweenOperations()
        // The command line rotates the keys between two of the app's operations.
        let cli = try LockedVault(t.location).unlock(pin: secret("test-pin"))
        _ = try cli.maintenance.rekey()
        cli.lock()
        let after = try app.exclusive { try app.items.importFile(at: t.file("after.txt", Array("after the rekey".utf8))) }
        #expect(try app.exclusive { try app.items.read(after.ref, offset: 0, count: 100) } == Array("after the rekey".utf8))
        app.lock()
        // The keys on disk open both; the check finds every key record and row sound.
        let fresh = try LockedVault(t.location).unlock(pin: secret("test-pin"))
        #expect(try fresh.items.read(before.ref, offset: 0, count: 100) == Array("before".utf8))
        #expect(try fresh.items.read(after.ref, offset: 0, count: 100) == Array("after the rekey".utf8))
        let report = try fresh.maintenance.check(repair: false)
        #expect(report.failures.isEmpty, "\(report.failures.map(\.problem))")
        fresh.releaseLockBetweenOperations()
        // A PIN change elsewhere: the session cannot follow it without the new PIN.
        let other = try LockedVault(t.location).unlock(pin: secret("test-pin"))
        try other.profiles.changePIN(new: secret("changed-pin"))
        other.lock()
        #expect { try fresh.exclusive { try fresh.items.list(limit: 1) } } throws: { ($0 as? Nu11Error)?.message.contains("PIN was changed") == true }
        #expect(fresh.isLocked)
    }

    /// Whether another open file description could take the vault's lock now.
    static func lockIsFree(_ path: String) -> Bool {
        let fd = open(path, O_RDWR)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        flock(fd, LOCK_UN)
        return true
    }

    @Test("pinStatus: the wrong PINs in a row and the delay, after the gate")
    func pinStatus() throws {
        let t = try TestVault()
        t.close()
        let clock = TestClock()
        let locked = LockedVault(t.location, clock: clock)
        #expect(try locked.pinStatus() == LockedVault.PINStatus(failures: 0, secondsLeft: 0))
        for _ in 0..<5 { _ = try? locked.unlock(pin: secret("wrong")) }
        let status = try locked.pinStatus()
        #expect(status.failures == 5 && status.secondsLeft == DeviceState.delay(afterFailures: 5))
        clock.pass(20)
        #expect(try locked.pinStatus().secondsLeft == DeviceState.delay(afterFailures: 5) - 20)
        clock.pass(DeviceState.delay(afterFailures: 5))
        _ = try locked.unlock(pin: secret("test-pin"))
        #expect(try locked.pinStatus() == LockedVault.PINStatus(failures: 0, secondsLeft: 0))
    }

    @Test("a gallery's two-step listing: itemIDs sorts like list(order: .taken) reading only the dates (capture, else mtime, else import); summaries leave out what is gone")
    func galleryListing() throws {
        let t = try TestVault()
        let v = try t.vault
        var made: [ItemID] = []
        var mtimes: [ItemID: Date] = [:]
        for i in 0..<300 {
            // Names with quotes and the key text itself cannot confuse the date reader.
            let name = i % 7 == 0 ? "\"taken\":\(i)-\"modified\":1-\"created\":0-\(i).txt" : "file-\(i).txt"
            let path = try t.file(name, Array("item \(i)".utf8))
            // Files without a capture date sort by their own mtime (a phone dump's PDFs among its photos).
            let mtime = Date(timeIntervalSince1970: 1_000_000_000 + Double((i * 7919) % 300) * 86_400)
            try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: path)
            let id = try v.items.importFile(at: path).id
            made.append(id)
            mtimes[id] = mtime
        }
        let sorted = try v.items.itemIDs()
        #expect(sorted == (try v.items.list(limit: Int.max, order: .taken).items.map(\.id)))
        let dated = try v.items.datedItemIDs()
        #expect(dated.map(\.id) == sorted && dated.allSatisfy { $0.date == mtimes[$0.id] }, "not sorted by the files' mtimes")
        #expect(zip(dated, dated.dropFirst()).allSatisfy { $0.date <= $1.date })
        #expect(Set(sorted) == Set(made))
        let page = Array(sorted.prefix(5))
        try v.items.delete([try ItemRef(page[1])])
        let summaries = try v.items.summaries(page)
        #expect(summaries.map(\.id) == [page[0]] + page[2...])
        #expect(try v.items.summaries([]) .isEmpty)
            }

    @Test("a whole listing is read in one pass and still comes in import order across domains; album counts by SQL")
    func wholeListingOrderAndAlbumCounts() throws {
        let t = try TestVault()
        let v = try t.vault
        try v.albums.createAlbum("A")
        try v.albums.createAlbum("B")
        try v.albums.createAlbum("Empty")
        var made: [ItemID] = []
        for i in 0..<40 {
            // Fade items live in their own domain: a one-pass read meets the domains in index
            // order, not in import order, unless it is sorted again.
            let path = try t.file("f\(i).txt", Array("item \(i)".utf8))
            let album: String? = i % 5 == 1 ? "A" : i % 5 == 2 ? "B" : nil
            made.append(try (i % 3 == 0 ? v.items.importFile(at: path, fade: 3600) : v.items.importFile(at: path, album: album)).id)
        }
        #expect(try v.items.list(limit: Int.max).items.map(\.id) == made)
        var paged: [ItemID] = []
        var after: ItemID?
        repeat {
            let page = try v.items.list(limit: 7, after: after)
            paged += page.items.map(\.id)
            after = page.next
        } while after != nil
        #expect(paged == made)
        let counts = Dictionary(uniqueKeysWithValues: try v.albums.list().map { ($0.name, $0.items) })
        #expect(counts == ["A": try v.items.list(album: "A", limit: Int.max).items.count,
                           "B": try v.items.list(album: "B", limit: Int.max).items.count, "Empty": 0])
        #expect(counts["A"] ?? 0 > 0 && counts["B"] ?? 0 > 0)

        // A backup PIN's session reads the same index: the primary's fade items (their own
        // domain, which every session lists) must stay out of its whole listings.
        try v.profiles.setBackupPIN(secret("backup-pin"))
        let ownFade = try v.items.importFile(at: try t.file("mine.txt", [7]), fade: 3600).id
        v.releaseLockBetweenOperations()  // as the app does: the backup session takes the lock
        let backup = try LockedVault(t.location).unlock(pin: secret("backup-pin"))
        let theirs = try backup.items.importFile(at: try t.file("theirs.txt", [8]), fade: 3600).id
        #expect(try backup.items.list(limit: Int.max).items.map(\.id) == [theirs])
        #expect(try backup.items.itemIDs() == [theirs])
        #expect(try backup.albums.list().isEmpty)
        #expect(!made.contains(theirs) && ownFade != theirs)
    }
}
