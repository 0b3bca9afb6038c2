// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Storage
import Testing
@testable import Nu11Vault

/// An import's workers let go of the vault before the importing thread goes on, so the
/// command that imported closes its index itself: no WAL is left behind for the next command
/// (even one refused for a key store that is not the vault's pair) to checkpoint and remove.
@Suite("import workers let go of the vault")
struct WorkerTests {
    final class Token: @unchecked Sendable {}

    @Test("a worker lets go of its job before it signals: the thread that waits holds the last reference")
    func workerLetsGo() {
        var late = 0
        for _ in 0..<2000 {
            var token: Token? = Token()
            weak let watch = token
            let done = DispatchSemaphore(value: 0)
            Worker.start(signalling: done) { [token] in _ = token }
            token = nil
            done.wait()
            if watch != nil { late += 1 }
        }
        #expect(late == 0, "\(late) of 2000 jobs still held what they captured after they signalled")
        // The same on a thread of its own (a group commit, which waits for the disk).
        for _ in 0..<300 {
            var token: Token? = Token()
            weak let watch = token
            let done = DispatchSemaphore(value: 0)
            Worker.start(signalling: done, blocking: true) { [token] in _ = token }
            token = nil
            done.wait()
            if watch != nil { late += 1 }
        }
        #expect(late == 0, "\(late) of 300 jobs on their own thread still held what they captured after they signalled")
    }

    @Test("a folder import gives each run of commit-every files one key pack (their IDs' first byte), and a new one for the next run")
    func oneGroupOnePack() throws {
        let t = try TestVault()
        let paths = try (0..<20).map { try t.file("p\($0).txt", Array("item \($0)".utf8)) }
        let imported = try t.vault.items.importFiles(paths, commitEvery: 8)
        let shards = imported.map { String($0.id.hex.prefix(2)) }
        #expect(shards.count == 20)
        for run in [0..<8, 8..<16, 16..<20] {
            #expect(Set(shards[run]).count == 1, "files \(run): one pack, not \(Set(shards[run]))")
        }
        // The rest of each ID stays random: twenty different IDs.
        #expect(Set(imported.map(\.id)).count == 20)
        for item in imported { #expect(try t.vault.keyStore.itemKeyRecord(item.id).itemID == item.id) }
    }

    @Test("after a folder import (files encrypted and batches committed on other threads) the vault is gone with its last reference: index closed, no -wal or -shm left")
    func importClosesIndex() throws {
        let t = try TestVault()
        let paths = try (0..<12).map { try t.file("f\($0).txt", Array("item \($0)".utf8)) }
        t.close()
        for round in 0..<8 {
            var vault: Vault? = try LockedVault(t.location).unlock(pin: secret("test-pin"))
            weak let watch = vault
            let imported = try vault?.items.importFiles(paths, commitEvery: 3)
            #expect(imported?.count == paths.count)
            vault = nil
            #expect(watch == nil, "round \(round): a worker still held the vault")
            for suffix in ["-wal", "-shm"] {
                #expect(!FileManager.default.fileExists(atPath: t.location.indexPath + suffix), "round \(round): index\(suffix) left behind")
            }
        }
    }
}
