// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// A vault before its PIN: everything that needs no PIN (paths, info, the sweep, the
/// Skeleton status, wipe, reading settings, creating a vault) and `unlock`, which returns
/// the unlocked `Vault`. The failed-PIN policy — counting, the delay, erase-after — and
/// what a successful unlock does (the Skeleton check-in, the duress action) live here, in
/// one place.
public struct LockedVault: Sendable {
    public let location: VaultLocation
    public let clock: any VaultClock
    /// `recover` opens the vault it rebuilt and finishes it itself (with the phrase's key sets
    /// for album names), before any unlock's `finishRecover` would.
    var recovering = false

    public init(_ location: VaultLocation, clock: any VaultClock = SystemClock()) {
        self.location = location
        self.clock = clock
    }

    public var isInitialized: Bool { presence == .complete }

    /// What is on disk: the whole vault, nothing, or one half of it. A vault whose creation
    /// was cut short counts as none: `create` clears what it left and starts again
    /// (`UnfinishedCreate.swift`).
    public enum Presence: Sendable { case none, complete, vaultOnly, keyStoreOnly }

    public var presence: Presence {
        if creationUnfinished { return .none }
        return switch (FileManager.default.fileExists(atPath: location.indexPath), KeyStore(root: location.keyStoreRoot).exists) {
        case (true, true): .complete
        case (true, false): .vaultOnly
        case (false, true): .keyStoreOnly
        case (false, false): .none
        }
    }

    /// Whether the vault folder holds a vault's own folders or recovery data (an index can be
    /// rebuilt there, FORMAT.md §5.3).
    var looksLikeVaultFolder: Bool {
        ProtectedFiles.kind(location.vaultRoot) == .directory
            && ["Vault", "Meta", "Fade", "Notes", "Backup", "recovery.n11r"].contains { ProtectedFiles.kind(location.vaultRoot + "/" + $0) != nil }
    }

    /// The one error every command gives for a half vault (status, init, unlock agree).
    public var halfVaultError: Nu11Error? {
        switch presence {
        case .vaultOnly:
            Nu11Error(.notFound, "the vault at \(location.vaultRoot) has no key store at \(location.keyStoreRoot); it cannot be opened without it; nothing was changed",
                      remedy: .findMovedKeyStore,
                      item: location.keyStoreRoot)
        case .keyStoreOnly where looksLikeVaultFolder:
            Nu11Error(.notFound, "the vault folder \(location.vaultRoot) has lost its index (index.sqlite); its items are still there; nothing was changed",
                      remedy: .repair, item: location.indexPath)
        case .keyStoreOnly:
            Nu11Error(.notFound, "the key store at \(location.keyStoreRoot) has no vault at \(location.vaultRoot); nothing was changed",
                      remedy: .findMovedVault,
                      item: location.vaultRoot)
        case .none, .complete:
            nil
        }
    }

    /// The shortest PIN the core accepts, in characters (a library caller cannot create a
    /// vault with a one-character PIN either).
    public static let minimumPINLength = 4

    /// Refuses a PIN shorter than `minimumPINLength` characters.
    public static func validateNewPIN(_ pin: SecretBytes) throws {
        let characters = pin.withUnsafeBytes { String(decoding: $0, as: UTF8.self).count }
        guard characters >= minimumPINLength else {
            throw Nu11Error(.invalidArgument, "the PIN is too short (at least \(minimumPINLength) characters)",
                            remedy: .longerPIN)
        }
    }

    /// Creates a new vault: the seed's folders, the index, and a key store whose domain keys
    /// are sealed under `pin`. The PIN minimum and the KDF floor are enforced here.
    @discardableResult
    /// `recoveryPhrase`: the vault folder takes recovery data sealed to it (docs/FORMAT.md §5.2).
    public static func create(at location: VaultLocation, pin: SecretBytes, parameters: KDFParameters,
                              recoveryPhrase: SecretBytes? = nil, settings: Settings = Settings(),
                              clock: any VaultClock = SystemClock(), onNotice: (Notice) -> Void = { _ in }) throws -> LockedVault {
        try validateNewPIN(pin)
        try parameters.validateChosen()
        if LockedVault(location).creationUnfinished { try discardUnfinishedCreation(location) }
        if let half = LockedVault(location).halfVaultError { throw half }
        if FileManager.default.fileExists(atPath: location.indexPath) {
            throw Nu11Error(.alreadyExists, "a vault already exists at \(location.vaultRoot)",
                            remedy: .otherVaultFolder, item: location.vaultRoot)
        }
        // Both places must be folders (or not exist yet) before anything is created, so a
        // refusal leaves nothing behind.
        for folder in [location.vaultRoot, location.keyStoreRoot] where ProtectedFiles.kind(folder).map({ $0 != .directory }) ?? false {
            throw Nu11Error(.invalidArgument, "\(folder) should be a folder but is a file or a symlink; nothing was created",
                            remedy: .moveAwayOrOtherFolder, item: folder)
        }
        if location.vaultRoot.hasPrefix(location.keyStoreRoot + "/") || location.keyStoreRoot.hasPrefix(location.vaultRoot + "/")
            || location.vaultRoot == location.keyStoreRoot {
            throw Nu11Error(.invalidArgument, "the key store must not be inside the vault folder (or the reverse)",
                            remedy: .separateFolders)
        }
        for folder in location.folders { try ProtectedFiles.makeDirectory(folder) }
        let lock = try FileLock(path: location.lockPath)
        // The marker first: whatever happens from here until it is removed, a retry finds a
        // vault it may clear and create again, not a vault (or half of one) that blocks it.
        try ProtectedFiles.makeDirectory(location.keyStoreRoot)
        try ProtectedFiles.writeAtomically([], to: KeyStore(root: location.keyStoreRoot).creationMarker)
        var (store, unlocked) = try KeyStore.create(root: location.keyStoreRoot, pin: pin, parameters: parameters,
                                          created: UInt64(max(0, clock.wallTime())))
        var state = DeviceState(now: 0)
        _ = EffectiveTime.advance(&state, clock: clock)
        state.settingsSaved = true
        try store.saveState(state)
        try store.saveSettings(settings, tagKey: Vault.settingsKey(unlocked.keys))
        let index = try VaultIndex(path: location.indexPath)
        try Pairing.bind(location, keyStore: store, index: index)
        if let recoveryPhrase, let id = try index.vaultID() {
            let record = try RecoveryRecord.make(vaultID: id, publicKey: RecoverySeal.publicKey(phrase: recoveryPhrase, vaultID: id),
                                                 keys: [unlocked.keys])
            try ProtectedFiles.replaceShredding(record.encoded(), at: location.vaultRoot + "/recovery.n11r")
            unlocked = try Profiles.commitRecovery(store, unlocked: unlocked, vaultID: id, publicKey: record.publicKey)
        }
        try Vault.applyBackupExclusion(location, settings: settings)
        try SyncIgnore.ensure(location)
        try AuditTrail.append([AuditEntry(time: state.latestSeen, event: "init")], keys: unlocked.keys, keyStore: store,
                              maxBytes: Settings().logMaxKiB << 10, now: state.latestSeen)
        try AuditTrail.writeDecoy(keyStore: store, now: state.latestSeen)
        try store.writeEscrowDecoy()
        try store.writeSecurityKeyDecoy()
        // The commit point: without the marker the vault is complete. Removed but not yet
        // durable (its folder's fsync failed), it is complete all the same: done, with a notice.
        do { try ProtectedFiles.remove(store.creationMarker) } catch let error as Nu11Error where error.tookEffect {
            onNotice(Notice(message: "done, but the new vault may not survive a power cut yet (\(error.message))"))
        }
        withExtendedLifetime(lock) {}
        return LockedVault(location, clock: clock)
    }

    /// What can be said without the PIN.
    public func info() throws -> VaultInfo {
        let store = KeyStore(root: location.keyStoreRoot)
        let initialized = isInitialized
        let kdf = initialized ? try store.readMaster().parameters : nil
        return VaultInfo(vaultPath: location.vaultRoot, keyStorePath: location.keyStoreRoot, initialized: initialized,
                         kdfIterations: kdf?.iterations, kdfMemoryMiB: kdf?.memoryMiB,
                         backupsExcluded: initialized ? BackupExclusion.isExcluded(location.vaultRoot) : nil)
    }

    /// The settings (readable without the PIN).
    public func settings() throws -> (settings: Settings, damaged: Bool) {
        guard isInitialized else {
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)", remedy: .createVault)
        }
        return try KeyStore(root: location.keyStoreRoot).loadSettings()
    }

    /// Takes the vault's lock, checks the pair and runs the gate (clock, Skeleton Switch,
    /// recovery, fade sweep); `body` runs with the lock held.
    func gated<T>(onWait: () -> Void, _ body: (FileLock, KeyStore, VaultIndex, DeviceState, GateReport) throws -> T) throws -> T {
        guard isInitialized else {
            if let half = halfVaultError { throw half }
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)", remedy: .createVaultOrPointAtIt, item: location.vaultRoot)
        }
        let lock = try FileLock(path: location.lockPath, onWait: onWait)
        let keyStore = KeyStore(root: location.keyStoreRoot)
        let index = try VaultIndex(path: location.indexPath)
        try Pairing.verify(location, keyStore: keyStore, index: index)
        let (state, report) = try Gate.run(location, keyStore: keyStore, index: index, clock: clock)
        return try body(lock, keyStore, index, state, report)
    }

    /// The gate alone (for `sweep`, `status` and commands that need no PIN).
    @discardableResult
    public func sweep(onWait: () -> Void = {}) throws -> GateReport {
        guard isInitialized else { return GateReport(now: clock.wallTime()) }
        return try gated(onWait: onWait) { _, _, _, _, report in report }
    }

    /// What the app's unlock screen shows, after the gate: the wrong PINs in a row and the
    /// seconds until a PIN may be tried again (0 when it may be now).
    public struct PINStatus: Sendable, Equatable {
        public var failures: Int
        public var secondsLeft: Double
    }

    public func pinStatus(onWait: () -> Void = {}) throws -> PINStatus {
        guard isInitialized else { return PINStatus(failures: 0, secondsLeft: 0) }
        return try gated(onWait: onWait) { _, _, _, state, report in
            PINStatus(failures: state.failures, secondsLeft: max(0, state.lockedUntil - report.now))
        }
    }

    /// Time left on the Skeleton Switch (runs the gate, which may fire the switch).
    public func skeletonStatus() throws -> SkeletonStatus {
        try gated(onWait: {}) { _, _, _, state, report in
            guard let s = state.skeleton else { return SkeletonStatus(enabled: false) }
            return SkeletonStatus(enabled: true, interval: DurationText.format(s.interval),
                                  lastCheckin: Date(timeIntervalSince1970: s.lastCheckin),
                                  deadline: Date(timeIntervalSince1970: s.deadline),
                                  secondsLeft: max(0, Int(s.deadline - report.now)), secure: s.secure)
        }
    }

    /// Wipes the vault without the PIN (a thief could delete the files anyway; what matters
    /// is that the keys are gone for good). Half a vault is wiped only with its vault ID in
    /// `confirmedID` (see `checkHalfWipe`).
    public func wipe(secure: Bool, confirmedID: String? = nil, onWait: () -> Void = {}, progress: (Int, Int) -> Void = { _, _ in }) throws {
        guard presence != .none else {
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)", remedy: .checkFolders)
        }
        try checkHalfWipe(confirmedID: confirmedID)
        // A key store left without its vault has no vault folder to hold the lock in.
        let lock = presence == .keyStoreOnly && ProtectedFiles.kind(location.vaultRoot) == nil
            ? nil : try FileLock(path: location.lockPath, onWait: onWait)
        defer { withExtendedLifetime(lock) {} }
        if isInitialized {
            try Pairing.verify(location, keyStore: KeyStore(root: location.keyStoreRoot), index: VaultIndex(path: location.indexPath))
        }
        try Wipe.run(location, secure: secure, progress: progress)
    }

    /// Unlocks with `pin` already in hand (the desktop app, which ran the gate when it showed
    /// its prompt): one gate run under the vault's lock, then the attempt.
    public func unlock(pin: SecretBytes, onWait: () -> Void = {}) throws -> Vault {
        try open(pin: pin, onWait: onWait, reported: [], report: { _ in })
    }

    private func open(pin: SecretBytes, onWait: () -> Void, reported: [String], report: (GateReport) -> Void) throws -> Vault {
        try open(attempt: { try $0.unlock(pin: pin) }, onWait: onWait, reported: reported, report: report)
    }

    /// Runs the gate, then asks `readPIN` (so no prompt appears while a delay runs or before
    /// expired items are gone), then unlocks. Wrong PINs are counted across processes, and
    /// counted *before* the PIN is tried, so killing the process mid-attempt still counts.
    ///
    /// The vault's lock is not held while a person types: the gate runs under the lock, the
    /// lock is released for the prompt, then taken again and the gate runs once more (another
    /// command may have changed the state meanwhile) before the PIN is tried. A command left
    /// at its prompt therefore never holds up a `sweep` timer or the desktop app.
    public func unlock(onWait: () -> Void = {}, report: (GateReport) -> Void,
                       readPIN: () throws -> SecretBytes) throws -> Vault {
        let first = try gated(onWait: onWait) { _, _, _, gateState, gateReport in
            report(gateReport)
            try Gate.checkLockout(gateState, now: gateReport.now)
            return gateReport
        }
        let pin = try readPIN()
        return try open(pin: pin, onWait: onWait, reported: first.warnings, report: report)
    }

    /// The gate under the vault's lock (what it finds that `reported` already said is left
    /// out of `report`), then one attempt (a PIN, a security key) and the session's start.
    func open(attempt opening: (KeyStore) throws -> UnlockedKeys, bySecurityKey: Bool = false, onWait: () -> Void,
              reported: [String], report: (GateReport) -> Void) throws -> Vault {
        try gated(onWait: onWait) { lock, keyStore, index, gateState, gateReport in
            var fresh = gateReport
            fresh.warnings.removeAll { reported.contains($0) }
            if !fresh.warnings.isEmpty || !fresh.shredded.isEmpty { report(fresh) }
            var state = gateState
            let now = gateReport.now
            try Gate.checkLockout(state, now: now)
            let loaded = try keyStore.loadSettings().settings
            var (unlocked, onDisk) = try attempt(opening, bySecurityKey: bySecurityKey, keyStore: keyStore, state: state, now: now, settings: loaded)
            var lateNotice: String?
            // The TPM's counter was gone: the correct PIN defines it again; the state is then written.
            var counterRestored = false
            if gateReport.counterMissing {
                do { counterRestored = try keyStore.restoreCounter() } catch {
                    lateNotice = "the TPM's counter of the device state could not be defined again (\(Vault.describe(error))): the next unlock tries again"
                }
            }
            // A setting that loosens a protection counts only when this vault saved the file
            // (its tag verifies under this vault's key); a forged or foreign one is not applied.
            var settingsNotice: String?
            let (settings, reverted) = loaded.effective(under: Vault.settingsKey(unlocked.keys))
            // Only under the primary PIN: the settings are the primary vault's, so the backup and
            // duress vaults can never verify their tag, and a warning there would show an onlooker
            // that another PIN is in use.
            if !reverted.isEmpty && unlocked.keys.role == .primary {
                let kept = reverted.map { "\($0) = \((try? settings.value($0)) ?? "")" }.joined(separator: ", ")
                settingsNotice = "the settings file was not saved with this PIN's vault (changed by another program?): its looser \(reverted.joined(separator: ", ")) not applied (\(kept) apply); set them again to change them"
            } else if unlocked.keys.role == .primary && !loaded.authenticated(under: Vault.settingsKey(unlocked.keys)) {
                // Nothing looser than the defaults, but not this vault's either: stricter choices
                // the owner made may have been reset to the defaults (issue 55's review).
                settingsNotice = "the settings file does not carry this vault's tag (changed by another program, or saved before tags): the values in use may not be the ones you chose; set them again to seal them"
            }
            if unlocked.keys.role == .primary, unlocked.tpm?.skeleton != nil, let skeleton = state.skeleton, !index.isReadOnly {
                // The check-in moves the TPM's deadline too.
                do { unlocked = try keyStore.setSkeletonArmed(true, primary: unlocked, interval: skeleton.interval) } catch {
                    lateNotice = "the Skeleton check-in could not be recorded in the TPM (\(Vault.describe(error))): its deadline on the TPM's clock did not move"
                }
            }
            // Under the primary PIN only, like the settings notice: the owner learns that
            // someone (or a slip) tried wrong PINs since the last unlock.
            let failedBefore = unlocked.keys.role == .primary ? state.failures : 0
            state.failures = 0
            state.lockedUntil = 0
            if unlocked.keys.role == .primary {
                state.duressAttempts = nil
                state.duressLockedUntil = nil
                if var skeleton = state.skeleton {
                    skeleton.lastCheckin = now  // every primary unlock checks in
                    state.skeleton = skeleton
                }
            }
            if state != onDisk || gateReport.counterMissing {
                do { try keyStore.saveState(state) } catch {
                    lateNotice = "the device state could not be saved (\(Vault.describe(error))): the wrong-PIN count or the Skeleton check-in is not recorded"
                }
            }
            if !index.isReadOnly {
                for folder in location.folders { try ProtectedFiles.makeDirectory(folder) }
                // The folder's backup markers follow the primary's choice only: under another PIN
                // the primary's `backup.allow` cannot be verified (it would read as the default,
                // excluded), and markers that changed with the PIN in use would tell it.
                if unlocked.keys.role == .primary { try Vault.applyBackupExclusion(location, settings: settings) }
                // Under every PIN alike (the same file whichever PIN opened the vault).
                try SyncIgnore.ensure(location)
            }
            let vault = Vault(location: location, keyStore: keyStore, index: index, unlocked: unlocked, lock: lock,
                              state: state, settings: settings, now: now, clock: clock)
            if failedBefore > 0 {
                let what = failedBefore == 1 ? "1 wrong PIN was" : "\(failedBefore) wrong PINs were"
                vault.pendingNotices.append(Notice(message: "\(what) typed since the last unlock (the audit log says when)"))
            }
            if let lateNotice { vault.pendingNotices.append(Notice(message: lateNotice)) }
            if let settingsNotice { vault.pendingNotices.append(Notice(message: settingsNotice)) }
            vault.profiles.loadRecovery()
            try vault.maintenance.resumeRotation()
            if unlocked.keys.role == .duress { try vault.profiles.runDuress() } else { vault.maintenance.backfillSidecars() }
            if unlocked.keys.role == .primary && !recovering { vault.maintenance.finishRecover() }
            // A shared vault: what the other devices added comes in (FORMAT.md § 9.6).
            if unlocked.keys.role == .primary && !recovering && !index.isReadOnly { vault.devices.adoptAtUnlock() }
            vault.auditUnlock()
            vault.anchorLog()
            if gateReport.counterAhead {
                vault.audit("state counter ahead", detail: "the TPM's counter was ahead of the device state; nothing was destroyed and the state was written again")
            }
            if gateReport.counterMissing {
                vault.audit("TPM counter missing", detail: counterRestored
                    ? "the TPM's counter of the device state was gone; nothing was destroyed, it was defined again and the state written"
                    : "the TPM's counter was behind the device state or could not be defined again; nothing was destroyed")
            }
            if vault.maintenance.contentRotationPending {
                vault.pendingNotices.append(Notice(message: "an interrupted content re-encryption has items left", remedy: .finishContentRekey))
            }
            if vault.maintenance.rotationDue && !index.isReadOnly {
                do {
                    let report = try vault.maintenance.rekey()
                    vault.audit("rekey", count: report.keyRecords, detail: "keys.rotate_days")
                } catch {
                    vault.pendingNotices.append(Notice(message: "the keys are due for rotation (keys.rotate_days) but it failed (\(Vault.describe(error))); the next unlock tries again"))
                }
            }
            return vault
        }
    }

    /// One attempt (a PIN, a security key), counted before it is tried. Returns the keys and
    /// the state as it is on disk now.
    private func attempt(_ opening: (KeyStore) throws -> UnlockedKeys, bySecurityKey: Bool, keyStore: KeyStore, state: DeviceState,
                         now: Double, settings: Settings) throws -> (UnlockedKeys, DeviceState) {
        var counted = state
        counted.failures += 1
        counted.lockedUntil = now + DeviceState.delay(afterFailures: counted.failures)
        // Where the key store cannot be written (full or read-only disk) the attempt cannot be
        // counted; it goes ahead, which gives nothing beyond copying the key store (see
        // docs/THREAT-MODEL.md).
        let recorded: Bool
        do {
            try keyStore.saveState(counted)
            recorded = true
        } catch let error as Nu11Error where error.code == .io && !error.tookEffect {
            recorded = false
        }
        do {
            return (try opening(keyStore), recorded ? counted : state)
        } catch let error as Nu11Error where error == .wrongPIN || error == .wrongSecurityKey {
            let event = error == .wrongPIN ? "wrong PIN" : "wrong security key"
            DeviceJournal.record(keyStore, [AuditEntry(time: now, event: event, detail: "\(counted.failures) in a row")], now: now)
            if settings.eraseAfterFailures > 0 && counted.failures >= settings.eraseAfterFailures {
                try Wipe.run(location, secure: settings.deletionMode == .secure)
                throw Nu11Error(.authenticationFailed,
                                "\(error.message); after \(counted.failures) failed unlocks the vault was erased",
                                remedy: .advice(.eraseAfter(failures: settings.eraseAfterFailures)))
            }
            throw error
        } catch let error as Nu11Error where recorded && (error.code == .lockedOut || error.code == .tpm || bySecurityKey) {
            // The TPM refused before judging the PIN (locked out, absent, another machine's), or
            // a security key was absent, untouched, or refused its own PIN (the key counts that
            // itself): this was no attempt at the vault's secret, so it is not counted.
            try? keyStore.saveState(state)
            throw error
        }
    }
}
