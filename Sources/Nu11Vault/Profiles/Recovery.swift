// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What `recovery setup` did.
public struct RecoverySetup: Sendable {
    /// The phrase, shown once and never stored.
    public let phrase: SecretBytes
    /// Items sealed to it (every item of the primary vault, Fade excepted).
    public let sealed: Int
    /// Set when the phrase took effect but the setup was cut short after (the next unlock
    /// finishes it): what to tell the person, beside the phrase.
    public var unfinished: String? = nil
}

/// The recovery phrase (docs/FORMAT.md §5.2): the vault folder carries the primary vault's
/// domain keys and every item key sealed to the phrase's public key, so the folder and the
/// phrase alone rebuild a key store (`nu11vlt recover`). Only the primary vault takes part:
/// the backup vault stays undetectable, and Fade items are meant to disappear.
extension Profiles {
    var recoveryPath: String { location.vaultRoot + "/recovery.n11r" }

    /// Reads the recovery data after unlock: the public key new items are sealed to, if the
    /// current keys made it and the slot's commitment names it (FORMAT.md §4.2e). The vault
    /// folder is untrusted storage: a `recovery.n11r` that is missing, put back from before a
    /// `recovery setup` or a rotation, or made by another's keys is reported in one line and
    /// never sealed to. A stale key-set list (a rotation finished since) is rewritten.
    func loadRecovery() {
        vault.recoveryPublicKey = nil
        vault.recoveryProblem = nil
        guard role == .primary, let current = try? keys else { return }
        var finishedSetup: [UInt8]?
        if ProtectedFiles.exists(interruptedSetupPath) {
            finishedSetup = resumeRecoverySetup(record: try? RecoveryRecord.parse(ProtectedFiles.read(recoveryPath, limit: 4096)))
        }
        // A setup cut short after its phrase took effect but before the slot committed to it
        // (the rotation is finished by this unlock, after this): the key store's marker names
        // the phrase shown, so its recovery data is the expected one — not "an old copy".
        let expected = finishedSetup ?? current.recoveryCommitment
        guard ProtectedFiles.exists(recoveryPath) else {
            if expected != nil {
                recoveryProblem("the vault folder's recovery data (recovery.n11r) is missing, so new items are not covered by the recovery phrase")
            }
            return
        }
        do {
            let record = try RecoveryRecord.parse(ProtectedFiles.read(recoveryPath, limit: 4096))
            guard record.vaultID == (try index.vaultID()) else {
                recoveryProblem("the vault folder's recovery data (recovery.n11r) belongs to another vault; it is not used, so new items are not covered by the recovery phrase")
                return
            }
            guard record.mentions(current) else {
                // A shared vault (FORMAT.md § 9.6): another device may have made new keys and the
                // recovery data with them; writing it again here would undo that device's.
                let shared = ((try? keyStore.syncDeviceID()) ?? nil) != nil
                if shared, let expected, record.matches(commitment: expected) {
                    recoveryProblem("the vault folder's recovery data (recovery.n11r) was made by keys this device does not hold (another device of this shared vault made new keys, or an old copy was put back); this device leaves it as it is, so its new items are not covered by the recovery phrase")
                    return
                }
                if let expected, record.matches(commitment: expected), !index.isReadOnly {
                    // Put back from before a key rotation (the owner restored the folder, or a
                    // sync peer's old copy): its public key is the one the key store commits
                    // to, so the current phrase's; only that is taken from the file, and the
                    // recovery data is made again under the current keys (re-adopted).
                    do {
                        try writeRecovery(publicKey: record.publicKey, keys: [current])
                        vault.pendingNotices.append(Notice(message: "the vault folder's recovery data (recovery.n11r) was from before the last key rotation (an old copy put back); it was made again under the current keys, and the recovery phrase covers new items again"))
                        vault.recoveryPublicKey = record.publicKey
                    } catch {
                        recoveryProblem("the vault folder's recovery data (recovery.n11r) is from before the last key rotation and could not be made again (\(Vault.describe(error))); new items are not covered by the recovery phrase")
                    }
                    return
                }
                recoveryProblem("the vault folder's recovery data (recovery.n11r) was not made by this vault's current keys (an old copy put back, or another's); it is not used, so new items are not covered by the recovery phrase")
                return
            }
            if let expected {
                guard record.matches(commitment: expected) else {
                    recoveryProblem("the vault folder's recovery data (recovery.n11r) is not the one this vault's keys expect (an old copy put back); it is not used, so new items are not covered by the recovery phrase")
                    return
                }
            } else if record.isBound(to: current) && !index.isReadOnly {
                // Keys sealed before commitments (FORMAT.md §4.2e): the record the current keys
                // made is adopted, once, so a later copy put back is told apart.
                let adopted = current.withRecovery(record.commitment)
                if let held = try? vault.held, (try? keyStore.resealSlot(held.slot, keys: adopted, kek: held.kek)) != nil {
                    vault.replaceHeld(held.with(keys: adopted))
                }
            }
            // A list of sets bound to the current keys is a finished rotation's: trim it. One
            // whose first set is newer is a rotation in progress: `resumeRotation` finishes it.
            if record.isBound(to: current) && (record.sets.count > 1 || record.version < 2) && !index.isReadOnly {
                // Best effort: the file in place stays valid for sealing; the next unlock tries again.
                try? writeRecovery(publicKey: record.publicKey, keys: [current])
            }
            vault.recoveryPublicKey = record.publicKey
        } catch {
            recoveryProblem("the vault folder's recovery data cannot be read (\(Vault.describe(error))): new items are not covered by the recovery phrase")
        }
    }

    private func recoveryProblem(_ message: String) {
        if vault.recoveryProblem == nil { vault.recoveryProblem = message }
        let shared = ((try? keyStore.syncDeviceID()) ?? nil) != nil
        vault.pendingNotices.append(Notice(message: message, remedy: shared ? .advice(.restoreSharedRecoveryData) : .newRecoveryPhrase))
    }

    /// Present while a `recovery setup` runs (clear, empty): one that outlives it was cut short.
    var interruptedSetupPath: String { keyStore.root + "/recovery-setup.pending" }

    func writeRecovery(publicKey: [UInt8], keys: [DomainKeys]) throws {
        guard let id = try index.vaultID() else {
            throw Nu11Error(.internalError, "the vault has no vault ID")
        }
        let record = try RecoveryRecord.make(vaultID: id, publicKey: publicKey, keys: keys)
        try ProtectedFiles.replaceShredding(record.encoded(), at: recoveryPath)
    }

    /// During a rotation (step 1): the recovery data holds the new keys and the old ones,
    /// so rows re-sealed or not yet re-sealed both open with the phrase at every instant.
    func recoveryBeforeRotation(from olds: [DomainKeys], to new: DomainKeys) throws {
        guard role == .primary, let publicKey = vault.recoveryPublicKey else { return }
        try writeRecovery(publicKey: publicKey, keys: [new] + olds)
    }

    /// After a rotation's commit point: the new keys alone. A failure is a notice (the next
    /// unlock rewrites it).
    func recoveryAfterRotation() {
        guard role == .primary, let publicKey = vault.recoveryPublicKey, let current = try? keys else { return }
        afterCommit("trimming the recovery data to the new keys") { try writeRecovery(publicKey: publicKey, keys: [current]) }
    }

    /// The seal of a new primary-vault item's key; nil for other domains or without a phrase.
    func recoverySeal(itemKey: SecretBytes, id: ItemID, kind: ItemKind, domain: Domain) throws -> [UInt8]? {
        guard domain == .vault, role == .primary, let publicKey = vault.recoveryPublicKey,
              let vaultID = try vault.cachedVaultID ?? index.vaultID() else {
            return nil
        }
        vault.cachedVaultID = vaultID
        let sealer = try vault.recoverySealer.flatMap { $0.publicKey == publicKey ? $0 : nil } ?? RecoverySeal.Sealer(to: publicKey)
        vault.recoverySealer = sealer
        return try sealer.seal(itemKey, associatedData: RecoverySeal.itemAAD(vaultID: vaultID, itemID: id, kind: kind))
    }

    /// `nu11vlt recovery setup`: a new phrase, and a new key generation (FORMAT.md §4.2e): the
    /// domain keys rotate (as `rekey`) with the recovery data sealed to the new phrase only, the
    /// slot records the new data's commitment, and every item key of the primary vault is sealed
    /// to the new phrase. The earlier phrase then opens nothing made after — not even with an
    /// old copy of `recovery.n11r` put back (its binding is under the retired main key, and its
    /// public key is not the one the slot names). `phrase` is given when the TPM's recovery key
    /// is the phrase.
    ///
    /// Bound to a TPM (the phrase is also the TPM's recovery key, FORMAT.md §4.2b): the TPM
    /// recovery wrap of slot 0's TPM secret is re-made for the new phrase in the rotation's
    /// commit, and when this key store holds the TPM's lockout authorization it moves to the new
    /// phrase's value — which needs the current phrase (`currentPhrase`): the TPM keeps no copy.
    public func setUpRecovery(phrase given: SecretBytes? = nil, currentPhrase: SecretBytes? = nil,
                              progress: @escaping (RekeyProgress) -> Void = { _ in }) throws -> RecoverySetup {
        guard role == .primary else {
            throw Nu11Error(.invalidArgument, "a recovery phrase is made with the primary PIN",
                            remedy: .primaryPINOnly)
        }
        guard !index.isReadOnly, let vaultID = try index.vaultID() else {
            throw Nu11Error(.io, "the vault folder cannot be written here, so it cannot take recovery data",
                            remedy: .advice(.writableVault))
        }
        let phrase = given ?? RecoveryKey.generate()
        let publicKey = try RecoverySeal.publicKey(phrase: phrase, vaultID: vaultID)
        let commitment = RecoveryRecord.commitment(vaultID: vaultID, publicKey: publicKey)
        let current = try held
        let lockoutHeld = try keyStore.tpmLockoutHeld()
        var tpmRecovery: [UInt8]?
        if let lockoutHeld {
            guard let secret = current.tpm?.secret, current.slot == 0 else {
                throw Nu11Error(.authenticationFailed, "on a TPM-bound vault a new recovery phrase needs the primary PIN typed in this session",
                                remedy: .advice(.unlockWithPIN))
            }
            if lockoutHeld {
                guard let currentPhrase else {
                    throw Nu11Error(.invalidArgument, "on this TPM vault the recovery phrase is also the TPM's lockout authorization: the current phrase is needed to move it to the new one; nothing was changed",
                                    remedy: .advice(.typeRecoveryPhrase))
                }
                try keyStore.checkLockout(recoveryKey: currentPhrase)
            }
            tpmRecovery = try TPMRecord.sealRecovery(secret, recoveryKey: phrase, deviceKey: keyStore.deviceKey())
        }
        // The marker names the new data's commitment: the next unlock tells whether the new
        // phrase took effect (then finishes) or not (then forgets it; the old one still holds).
        try ProtectedFiles.writeAtomically(commitment, to: interruptedSetupPath)
        // 1. Every item's seal to the new phrase, beside the current one (nothing changes for
        //    the old phrase yet).
        var seals: [(id: ItemID, seal: [UInt8])] = []
        for row in try index.items(domains: [.vault], limit: nil) {
            let itemKey = try keyStore.itemKeyRecord(row.id, domain: .vault).open(domainKey: domainKey(.vault))
            seals.append((row.id, try RecoverySeal.seal(itemKey, to: publicKey,
                                                         associatedData: RecoverySeal.itemAAD(vaultID: vaultID, itemID: row.id, kind: row.kind))))
        }
        try index.setNextRecoverySeals(seals)
        // 2. The rotation seals its key sets to the new phrase only (never the old one): its
        //    first write of recovery.n11r is where the new phrase takes effect.
        vault.recoveryPublicKey = publicKey
        do {
            try vault.maintenance.rotate(to: current.keys.rotated(created: UInt64(max(0, now))).withRecovery(commitment),
                                         progress: progress) { keys in
                try keyStore.resealSlot(current.slot, keys: keys, kek: current.kek, tpmRecovery: tpmRecovery)
                return current.with(keys: keys)
            }
            guard !vault.isLocked else { throw Nu11Error(.io, "the recovery setup did not finish; run it again", remedy: .newRecoveryPhrase) }
            if lockoutHeld == true, let currentPhrase {
                do { try keyStore.moveLockout(from: currentPhrase, to: phrase) } catch {
                    notice("done, but the TPM's lockout authorization is still the old phrase's (\(Vault.describe(error))): the old phrase can still clear the TPM's count of wrong PINs; run the recovery setup again with it")
                }
            }
            try writeRecovery(publicKey: publicKey, keys: [try keys])
            // 3. The new seals become the seals (the sidecars' copies too).
            try finishRecoverySetup(seals)
        } catch {
            // Once recovery.n11r names the new phrase, the phrase is the one in effect: it is
            // shown, with what is left (the next unlock finishes it). Before, nothing changed
            // for the old phrase, and the next unlock forgets the new seals.
            guard let record = try? RecoveryRecord.parse(ProtectedFiles.read(recoveryPath, limit: 4096)),
                  record.publicKey == publicKey else {
                vault.recoveryPublicKey = nil
                throw error
            }
            try? ProtectedFiles.writeAtomically(commitment + [1], to: interruptedSetupPath)  // 1: the phrase was shown
            audit("recovery setup", count: seals.count, detail: "keys rotated; cut short after the new phrase took effect")
            return RecoverySetup(phrase: phrase, sealed: seals.count,
                                 unfinished: "the new phrase is in effect, but the setup was cut short (\(Vault.describe(error))); the next unlock finishes it")
        }
        vault.recoveryProblem = nil
        audit("recovery setup", count: seals.count, detail: "keys rotated")
        return RecoverySetup(phrase: phrase, sealed: seals.count)
    }

    /// The last step of a recovery setup, also run by the unlock after one cut short once its
    /// phrase took effect: the new seals replace the old ones (index and sidecars), the marker goes.
    func finishRecoverySetup(_ seals: [(id: ItemID, seal: [UInt8])]) throws {
        try SetAsideIndexes.destroy(location)
        // The sidecars first: the index's write clears the `next` seals, so a failure between
        // would leave sidecars with the old phrase's seals and nothing to finish them from.
        for (id, seal) in seals { try SidecarSeals.set(seal, for: id, location: location) }
        try index.setRecoverySeals(seals)
        try ProtectedFiles.remove(interruptedSetupPath)
    }

    /// At unlock, a recovery setup an earlier command left (its marker is there): finished when
    /// its phrase took effect (recovery.n11r names the marker's commitment), else forgotten (the
    /// old phrase still holds everything). Whether anyone saw the new phrase is known only when
    /// the command said so (the marker's last byte).
    /// Returns the commitment of the setup it finished, if any.
    @discardableResult
    func resumeRecoverySetup(record: RecoveryRecord?) -> [UInt8]? {
        guard role == .primary, !index.isReadOnly, let marker = try? ProtectedFiles.read(interruptedSetupPath, limit: 64) else { return nil }
        guard marker.count >= 16 else {
            // A marker of an earlier version (empty): whether its phrase took effect is unknown.
            recoveryProblem("a recovery setup was cut short before its new phrase was shown, so no phrase you hold may cover new items")
            return nil
        }
        let commitment = Array(marker.prefix(16))
        do {
            if let record, record.matches(commitment: commitment) {
                let next = try index.nextRecoverySeals()
                try finishRecoverySetup(next.map { (id: $0.key, seal: $0.value) })
                if marker.count < 17 {
                    recoveryProblem("a recovery setup was cut short right after its new phrase took effect, before it was shown: no phrase you hold covers the vault")
                }
                return commitment
            } else {
                try index.clearNextRecoverySeals()
                try ProtectedFiles.remove(interruptedSetupPath)
            }
        } catch {
            notice("a recovery setup cut short could not be finished yet (\(Vault.describe(error))); the next unlock tries again")
        }
        return nil
    }

    /// At `init`: the slot records the recovery data just written (no rotation: nothing was
    /// sealed yet).
    static func commitRecovery(_ store: KeyStore, unlocked: UnlockedKeys, vaultID: ItemID, publicKey: [UInt8]) throws -> UnlockedKeys {
        let keys = unlocked.keys.withRecovery(RecoveryRecord.commitment(vaultID: vaultID, publicKey: publicKey))
        try store.resealSlot(unlocked.slot, keys: keys, kek: unlocked.kek)
        return unlocked.with(keys: keys)
    }

    /// Destroys the recovery data (the duress PIN; `Wipe` does the same by path).
    func destroyRecovery() throws {
        vault.recoveryPublicKey = nil
        try Self.destroyRecovery(location)
    }

    static func destroyRecovery(_ location: VaultLocation) throws {
        let path = location.vaultRoot + "/recovery.n11r"
        if ProtectedFiles.kind(path) == .file { try ProtectedFiles.overwriteAndRemove(path) }
        if ProtectedFiles.exists(location.indexPath) { try VaultIndex(path: location.indexPath).dropRecoverySeals() }
        try SetAsideIndexes.destroy(location)
        // The sidecars' copies (FORMAT.md §2.2), zeroed in place.
        for name in (try? ProtectedFiles.list(location.metaFolder)) ?? [] where name.hasSuffix(".n11m") {
            guard let id = try? ItemID(hex: Maintenance.stem(name)) else { continue }
            try SidecarSeals.set(nil, for: id, location: location)
        }
    }
}
