// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

extension LockedVault {
    /// `recover` when the index is lost or damaged (FORMAT.md §5.3): every item file of the
    /// primary vault whose sidecar carries a recovery seal that opens with the phrase gets its
    /// key record back; the key store gets **fresh** domain keys (nothing in the folder can
    /// vouch for the key sets of `recovery.n11r`: a folder writer may have sealed their own);
    /// the damaged index is set aside (never deleted) and a new one, paired with the new key
    /// store, takes its place. The caller then rebuilds the rows. The phrase's key needs the
    /// vault ID: the first of `vaultIDs` (the damaged index's, recovery.n11r's header) whose key
    /// opens a seal is the vault's. Returns recovery.n11r's key sets when it is this phrase's,
    /// for reading album names only.
    func rebuildKeyStoreFromFolder(vaultIDs: [ItemID], record: RecoveryRecord?, recordPresent: Bool, phrase: SecretBytes,
                                   pin: SecretBytes, parameters: KDFParameters,
                                   clock: any VaultClock) throws -> (RecoveryReport, [DomainKeys]) {
        // The items, and each one's seal (nil: none), before any key is tried.
        var report = RecoveryReport(recovered: 0, notCovered: 0)
        var candidates: [(header: N11Header, seal: [UInt8])] = []
        for path in try Self.itemFiles(location) {
            guard let header = try? N11Header.parse(ProtectedFiles.readPrefix(path, count: N11Header.byteCount)),
                  (try? ItemID(hex: Maintenance.stem((path as NSString).lastPathComponent))) == header.itemID else { continue }
            guard header.domain == .vault,
                  let bytes = try? ProtectedFiles.read(location.sidecarPath(header.itemID), limit: SidecarEnvelope.maxBytes),
                  let head = try? SidecarEnvelope.head(bytes), head.itemID == header.itemID, let seal = head.recoverySeal else {
                report.notCovered += 1
                continue
            }
            candidates.append((header, seal))
        }
        guard let firstID = vaultIDs.first else {
            throw Nu11Error(.notFound,
                            "the vault folder's index and its recovery data (recovery.n11r) are both lost or unreadable, and the phrase's key needs the vault ID they hold (item files and sidecars do not carry it); nothing was written",
                            remedy: .advice(.restoreRecoveryRecord))
        }
        func keyOpens(_ keys: RecoveryPhraseKeys, _ item: (header: N11Header, seal: [UInt8])) -> SecretBytes? {
            try? keys.open(item.seal, RecoverySeal.itemAAD(vaultID: keys.vaultID, itemID: item.header.itemID, kind: item.header.kind))
        }
        var keys = try RecoveryPhraseKeys(phrase: phrase, vaultID: firstID, record: record, recordPresent: recordPresent)
        for id in vaultIDs.dropFirst() where !candidates.contains(where: { keyOpens(keys, $0) != nil }) {
            let other = try RecoveryPhraseKeys(phrase: phrase, vaultID: id, record: record, recordPresent: recordPresent)
            if candidates.contains(where: { keyOpens(other, $0) != nil }) { keys = other }
        }
        let vaultID = keys.vaultID
        let parent = (location.keyStoreRoot as NSString).deletingLastPathComponent
        if ProtectedFiles.kind(parent) == nil { try ProtectedFiles.makeDirectory(parent) }
        let temp = location.keyStoreRoot + ".recovering"
        if ProtectedFiles.kind(temp) != nil { try Self.destroyFolder(temp) }
        do {
            var opened: [(header: N11Header, key: SecretBytes)] = []
            for item in candidates {
                guard let itemKey = keyOpens(keys, item) else {
                    report.unrecovered.append(.init(id: item.header.itemID.hex,
                                                    reason: "its recovery seal does not open with this phrase (sealed to another phrase, or altered)"))
                    continue
                }
                opened.append((item.header, itemKey))
                report.recovered += 1
            }
            // Nothing is made before the phrase has opened something (a wrong phrase costs no KDF run).
            try Self.checkSomethingRecovered(report, keys: keys, recordParsed: record != nil)
            let fresh = DomainKeys.generate(role: .primary, created: UInt64(max(0, clock.wallTime())))
            let (store, unlocked) = try KeyStore.create(root: temp, pin: pin, parameters: parameters, keys: fresh)
            let records = try opened.map {
                try ItemKeyRecord.seal(itemKey: $0.key, domain: .vault, kind: $0.header.kind, itemID: $0.header.itemID, domainKey: unlocked.keys.main)
            }
            report.recoveryDataNotUsed = keys.recordProblem
            report.archiveKeysNotKept = !keys.sets.isEmpty
            let renewed = try Self.fillRecoveredKeyStore(store, unlocked: unlocked, records: records, vaultID: vaultID,
                                                         publicKey: keys.publicKey, clock: clock,
                                                         detail: "key store rebuilt from the vault folder (its index lost) and the recovery phrase; new keys",
                                                         count: report.recovered)
            // The new index, the recovery data, then the key store (a failure before leaves no
            // key store, and every seal still opens with the phrase for the next try).
            _ = try setAsideIndex(vaultID: vaultID)
            try ProtectedFiles.replaceShredding(renewed, at: location.vaultRoot + "/recovery.n11r")
            if ProtectedFiles.kind(location.keyStoreRoot) == .directory { _ = rmdir(location.keyStoreRoot) }  // an empty folder only
            try ProtectedFiles.move(temp, to: location.keyStoreRoot)
        } catch {
            try? Self.destroyFolder(temp)
            throw error
        }
        report.indexRebuilt = 0
        return (report, keys.sets)
    }

    /// The rest of a rebuilt key store (in its temp folder): the item key records, vault ID, a
    /// fresh device state, settings, the audit log's first entry, the decoys, the slot's
    /// commitment to new recovery data for the fresh keys (same public key) and the
    /// `recover.pending` marker. Returns the new recovery data, for the caller to write.
    static func fillRecoveredKeyStore(_ store: KeyStore, unlocked: UnlockedKeys, records: [ItemKeyRecord], vaultID: ItemID,
                                      publicKey: [UInt8], clock: any VaultClock, detail: String, count: Int) throws -> [UInt8] {
        try store.writeItemKeys(records, durable: false)
        try store.syncFileSystem()
        try store.recordVaultID(vaultID)
        var state = DeviceState(now: 0)
        _ = EffectiveTime.advance(&state, clock: clock)
        state.settingsSaved = true
        try store.saveState(state)
        try store.saveSettings(Settings(), tagKey: Vault.settingsKey(unlocked.keys))
        try AuditTrail.append([AuditEntry(time: state.latestSeen, event: "recover", count: count, detail: detail)],
                              keys: unlocked.keys, keyStore: store, maxBytes: Settings().logMaxKiB << 10, now: state.latestSeen)
        try AuditTrail.writeDecoy(keyStore: store, now: state.latestSeen)
        try store.writeEscrowDecoy()
        try store.writeSecurityKeyDecoy()
        // The same phrase goes on covering the vault: its recovery data now holds the fresh keys.
        let renewed = try RecoveryRecord.make(vaultID: vaultID, publicKey: publicKey, keys: [unlocked.keys])
        _ = try Profiles.commitRecovery(store, unlocked: unlocked, vaultID: vaultID, publicKey: publicKey)
        try ProtectedFiles.writeAtomically([], to: store.recoveryMarker)
        try store.syncFileSystem()
        return renewed.encoded()
    }

    /// Every content file of the primary vault (Photos, albums, its notes).
    static func itemFiles(_ location: VaultLocation) throws -> [String] {
        var out: [String] = []
        var folders = [location.photosFolder, location.notesFolder]
        folders += ((try? ProtectedFiles.list(location.albumsFolder)) ?? []).map { location.albumsFolder + "/" + $0 }
        for folder in folders where ProtectedFiles.kind(folder) == .directory {
            out += ((try? ProtectedFiles.list(folder)) ?? []).filter { $0.hasSuffix(".n11") || $0.hasSuffix(".n11note") }
                .map { folder + "/" + $0 }
        }
        return out
    }
}
