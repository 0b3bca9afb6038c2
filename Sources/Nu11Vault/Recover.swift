// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What `nu11vlt recover` rebuilt.
public struct RecoveryReport: Sendable, Codable, Equatable {
    /// Items whose key records were rebuilt from the vault folder.
    public var recovered: Int
    /// Items the phrase does not cover (Fade, the backup vault, items added before the phrase
    /// existed or while its data could not be trusted): they stay in the folder and `check`
    /// lists them.
    public var notCovered: Int
    /// Items whose recovery seal is there but does not open with the phrase (sealed to another
    /// phrase, or damaged): each with the reason. They stay in the folder without a key record.
    public var unrecovered: [Unrecovered] = []
    /// The index was lost or damaged: set aside, and rebuilt from the folder (FORMAT.md §5.3);
    /// the number of items it lists again.
    public var indexRebuilt: Int?

    public struct Unrecovered: Sendable, Codable, Equatable {
        public var id: String
        public var reason: String
    }

    public init(recovered: Int, notCovered: Int, unrecovered: [Unrecovered] = []) {
        self.recovered = recovered
        self.notCovered = notCovered
        self.unrecovered = unrecovered
    }

    /// One line per item that was not recovered although it had a seal, then the count.
    public var unrecoveredLines: [String] {
        guard !unrecovered.isEmpty else { return [] }
        return unrecovered.map { "item \($0.id): \($0.reason)" }
            + ["\(unrecovered.count) item(s) with a recovery seal were not recovered; \(recovered) were"]
    }
}

extension LockedVault {
    /// Rebuilds a key store from the vault folder and its recovery phrase (docs/FORMAT.md
    /// §5.2): the primary domain keys and every sealed item key come back, sealed under a
    /// new PIN. The key store is built in a temp folder beside its place and renamed into
    /// place at the end, so an interrupted run leaves nothing half-made (a leftover temp
    /// folder is destroyed by the next run). An existing key store is never touched.
    public func recover(phrase: SecretBytes, pin: SecretBytes, parameters: KDFParameters,
                        clock: any VaultClock = SystemClock()) throws -> RecoveryReport {
        var (report, sets) = try rebuildKeyStore(phrase: phrase, pin: pin, parameters: parameters, clock: clock)
        if report.indexRebuilt != nil {
            // The rows, from the sidecars, under the new keys; album names read with the
            // phrase's key sets (they authenticate nothing else: the folder is untrusted).
            let vault = try unlock(pin: pin)
            defer { vault.lock() }
            let adoption = try vault.maintenance.adoptOrphans(try vault.maintenance.contentFiles(), known: [], write: true,
                                                              albumKeys: sets.map { Subkey.derive(from: $0.main, purpose: "index metadata") })
            report.indexRebuilt = adoption.rows.count
            return report
        }
        // The vault's lock is free again: rows still sealed under keys of an interrupted
        // rotation are re-sealed under the current ones (what the next unlock would do). The
        // keys used are the set that opens the index (`trustedSets`): a set a folder writer
        // sealed to the public key opens nothing there and is dropped.
        if sets.count > 1, let current = sets.first {
            let vault = try unlock(pin: pin)
            defer { vault.lock() }
            _ = try vault.maintenance.migrate(from: Array(sets.dropFirst()), to: current.withRole(.primary), progress: { _ in })
        }
        return report
    }

    /// The key store, rebuilt under the vault's lock; returns the key sets the phrase opened.
    private func rebuildKeyStore(phrase: SecretBytes, pin: SecretBytes, parameters: KDFParameters,
                                 clock: any VaultClock) throws -> (RecoveryReport, [DomainKeys]) {
        try Self.validateNewPIN(pin)
        try parameters.validateChosen()
        let target = KeyStore(root: location.keyStoreRoot)
        guard !target.exists, ProtectedFiles.kind(location.keyStoreRoot).map({ $0 == .directory }) ?? true else {
            throw Nu11Error(.alreadyExists, "a key store already exists at \(location.keyStoreRoot); nothing was changed",
                            remedy: .recoverBesideKeyStore, item: location.keyStoreRoot)
        }
        let recoveryPath = location.vaultRoot + "/recovery.n11r"
        guard ProtectedFiles.exists(location.indexPath) || (looksLikeVaultFolder && ProtectedFiles.exists(recoveryPath)) else {
            throw Nu11Error(.notFound, "no vault folder at \(location.vaultRoot) (index.sqlite is missing)",
                            remedy: .pointAtRestoredVault, item: location.vaultRoot)
        }
        guard ProtectedFiles.exists(recoveryPath) else {
            throw Nu11Error(.notFound, "the vault folder has no recovery data (recovery.n11r): it was made before recovery phrases, or its phrase was never set up",
                            remedy: .noRecoveryData, item: recoveryPath)
        }
        let lock = try FileLock(path: location.lockPath)
        defer { withExtendedLifetime(lock) {} }
        let record = try RecoveryRecord.parse(ProtectedFiles.read(recoveryPath, limit: 4096))
        // A lost or damaged index (FORMAT.md §5.3): the items come back from the folder alone —
        // each file's sidecar holds its recovery seal — and the index is rebuilt at the end.
        let index = ProtectedFiles.exists(location.indexPath) ? try? VaultIndex(path: location.indexPath) : nil
        let indexSound = index.map { ((try? $0.integrityCheck()) == "ok") && ((try? $0.vaultID()) ?? nil) != nil } ?? false
        guard let index, indexSound else {
            return try rebuildKeyStoreFromFolder(record: record, phrase: phrase, pin: pin, parameters: parameters, clock: clock)
        }
        guard let vaultID = try index.vaultID() else {
            throw Nu11Error(.corrupted, "the vault folder's index has no vault ID", remedy: .check(reason: nil))
        }
        guard record.vaultID == vaultID else {
            throw Nu11Error(.corrupted, "the recovery data (recovery.n11r) belongs to another vault",
                            remedy: .pointAtRestoredVault, item: recoveryPath)
        }
        let sets = try Self.trustedSets(try record.open(phrase: phrase), index: index)
        guard let current = sets.first else { throw RecoverySeal.wrongPhrase }
        let privateKey = try RecoverySeal.privateKey(phrase: phrase, vaultID: vaultID)

        // Built beside its place, renamed in at the end.
        let parent = (location.keyStoreRoot as NSString).deletingLastPathComponent
        if ProtectedFiles.kind(parent) == nil { try ProtectedFiles.makeDirectory(parent) }
        let temp = location.keyStoreRoot + ".recovering"
        if ProtectedFiles.kind(temp) != nil { try Self.destroyFolder(temp) }
        var report = RecoveryReport(recovered: 0, notCovered: 0)
        do {
            let (store, unlocked) = try KeyStore.create(root: temp, pin: pin, parameters: parameters, keys: current.lacksFadeKey ? current.withFreshFade() : current)
            let seals = try index.recoverySeals()
            // A recovery setup cut short after its phrase took effect: the new seals (FORMAT.md §5.2).
            let next = (try? index.nextRecoverySeals()) ?? [:]
            var records: [ItemKeyRecord] = []
            for row in try index.allRows() {
                guard row.domain == .vault, let seal = seals[row.id] else {
                    report.notCovered += 1
                    continue
                }
                // Every item whose seal opens comes back; one that does not (a row sealed to an
                // older phrase, a damaged row) is named with the reason, and the rest go on.
                let itemKey: SecretBytes
                let ad = RecoverySeal.itemAAD(vaultID: vaultID, itemID: row.id, kind: row.kind)
                do {
                    if let opened = try? RecoverySeal.open(seal, with: privateKey, associatedData: ad) {
                        itemKey = opened
                    } else {
                        itemKey = try RecoverySeal.open(next[row.id] ?? seal, with: privateKey, associatedData: ad)
                    }
                } catch {
                    report.unrecovered.append(.init(id: row.id.hex, reason: seal.count == Self.itemSealBytes
                        ? "its recovery seal does not open with this phrase (sealed to another phrase, or altered)"
                        : "its recovery seal is damaged (\(seal.count) bytes, not \(Self.itemSealBytes))"))
                    continue
                }
                let key = try ItemKeyRecord.seal(itemKey: itemKey, domain: .vault, kind: row.kind, itemID: row.id, domainKey: unlocked.keys.main)
                records.append(key)
                report.recovered += 1
            }
            if report.recovered == 0, let first = report.unrecovered.first {
                throw Nu11Error(.authenticationFailed,
                                "no item's recovery seal opens with this phrase (\(report.unrecovered.count) tried; e.g. item \(first.id): \(first.reason)); nothing was written",
                                remedy: .advice(.typeRecoveryPhrase))
            }
            try store.writeItemKeys(records, durable: false)
            try store.syncFileSystem()
            try store.recordVaultID(vaultID)
            var state = DeviceState(now: 0)
            _ = EffectiveTime.advance(&state, clock: clock)
            state.settingsSaved = true
            try store.saveState(state)
            try store.saveSettings(Settings(), tagKey: Vault.settingsKey(unlocked.keys))
            try AuditTrail.append([AuditEntry(time: state.latestSeen, event: "recover", count: report.recovered,
                                              detail: "key store rebuilt from the vault folder and the recovery phrase"
                                                + (report.unrecovered.isEmpty ? "" : "; \(report.unrecovered.count) item(s) whose seal did not open were left"))],
                                  keys: unlocked.keys, keyStore: store, maxBytes: Settings().logMaxKiB << 10, now: state.latestSeen)
            try AuditTrail.writeDecoy(keyStore: store, now: state.latestSeen)
            try store.writeEscrowDecoy()
            try store.writeSecurityKeyDecoy()
            try store.syncFileSystem()
            if ProtectedFiles.kind(location.keyStoreRoot) == .directory { _ = rmdir(location.keyStoreRoot) }  // an empty folder only
            try ProtectedFiles.move(temp, to: location.keyStoreRoot)
        } catch {
            try? Self.destroyFolder(temp)
            throw error
        }
        return (report, sets)
    }

    /// A seal of a 32-byte item key (FORMAT.md §5.2: 92 bytes).
    static let itemSealBytes = RecoverySeal.overhead + 32

    /// The key sets to rebuild with, the one that opens the most index entries first. The key
    /// sets are sealed to the phrase's *public* key, so whoever can write the vault folder can
    /// seal a set of their own choosing (issue 55's review): a set is trusted only for what it
    /// opens. An entry is an item row or an album name: a rotation cut short after its rows
    /// moved and before its album names did leaves the names under the older set, which must
    /// stay to carry them over. When the index has entries and no set opens any,
    /// recovery.n11r was replaced.
    static func trustedSets(_ sets: [DomainKeys], index: VaultIndex) throws -> [DomainKeys] {
        let rows = try index.items(domains: [.vault], limit: 256)
        let albums = Array(try index.albums(domains: [.vault]).prefix(256))
        guard !rows.isEmpty || !albums.isEmpty else { return sets }
        let scored = sets.map { set -> (DomainKeys, Int) in
            let key = Subkey.derive(from: set.main, purpose: "index metadata")
            let names = albums.filter { (try? SmallSeal.open($0.name, key: key, associatedData: Albums.albumAAD($0.id))) != nil }
            return (set, rows.filter { ItemMetadata.opens($0, key: key) }.count + names.count)
        }
        let opening = scored.filter { $0.1 > 0 }.sorted { $0.1 > $1.1 }.map(\.0)
        guard !opening.isEmpty else {
            throw Nu11Error(.corrupted, "the recovery data's keys open none of the vault's index entries: recovery.n11r was replaced (or the index is another vault's); nothing was written",
                            remedy: .advice(.restoreRecoveryRecord))
        }
        return opening
    }

    /// Removes a folder of our own making, key files overwritten first.
    static func destroyFolder(_ path: String) throws {
        guard ProtectedFiles.kind(path) == .directory else { return try ProtectedFiles.remove(path) }
        for name in try ProtectedFiles.list(path) {
            let child = path + "/" + name
            if ProtectedFiles.kind(child) == .directory { try destroyFolder(child) } else { try ProtectedFiles.overwriteAndRemove(child) }
        }
        try ProtectedFiles.removeDirectory(path)
    }
}
