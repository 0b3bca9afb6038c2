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
