// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Where a key rotation is.
public struct RekeyProgress: Sendable {
    public enum Phase: String, Sendable { case keyRecords = "key packs", rows = "index rows" }
    public var phase: Phase
    public var done: Int
    public var total: Int
}

/// What a key rotation changed.
public struct RekeyReport: Sendable, Codable, Equatable {
    public var keyRecords: Int
    public var rows: Int
    public var albums: Int
    /// Whether the rotation finished one an earlier command left unfinished.
    public var resumed: Bool
}

/// Key rotation (docs/FORMAT.md §4.2a). New main and fade keys for the vault this PIN opens;
/// every item key record re-wrapped, every index row and album name re-sealed under the
/// new metadata subkeys; no content re-encrypted. The steps, each crash-safe:
///
/// 1. a forward record (old keys → new keys, under a subkey of the old) is written durably;
/// 2. key records are re-wrapped in durable batches, rows re-sealed a page per transaction
///    — every record and row opens under the old keys or the new ones at every instant;
/// 3. the slot is re-sealed with the new keys (the commit point);
/// 4. the primary vault's forward record is removed. A backup vault's stays: the duress
///    slot holds a copy of the backup keys and follows it at its next use.
///
/// A rotation interrupted anywhere is finished by the next unlock (`resumeRotation`),
/// before anything reads the vault.
extension Maintenance {
    /// `nu11vlt rekey`.
    @discardableResult
    public func rekey(progress: @escaping (RekeyProgress) -> Void = { _ in }) throws -> RekeyReport {
        let current = try held
        let report = try rotate(to: current.keys.rotated(created: UInt64(max(0, now))), progress: progress) { keys in
            try keyStore.resealSlot(current.slot, keys: keys, kek: current.kek)
            return current.with(keys: keys)
        }
        audit("rekey", count: report.keyRecords)
        return report
    }

    /// Whether `keys.rotate_days` asks for a rotation now (keys of unknown age count as due).
    var rotationDue: Bool {
        guard settings.rotateDays > 0, let keys = try? keys else { return false }
        return Double(keys.created) + Double(settings.rotateDays) * 86400 <= now
    }

    @discardableResult
    func rotate(to new: DomainKeys, progress: @escaping (RekeyProgress) -> Void,
                commit: (DomainKeys) throws -> UnlockedKeys) throws -> RekeyReport {
        guard !index.isReadOnly else {
            throw Nu11Error(.io, "the vault cannot be written here, so its keys cannot be rotated",
                            remedy: .advice(.writableVault))
        }
        let current = try held
        try keyStore.writeForward(from: current.keys, to: new)
        let report = try migrate(from: [current.keys], to: new, progress: progress)
        do {
            vault.replaceHeld(try commit(new))
        } catch let error as Nu11Error where error.tookEffect {
            notice("done, but the key rotation may not survive a power cut yet (\(error.message))")
            // Committed but not yet durable: the forward record is what lets the next unlock
            // finish should a power cut lose the slot's rename, so it goes only once a sync of
            // the key store succeeds — left behind silently, it let an old copy of the master
            // record with the old PIN reach the new keys until the next unlock.
            if role == .primary {
                if (try? keyStore.syncFileSystem()) != nil {
                    dropForward(from: current.keys)
                } else {
                    notice("until then the old keys' rotation record stays (\(keyStore.root)/forward/\(ForwardRecord.tag(of: current.keys)).n11f): with it, an old copy of the key store and the old PIN still reach the new keys; the next unlock removes it")
                }
            }
            vault.lock()
            return report
        } catch {
            // The PIN change was refused after the records moved: finish the rotation under the
            // current PIN, then report the refusal.
            try keyStore.resealSlot(current.slot, keys: new, kek: current.kek)
            vault.replaceHeld(current.with(keys: new))
            if role == .primary { dropForward(from: current.keys) }
            throw error
        }
        if role == .primary {
            dropForward(from: current.keys)
        } else if role == .backup {
            followDuress(from: [current.keys], to: new)
        }
        vault.profiles.recoveryAfterRotation()
        return report
    }

    /// After a backup rotation's commit point: the duress slot (a copy of the backup keys) is
    /// re-sealed with the new keys under its escrowed KEK, and the forward records that led
    /// it are removed — `forward/` is left as empty as after a primary rotation. Without an
    /// escrow (a key store from before it, or no duress PIN) the records stay for the duress
    /// slot to follow at its next use.
    func followDuress(from olds: [DomainKeys], to new: DomainKeys) {
        guard let escrow = keyStore.escrowedKEK(for: [new]) else {
            // A decoy escrow: no duress slot holds these keys, so nothing follows the records —
            // they go as a primary rotation's do, and `forward/` looks the same whichever PIN
            // rotated (FORMAT.md §4.2c). Without the file (a key store made before it) they stay.
            guard keyStore.hasEscrowFile else { return }
            do {
                for old in olds { try keyStore.removeForward(from: old) }
                try keyStore.removeForwards(leadingTo: new)
            } catch {
                notice("done, but the old keys' rotation record could not be removed yet (\(Vault.describe(error))); the next unlock with the backup PIN tries again")
            }
            return
        }
        do {
            guard try keyStore.resealDuress(with: new, kek: escrow.kek) else { return }
            for old in olds { try keyStore.removeForward(from: old) }
            try keyStore.removeForwards(leadingTo: new)
        } catch {
            notice("the duress PIN's copy of the rotated keys could not be updated yet (\(Vault.describe(error))); the next unlock with the backup PIN tries again")
        }
    }

    /// Removes the finished rotation's forward record. Nothing can find it again without the
    /// old keys, so a failure is reported with the file to remove — it would let an old copy
    /// of the key store with the old PIN reach the new keys.
    func dropForward(from old: DomainKeys) {
        do { try keyStore.removeForward(from: old) } catch {
            notice("done, but the old keys' rotation record could not be removed (\(Vault.describe(error))): delete \(keyStore.root)/forward/\(ForwardRecord.tag(of: old)).n11f yourself")
        }
    }

    /// Finishes a rotation an earlier command left unfinished, and follows rotations made
    /// through another slot (the duress slot after a backup rotation): the slot is then
    /// re-sealed with the current keys.
    func resumeRotation() throws {
        let current = try held
        var chain = [current.keys]
        while chain.count < 64, let last = chain.last, let next = try keyStore.forward(from: last) { chain.append(next) }
        if chain.count == 1 && role == .backup && !index.isReadOnly {
            followDuress(from: [], to: current.keys)  // a backup rotation cut short after its commit point
        }
        if chain.count == 1 && role == .primary && !index.isReadOnly {
            // A rotation whose commit point passed but whose record was not removed (a kill
            // right after the slot was re-sealed) leaves a record that leads *to* these keys:
            // with an old copy of the key store and the old PIN it would reach them. Remove it.
            do { try keyStore.removeForwards(leadingTo: current.keys) } catch {
                notice("an old key rotation's record could not be removed (\(Vault.describe(error))); the next unlock tries again")
            }
        }
        guard chain.count > 1, let newest = chain.last, !index.isReadOnly else { return }
        let final = newest.withRole(current.keys.role)
        var report = try migrate(from: Array(chain.dropLast()), to: final, progress: { _ in })
        report.resumed = true
        try keyStore.resealSlot(current.slot, keys: final, kek: current.kek)
        vault.replaceHeld(current.with(keys: final))
        if role == .primary {
            for old in chain.dropLast() { try keyStore.removeForward(from: old) }
        } else if role == .backup {
            followDuress(from: Array(chain.dropLast()), to: final)
        }
        vault.profiles.recoveryAfterRotation()
        audit("rekey finished", count: report.keyRecords, detail: "a rotation an earlier command left unfinished")
    }

    /// Steps 2 of a rotation, idempotent: whatever already opens under `new` is left alone.
    func migrate(from olds: [DomainKeys], to new: DomainKeys, progress: @escaping (RekeyProgress) -> Void) throws -> RekeyReport {
        let domains = visibleDomains
        // The listing cache is sealed under the retired keys: an old copy of the key store with
        // the old PIN would read it (IDs, dates). A cache: it goes, and the next listing makes it.
        if role == .primary {
            try keyStore.destroyListingCache()
            vault.listingFileEntries = -1
        }
        try vault.profiles.recoveryBeforeRotation(from: olds, to: new)
        try rotateArchiveKey(from: olds, to: new)
        if role == .backup, let escrow = keyStore.escrowedKEK(for: olds) {
            // The duress slot's KEK moves to the new keys before the commit point (FORMAT.md §4.2c).
            try keyStore.writeEscrow(kek: escrow.kek, for: new)
        }
        let records = try keyStore.rewrapItemKeys(domains: domains, from: olds, to: new) { done, total in
            progress(RekeyProgress(phase: .keyRecords, done: done, total: total))
        }
        func metaKeys(_ keys: DomainKeys) -> [Domain: SecretBytes] {
            Dictionary(uniqueKeysWithValues: domains.map { ($0, Subkey.derive(from: keys.key(for: $0), purpose: "index metadata")) })
        }
        let newMeta = metaKeys(new)
        let oldMeta = olds.map(metaKeys)
        let total = try index.count(domains: domains).items
        let rows = try index.resealRows(domains: domains, progress: { progress(RekeyProgress(phase: .rows, done: $0, total: total)) }) { row in
            guard let key = newMeta[row.domain], !ItemMetadata.opens(row, key: key) else { return nil }
            for old in oldMeta {
                guard let oldKey = old[row.domain] else { continue }
                if let sealed = try ItemMetadata.resealed(row, from: oldKey, to: key) { return sealed }
                // A row sealed before album binding: decoded, and sealed again bound to its album.
                if let meta = try? ItemMetadata.open(row, key: oldKey) { return try meta.seal(id: row.id, album: row.album, key: key) }
            }
            return nil
        }
        var albums = 0
        let albumKey = newMeta[mainDomain]
        for album in try index.albums(domains: [mainDomain]) {
            guard let albumKey, (try? SmallSeal.open(album.name, key: albumKey, associatedData: Albums.albumAAD(album.id))) == nil else {
                continue
            }
            for old in oldMeta {
                guard let oldKey = old[mainDomain],
                      var plain = try? SmallSeal.open(album.name, key: oldKey, associatedData: Albums.albumAAD(album.id)) else { continue }
                defer { secureZero(&plain) }
                try index.renameAlbum(album.id, name: SmallSeal.seal(plain, key: albumKey, associatedData: Albums.albumAAD(album.id)))
                albums += 1
                break
            }
        }
        // The album name files (FORMAT.md §2.3) follow the index: nothing in the folder stays
        // sealed under the retired keys.
        if mainDomain == .vault {
            for album in try index.albums(domains: [.vault]) {
                let path = location.albumNamePath(album.id)
                if (try? ProtectedFiles.read(path, limit: AlbumNameFile.maxBytes)) != AlbumNameFile.encode(album) {
                    try vault.albums.writeAlbumNameFile(album)
                }
            }
        }
        return RekeyReport(keyRecords: records, rows: rows, albums: albums, resumed: false)
    }
}
