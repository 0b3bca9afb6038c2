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
    /// Index entries rebuilt from the items' sidecars (under each item's own key, which its
    /// recovery seal gave): every entry whose sidecar opens, and files without entries.
    public var rowsFromSidecars = 0
    /// Items whose sidecar is missing or does not open, whose name, dates and size came from
    /// their index entry as a key set of recovery.n11r opened it — values a vault-folder writer
    /// could have chosen (FORMAT.md §5.2).
    public var namesFromEntries: [String] = []
    /// Items with neither a sidecar that opens nor an entry a key set opens: their entries stay
    /// as they are, and `check` names them.
    public var namesNotRecovered: [String] = []
    /// Why recovery.n11r was not used (missing, damaged, another vault's, another phrase's):
    /// the seals opened with the phrase alone, and the names came from the sidecars.
    public var recoveryDataNotUsed: String?
    /// recovery.n11r's key sets held an archive key that the rebuilt key store does not keep
    /// (nothing in the folder vouches for them): secure archives made before do not import.
    public var archiveKeysNotKept = false
    /// Set when the key store is in place but what follows was cut short (the next unlock
    /// finishes it): what to tell the person.
    public var unfinished: String?

    public struct Unrecovered: Sendable, Codable, Equatable {
        public var id: String
        public var reason: String
    }

    public init(recovered: Int, notCovered: Int, unrecovered: [Unrecovered] = []) {
        self.recovered = recovered
        self.notCovered = notCovered
        self.unrecovered = unrecovered
    }

    /// One line per item whose name did not come from its sidecar (FORMAT.md §5.2).
    public var nameLines: [String] {
        namesFromEntries.map { "item \($0): its sidecar is missing or does not open, so its name, size and dates came from its index entry as the recovery data's keys opened it (a writer of the vault folder could have set them)" }
            + namesNotRecovered.map { "item \($0): its sidecar is missing or does not open and no key opens its index entry: its name and dates were not recovered (`check` names it)" }
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
        // The key store is in place: the recovery took effect. What follows brings the index
        // under its keys; cut short, it is a notice, and the next unlock finishes it from the
        // sidecars (the key store's `recover.pending` marker).
        do {
            try finishRecovery(&report, sets: sets, pin: pin)
        } catch {
            report.unfinished = "the key store is rebuilt and opens with the new PIN, but bringing the index under its keys was cut short (\(Vault.describe(error))); the next unlock finishes it"
        }
        return report
    }

    /// The vault's lock is free again. The new key store holds fresh keys, and keeps no key of
    /// recovery.n11r's sets (nothing in the folder can vouch for them: a folder writer may seal
    /// sets of their own, and plant index entries and album names they open). Each entry comes
    /// back from its item's sidecar (under the item key, which the seal gave); a set only reads
    /// the entries of items without a sidecar that opens, and album names (FORMAT.md §5.2).
    private func finishRecovery(_ report: inout RecoveryReport, sets: [DomainKeys], pin: SecretBytes) throws {
        var finishing = self
        finishing.recovering = true
        let vault = try finishing.unlock(pin: pin)
        defer { vault.lock() }
        let albumKeys = sets.map { Subkey.derive(from: $0.main, purpose: "index metadata") }
        if report.indexRebuilt != nil {
            let adoption = try vault.maintenance.adoptOrphans(try vault.maintenance.contentFiles(), known: [], write: true, albumKeys: albumKeys)
            report.indexRebuilt = adoption.rows.count
        } else {
            let entries = try vault.maintenance.recoverEntries(setKeys: albumKeys)
            report.rowsFromSidecars = entries.fromSidecars
            report.namesFromEntries = entries.fromEntries.map(\.hex)
            report.namesNotRecovered = entries.unnamed.map(\.hex)
            let adoption = try vault.maintenance.adoptOrphans(try vault.maintenance.contentFiles(), known: Set(try vault.index.allRows().map(\.id)),
                                                              write: true, albumKeys: entries.albumKeys)
            report.rowsFromSidecars += adoption.rows.count
        }
        try ProtectedFiles.remove(vault.keyStore.recoveryMarker)
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
        guard ProtectedFiles.exists(location.indexPath) || looksLikeVaultFolder else {
            throw Nu11Error(.notFound, "no vault folder at \(location.vaultRoot) (index.sqlite is missing)",
                            remedy: .pointAtRestoredVault, item: location.vaultRoot)
        }
        let lock = try FileLock(path: location.lockPath)
        defer { withExtendedLifetime(lock) {} }
        // recovery.n11r is optional and untrusted (FORMAT.md §5.2): the phrase opens the items'
        // seals directly; the file only adds its key sets, read for names, when it is this phrase's.
        let recordPresent = ProtectedFiles.kind(recoveryPath) != nil
        let recoveryBytes = recordPresent ? try? ProtectedFiles.read(recoveryPath, limit: 4096) : nil
        let record = recoveryBytes.flatMap { try? RecoveryRecord.parse($0) }
        // A lost or damaged index (FORMAT.md §5.3): the items come back from the folder alone —
        // each file's sidecar holds its recovery seal — and the index is rebuilt at the end.
        let index = ProtectedFiles.exists(location.indexPath) ? try? VaultIndex(path: location.indexPath) : nil
        let indexSound = index.map { ((try? $0.integrityCheck()) == "ok") && ((try? $0.vaultID()) ?? nil) != nil } ?? false
        guard let index, indexSound else {
            return try rebuildKeyStoreFromFolder(vaultIDs: RecoveryPhraseKeys.candidateVaultIDs(index: index, recoveryBytes: recoveryBytes),
                                                 record: record, recordPresent: recordPresent,
                                                 phrase: phrase, pin: pin, parameters: parameters, clock: clock)
        }
        guard let vaultID = try index.vaultID() else {
            throw Nu11Error(.corrupted, "the vault folder's index has no vault ID", remedy: .check(reason: nil))
        }
        let keys = try RecoveryPhraseKeys(phrase: phrase, vaultID: vaultID, record: record, recordPresent: recordPresent)
        let sets = keys.sets
        let fresh = DomainKeys.generate(role: .primary, created: UInt64(max(0, clock.wallTime())))

        // Built beside its place, renamed in at the end.
        let parent = (location.keyStoreRoot as NSString).deletingLastPathComponent
        if ProtectedFiles.kind(parent) == nil { try ProtectedFiles.makeDirectory(parent) }
        let temp = location.keyStoreRoot + ".recovering"
        if ProtectedFiles.kind(temp) != nil { try Self.destroyFolder(temp) }
        var report = RecoveryReport(recovered: 0, notCovered: 0)
        do {
            let seals = try index.recoverySeals()
            // A recovery setup cut short after its phrase took effect: the new seals (FORMAT.md §5.2).
            let next = (try? index.nextRecoverySeals()) ?? [:]
            var opened: [(id: ItemID, kind: ItemKind, key: SecretBytes)] = []
            // The items: the index's rows, and the primary vault's files the index lacks (a
            // folder writer may have removed rows); each one's seal from the index, else from
            // its sidecar (FORMAT.md §2.2).
            let rows = try index.allRows()
            var candidates = rows.map { (id: $0.id, kind: $0.kind, domain: $0.domain) }
            let listed = Set(rows.map(\.id))
            for path in try Self.itemFiles(location) {
                guard let header = try? N11Header.parse(ProtectedFiles.readPrefix(path, count: N11Header.byteCount)),
                      header.domain == .vault, !listed.contains(header.itemID),
                      (try? ItemID(hex: Maintenance.stem((path as NSString).lastPathComponent))) == header.itemID else { continue }
                candidates.append((header.itemID, header.kind, header.domain))
            }
            func sidecarSeal(_ id: ItemID) -> [UInt8]? {
                (try? ProtectedFiles.read(location.sidecarPath(id), limit: SidecarEnvelope.maxBytes))
                    .flatMap { try? SidecarEnvelope.head($0) }.flatMap { $0.itemID == id ? $0.recoverySeal : nil }
            }
            for row in candidates {
                guard row.domain == .vault, let seal = seals[row.id] ?? next[row.id] ?? sidecarSeal(row.id) else {
                    report.notCovered += 1
                    continue
                }
                // Every item whose seal opens comes back; one that does not (a row sealed to an
                // older phrase, a damaged row) is named with the reason, and the rest go on.
                let itemKey: SecretBytes
                let ad = RecoverySeal.itemAAD(vaultID: vaultID, itemID: row.id, kind: row.kind)
                do {
                    if let opened = try? keys.open(seal, ad) {
                        itemKey = opened
                    } else if let opened = next[row.id].flatMap({ try? keys.open($0, ad) }) {
                        itemKey = opened
                    } else {
                        itemKey = try keys.open(sidecarSeal(row.id) ?? seal, ad)
                    }
                } catch {
                    report.unrecovered.append(.init(id: row.id.hex, reason: seal.count == Self.itemSealBytes
                        ? "its recovery seal does not open with this phrase (sealed to another phrase, or altered)"
                        : "its recovery seal is damaged (\(seal.count) bytes, not \(Self.itemSealBytes))"))
                    continue
                }
                opened.append((row.id, row.kind, itemKey))
                report.recovered += 1
            }
            // Nothing is made before the phrase has opened something (a wrong phrase costs no KDF run).
            try Self.checkSomethingRecovered(report, keys: keys, recordParsed: record != nil)
            let (store, unlocked) = try KeyStore.create(root: temp, pin: pin, parameters: parameters, keys: fresh)
            let records = try opened.map {
                try ItemKeyRecord.seal(itemKey: $0.key, domain: .vault, kind: $0.kind, itemID: $0.id, domainKey: unlocked.keys.main)
            }
            report.recoveryDataNotUsed = keys.recordProblem
            report.archiveKeysNotKept = !sets.isEmpty
            let renewed = try Self.fillRecoveredKeyStore(store, unlocked: unlocked, records: records, vaultID: vaultID,
                                                         publicKey: keys.publicKey, clock: clock,
                                                         detail: "key store rebuilt from the vault folder and the recovery phrase; new keys"
                                                            + (report.unrecovered.isEmpty ? "" : "; \(report.unrecovered.count) item(s) whose seal did not open were left"),
                                                         count: report.recovered)
            try ProtectedFiles.writeAtomically(renewed, to: recoveryPath)
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
