// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// The backup vault (a second, complete vault behind the backup PIN) and the duress PIN.
///
/// Which vault a fade item belongs to is not written anywhere in the clear: each vault sees
/// the fade rows whose sealed metadata opens under its own fade key, and nothing else.
extension Profiles {
    /// How many items a backup vault holds (what a new backup PIN would destroy): rows in
    /// the Backup domain and fade rows this vault cannot open. Primary PIN only.
    public func backupVaultItemCount() throws -> Int {
        guard vault.isPrimary else { throw Nu11Error.wrongPIN }
        return try index.count(domains: [.backup]).items + index.items(domains: [.fade], limit: Int.max).filter { !isVisible($0) }.count
    }

    /// Sets (or replaces) the backup PIN. Only the primary PIN may do this. A backup vault
    /// that existed before is destroyed (its keys are replaced), and so is the duress PIN.
    public func setBackupPIN(_ pin: SecretBytes) throws {
        guard vault.isPrimary else { throw Nu11Error.wrongPIN }
        guard pin.count >= 4 else {
            throw Nu11Error(.invalidArgument, "the PIN or passphrase is too short", remedy: .longerPIN)
        }
        let backup = DomainKeys.generate(role: .backup, created: UInt64(max(0, now)))
        let primary = try keys
        try commitStep("setting the backup PIN") { try keyStore.setBackupSlot(keys: backup, pin: pin) }  // the commit point
        // After it, nothing fails the command: the backup PIN opens. What is left is cleanup.
        afterCommit("starting the new backup vault's log") {
            // The new backup vault's log takes the place of the decoy (or of a former backup's log).
            try keyStore.shredLogs(except: AuditTrail.name(primary))
            try keyStore.writeEscrowDecoy()  // the former duress PIN is gone with its slot
            try AuditTrail.append([AuditEntry(time: now, event: "init")], keys: backup, keyStore: keyStore,
                                  maxBytes: settings.logMaxKiB << 10, now: now)
        }
        audit("backup PIN set", detail: "a new, empty backup vault")
        // Everything of a former backup vault is unreadable now: shred its leftovers.
        do {
            try shred(rows: index.items(domains: [.backup], limit: Int.max)
                + index.items(domains: [.fade], limit: Int.max).filter { !isVisible($0) }, albumsOf: .backup)
        } catch {
            notice("done, but the former backup vault's items could not all be shredded (\(Vault.describe(error))); their keys are gone, so they no longer open, and setting the backup PIN again shreds what is left")
        }
    }

    /// Sets the duress PIN. It must be set while unlocked with the backup PIN, since it
    /// opens the backup vault (after silently destroying the primary one).
    ///
    /// Someone who holds only the backup PIN must not learn the primary PIN (or that a
    /// primary vault exists) by trying candidates here: a candidate that opens another slot
    /// is refused silently with the same answer as a success, and every attempt counts
    /// toward a growing wait that only a primary unlock resets.
    public func setDuressPIN(_ pin: SecretBytes) throws {
        guard role == .backup else {
            throw Nu11Error(.invalidArgument, "the duress PIN is set while unlocked with the backup PIN",
                            remedy: .duressNeedsBackupPIN)
        }
        guard pin.count >= 4 else {
            throw Nu11Error(.invalidArgument, "the PIN or passphrase is too short", remedy: .longerPIN)
        }
        if let until = state.duressLockedUntil, now < until {
            try Gate.checkLockout(DeviceState.lockout(failures: state.duressAttempts ?? 0, until: until), now: now)
        }
        let attempts = (state.duressAttempts ?? 0) + 1
        state.duressAttempts = attempts
        state.duressLockedUntil = now + DeviceState.delay(afterFailures: attempts)
        try saveState()  // counted before the PIN is tried
        let own = try keys
        var kek: SecretBytes?
        // The master record's write is the commit point: once it is renamed into place the
        // duress PIN is armed, and a failing folder fsync after it is "done, but …", never a
        // failure (the user would believe no duress PIN is set).
        try commitStep("setting the duress PIN") { kek = try keyStore.sealFreeSlot(2, keys: own.withRole(.duress), pin: pin, silent: true) }
        // The duress slot's KEK, kept for this backup vault's rotations (a decoy when the PIN
        // was not free: the file is written the same way whatever the answer). Best effort:
        // without it a rotation leaves a forward record for the duress PIN, as before.
        if let kek { try? keyStore.writeEscrow(kek: kek, for: own) } else { try? keyStore.writeEscrowDecoy() }
        // The duress slot holds the current keys now: the chain of past rotations that led an
        // older duress slot here is not needed any more (removed whatever the answer above,
        // so the files do not tell it either).
        afterCommit("removing the old rotation records") { try keyStore.removeForwards(leadingTo: own) }
    }

    /// Crypto-shreds rows that this vault cannot open (keys first), with their files.
    func shred(rows: [ItemRow], albumsOf domain: Domain) throws {
        let shredder = vault.items.shredder()
        for row in rows { try shredder.shred(row) }
        if !rows.isEmpty { try index.deleteItems(rows.map(\.id)) }
        for album in try index.albums(domains: [domain]) {
            try index.deleteAlbum(album.id)
            _ = rmdir(location.albumFolder(album.id))
        }
        let gone = Set(rows.map(\.id))
        if state.fade.contains(where: { gone.contains($0.id) }) {
            state.fade.removeAll { gone.contains($0.id) }
            try saveState()
        }
    }

    /// Duress: silently destroy the primary vault — its slot (so the primary PIN opens
    /// nothing), its item keys, files, rows and albums, and its fade items — then go on as
    /// the backup vault. Nothing is printed.
    func runDuress() throws {
        try destroyRecovery()  // first: with the phrase it would open the primary vault
        try keyStore.clearSlot(0)
        // The primary's gallery listing (dates and IDs, sealed under its keys) goes too.
        try keyStore.destroyListingCache()
        try keyStore.shredLogs(except: AuditTrail.name(keys))  // the primary's log goes with it
        try AuditTrail.writeDecoy(keyStore: keyStore, maxBytes: settings.logMaxKiB << 10, now: now)
        state.skeleton = nil
        try saveState()
        try shred(rows: index.items(domains: [.vault], limit: Int.max)
            + index.items(domains: [.fade], limit: Int.max).filter { !isVisible($0) }, albumsOf: .vault)
    }
}
