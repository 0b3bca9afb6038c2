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
}

/// The recovery phrase (docs/FORMAT.md §5.2): the vault folder carries the primary vault's
/// domain keys and every item key sealed to the phrase's public key, so the folder and the
/// phrase alone rebuild a key store (`nu11vlt recover`). Only the primary vault takes part:
/// the backup vault stays undetectable, and Fade items are meant to disappear.
extension Profiles {
    var recoveryPath: String { location.vaultRoot + "/recovery.n11r" }

    /// Reads the recovery data after unlock: the public key new items are sealed to, if the
    /// current keys made it. A stale key-set list (a rotation finished since) is rewritten;
    /// data the keys did not make is not used, with a notice.
    func loadRecovery() {
        vault.recoveryPublicKey = nil
        guard role == .primary, ProtectedFiles.exists(recoveryPath) else { return }
        do {
            let record = try RecoveryRecord.parse(ProtectedFiles.read(recoveryPath, limit: 4096))
            let current = try keys
            guard record.vaultID == (try index.vaultID()), record.mentions(current) else {
                vault.pendingNotices.append(Notice(message: "the vault folder's recovery data was not made by this vault's keys, so new items are not covered by the recovery phrase",
                                             remedy: .newRecoveryPhrase))
                return
            }
            // A list of sets bound to the current keys is a finished rotation's: trim it. One
            // whose first set is newer is a rotation in progress: `resumeRotation` finishes it.
            if record.isBound(to: current) && record.sets.count > 1 && !index.isReadOnly {
                try writeRecovery(publicKey: record.publicKey, keys: [current])
            }
            vault.recoveryPublicKey = record.publicKey
        } catch {
            vault.pendingNotices.append(Notice(message: "the vault folder's recovery data cannot be read (\(Vault.describe(error))): new items are not covered by the recovery phrase",
                                         remedy: .newRecoveryPhrase))
        }
    }

    func writeRecovery(publicKey: [UInt8], keys: [DomainKeys]) throws {
        guard let id = try index.vaultID() else {
            throw Nu11Error(.internalError, "the vault has no vault ID")
        }
        let record = try RecoveryRecord.make(vaultID: id, publicKey: publicKey, keys: keys)
        try ProtectedFiles.writeAtomically(record.encoded(), to: recoveryPath)
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

    /// `nu11vlt recovery setup` (and `init`): a new phrase, the domain keys and every item key
    /// of the primary vault sealed to it. Replaces an earlier phrase (which then opens nothing
    /// made after; snapshots taken before still open with it). `phrase` is given when the
    /// TPM's recovery key is the phrase.
    public func setUpRecovery(phrase given: SecretBytes? = nil) throws -> RecoverySetup {
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
        try writeRecovery(publicKey: publicKey, keys: [try keys])
        vault.recoveryPublicKey = publicKey
        var seals: [(id: ItemID, seal: [UInt8])] = []
        for row in try index.items(domains: [.vault], limit: nil) {
            let itemKey = try keyStore.itemKeyRecord(row.id).open(domainKey: domainKey(.vault))
            seals.append((row.id, try RecoverySeal.seal(itemKey, to: publicKey,
                                                         associatedData: RecoverySeal.itemAAD(vaultID: vaultID, itemID: row.id, kind: row.kind))))
        }
        try index.setRecoverySeals(seals)
        audit("recovery setup", count: seals.count)
        return RecoverySetup(phrase: phrase, sealed: seals.count)
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
    }
}
