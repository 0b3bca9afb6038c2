// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What runs at the start of every command, before any PIN prompt, with only the
/// device-bound key: the clock, the Skeleton Switch, the fade sweep and the failed-PIN
/// policy.
///
/// Policies (documented in docs/THREAT-MODEL.md):
/// * Time is `EffectiveTime`: within a boot it is measured with CLOCK_BOOTTIME, so setting
///   the wall clock changes nothing; across boots it never runs backwards. A clock anomaly
///   alone never destroys anything: it is reported, and time is held.
/// * A missing or altered device state (while the key store exists) is tampering: fade
///   items are shredded (those whose key record says Fade) and PIN entry waits one hour,
///   as after nine wrong PINs. Deleting or editing the file can only make things stricter.
/// * Only the sealed fade schedule condemns an item; the index alone never does.
/// * The Skeleton Switch fires when its interval passed without a primary check-in, or
///   when it is armed (flag bound into the master record's slot 0) and its state is missing
///   or altered. A master record that cannot be read stops the command (fails closed).
public struct GateReport: Sendable {
    public var now: Double
    public var shredded: [String] = []
    public var warnings: [String] = []
    /// The TPM's counter was ahead of the device state (see `KeyStore.StateLoad.counterAhead`):
    /// nothing was destroyed; the next PIN attempt writes the state again.
    public var counterAhead = false
    /// The TPM's counter was gone (or behind the state by more than one; see
    /// `KeyStore.StateLoad.counterMissing`): handled as `counterAhead`; the next correct PIN
    /// defines the counter again.
    public var counterMissing = false
    /// The state is not in step with the TPM's counter: nothing is destroyed, fade items and
    /// the software Skeleton check wait for the PIN, and the gate writes nothing.
    var unsynced: Bool { counterAhead || counterMissing }
}

enum Gate {
    /// Counts gate runs in the task that installs it (`Gate.$runs.withValue`): the seam
    /// through which tests check that an unlock runs the gate once.
    @TaskLocal static var runs: KDFRunCounter?

    /// Runs the checks; the caller holds the vault lock. Writes the device state only when
    /// it changed (so read commands work on a read-only or full disk).
    static func run(_ location: VaultLocation, keyStore: KeyStore, index: VaultIndex,
                    clock: any VaultClock) throws -> (DeviceState, GateReport) {
        runs?.increment()
        let armed = try keyStore.readMaster().skeletonArmed
        var report = GateReport(now: clock.wallTime())
        var state: DeviceState
        var tampered = false
        var original: DeviceState?
        var missed: UInt64 = 0
        switch try keyStore.loadState() {
        case .loaded(let loaded):
            state = loaded
            original = loaded
        case .counterAhead(let loaded, let count):
            state = loaded
            original = loaded
            missed = count
            report.counterAhead = true
        case .counterMissing(let loaded):
            state = loaded
            original = loaded
            report.counterMissing = true
        case .missing, .damaged:
            state = DeviceState(now: 0)
            tampered = true
        }
        let (now, clockWarning) = EffectiveTime.advance(&state, clock: clock)
        report.now = now
        if let clockWarning { report.warnings.append(clockWarning) }
        if report.counterAhead {
            // Anyone who may use the TPM can advance its counter, and an older copy of the state
            // looks the same: an unauthenticated signal, so it destroys nothing. It fails closed:
            // what the older copy says is not restored (each missed write counts as a wrong PIN),
            // fade items and the Skeleton Switch wait for the PIN (the TPM's own clock still
            // enforces the switch), and the state is written again only by the next PIN attempt.
            state.failures += Int(min(missed, 1000))
            state.lockedUntil = max(state.lockedUntil, now + DeviceState.delay(afterFailures: state.failures))
            report.warnings.append("the TPM's counter is \(missed) ahead of the device state (an older copy was put back, or another program advanced it): nothing was destroyed; fade items and the Skeleton Switch wait for the PIN, which writes the state again")
        }
        if report.counterMissing {
            // Anyone who may use the TPM can undefine its counter (or define another in its
            // place): the same unauthenticated signal, the same rule. Nothing is destroyed and
            // nothing is wiped before the PIN; the correct PIN defines the counter again.
            report.warnings.append("TPM counter missing: the TPM's counter of the device state is gone or behind the state (another program undefined it?): nothing was destroyed; fade items and the Skeleton Switch wait for the PIN, which defines the counter again")
        }
        if tampered {
            state.failures = 9
            state.lockedUntil = now + DeviceState.delay(afterFailures: 9)
            report.warnings.append("the device state was missing or altered: fade items were destroyed and PIN entry waits 1 hour")
        }
        try settingsCheck(keyStore: keyStore, state: &state, now: now, report: &report)
        // Armed in the TPM: the TPM's own clock decides, whatever the system clock or restored files say.
        if armed, try keyStore.hardwareSkeletonExpired() {
            try Wipe.run(location, secure: state.skeleton?.secure ?? false)
            throw Nu11Error(.notFound, "the Skeleton Switch fired (no check-in before its deadline on the TPM's clock, or more TPM restarts since the last one than it allows): the vault was wiped",
                            remedy: .nothingRecoverable)
        }
        if !armed && state.skeleton != nil {
            // The master record (the commit point of arming and disarming) says off: an arm that
            // failed before its commit, or a disarm whose state write failed after it. An
            // attacker who clears the flag gains nothing: slot 0 then opens for no one.
            state.skeleton = nil
        }
        if !report.unsynced { try skeletonCheck(location, armed: armed, state: tampered ? nil : state, now: now) }

        // Key records as loose files (a key store from before key packs, or a record put back
        // from quarantine) move into their packs before anything reads them.
        // Where the key store cannot be written (a read-only mount, a full disk), the records
        // are read where they are, and every write fails with its own error.
        var loose: (adopted: Int, refused: [String]) = (0, [])
        do {
            loose = try keyStore.adoptLooseItemKeys()
        } catch let error as Nu11Error where error.code == .io {
            report.warnings.append("the key store's loose key records (items/) could not move into key packs, so they are read where they are (\(error.message))")
        }
        if let first = loose.refused.first {
            report.warnings.append("\(loose.refused.count) file(s) in the key store's items/ folder are not key records of the item they are named after and were left there (e.g. \(first))")
        }
        try recoverPending(location, keyStore: keyStore, index: index, state: &state)
        let stuck = sweepLeftovers(location, keyStore: keyStore)
        if !stuck.isEmpty {
            report.warnings.append("\(stuck.count) temp file(s) of an interrupted command could not be removed (e.g. \(stuck[0]))")
        }

        // The fade sweep: only the sealed schedule condemns an item. When the schedule itself
        // was deleted or altered, the fade items are condemned — those whose key record says
        // Fade (an edited index row cannot condemn a permanent item).
        let scheduled = Dictionary(state.fade.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var expired = Set(state.fade.filter { $0.deadline <= now }.map(\.id))
        if tampered {
            for id in try index.itemIDs(domain: .fade) where (try? keyStore.itemKeyRecord(id, domain: .fade).domain) == .fade {
                expired.insert(id)
            }
        }
        if report.unsynced { expired.removeAll() }  // the read-time check still refuses them
        if !expired.isEmpty && index.isReadOnly {
            // Nothing can be destroyed on a read-only vault; expired items stay unreadable
            // (the read-time check refuses them) until the vault is writable again.
            report.warnings.append("\(expired.count) fade item(s) expired but the vault is read-only: they cannot be destroyed now and will not open")
            expired.removeAll()
        }
        if !expired.isEmpty {
            // Keys first (that is the destruction), then files, then rows. Only the Fade copy of
            // each: a deadline that outlived a cancelled fade (the item moved back under the same
            // ID, FORMAT.md §4.6) never reaches the permanent item, whose row stays.
            let shredder = Shredder(location, keyStore: keyStore, secure: Shredder.secureMode(keyStore))
            var kept = Set<ItemID>()
            for id in expired {
                try shredder.shred(id: id, kind: scheduled[id].flatMap { ItemKind(rawValue: $0.kind) }, onlyIn: .fade, album: nil)
                if let row = try index.item(id), row.domain != .fade { kept.insert(id) }
            }
            try index.deleteItems(Array(expired.subtracting(kept)))
            state.fade.removeAll { expired.contains($0.id) }
            report.shredded = expired.subtracting(kept).map(\.hex).sorted()
        }
        var journal = report.warnings.map { AuditEntry(time: now, event: "warning", detail: $0) }
        if !report.shredded.isEmpty {
            journal.append(AuditEntry(time: now, event: "fade expired", count: report.shredded.count, items: report.shredded))
        }
        DeviceJournal.record(keyStore, journal, now: now)
        if state != original && !report.unsynced {
            do { try keyStore.saveState(state) } catch let error as Nu11Error where error.code == .io && onlyTimeChanged(state, original) {
                // Only the time anchor changed; a read-only or full key store keeps the old one.
                report.warnings.append("the device state could not be saved (\(error.message))")
            }
        }
        return (state, report)
    }

    /// Whether `state` differs from `original` only in its time anchor.
    static func onlyTimeChanged(_ state: DeviceState, _ original: DeviceState?) -> Bool {
        guard let original else { return false }
        var same = state
        same.boot = original.boot
        same.latestSeen = original.latestSeen
        same.settingsSaved = original.settingsSaved
        return same == original
    }

    /// A settings file that was saved and is now missing or altered is tampering (it could
    /// turn `pin.erase_after` off): PIN entry waits as after nine wrong PINs, once per
    /// event; a damaged file is moved aside, and the defaults apply until the PIN owner
    /// saves settings again (a settings change, or the repairing check).
    static func settingsCheck(keyStore: KeyStore, state: inout DeviceState, now: Double, report: inout GateReport) throws {
        switch try keyStore.settingsStatus() {
        case .present:
            if state.settingsSaved != true { state.settingsSaved = true }
            return
        case .missing:
            guard state.settingsSaved == true else { return }
        case .damaged:
            try keyStore.setAsideDamagedSettings()
        }
        state.settingsSaved = false
        state.failures = max(state.failures, 9)
        state.lockedUntil = max(state.lockedUntil, now + DeviceState.delay(afterFailures: 9))
        report.warnings.append("the settings file was missing or altered: PIN entry waits 1 hour, and the default settings apply until you save settings again")
    }

    /// The Skeleton Switch fires when the interval passed without a primary check-in — or,
    /// when the switch is armed (flag in the master record) and the state that holds the
    /// last check-in is missing or altered. It wipes before anything else and says so.
    static func skeletonCheck(_ location: VaultLocation, armed: Bool, state: DeviceState?, now: Double) throws {
        let reason: String
        let secure: Bool
        if let skeleton = state?.skeleton {
            guard now > skeleton.deadline else { return }
            reason = "no check-in for \(DurationText.format(skeleton.interval))"
            secure = skeleton.secure
        } else if armed && (state == nil || state?.skeleton == nil) {
            reason = "its state was deleted or altered"
            secure = false
        } else {
            return
        }
        try Wipe.run(location, secure: secure)
        throw Nu11Error(.notFound, "the Skeleton Switch fired (\(reason)): the vault was wiped",
                        remedy: .nothingRecoverable)
    }

    /// Finishes what a crash interrupted: an import without its index row is undone (the
    /// item is absent), a delete is completed, a replaced item whose row the commit removed
    /// is shredded, a move between domains is finished or undone (`DomainMove.settle`; its
    /// waiting files are temp files, so this runs before the leftover sweep).
    static func recoverPending(_ location: VaultLocation, keyStore: KeyStore, index: VaultIndex,
                               state: inout DeviceState) throws {
        var markers = Set<String>()
        for (op, marker) in try keyStore.pendingOperations() {
            markers.insert(marker)
            if op.operation == .moving {
                try DomainMove.settle(op, location: location, keyStore: keyStore, index: index, state: &state)
                continue
            }
            guard let kind = ItemKind(rawValue: op.kind), let domain = Domain(rawValue: op.domain) else { continue }
            let row = try index.item(op.id)
            // An import whose row was committed stays; an item being replaced stays until the
            // commit removed its row (then it is shredded, as the commit would have done).
            if op.operation == .importing && row != nil { continue }
            if op.operation == .replacing && row != nil { continue }
            let secure = op.secure ?? Shredder.secureMode(keyStore)
            try Shredder(location, keyStore: keyStore, secure: secure).shred(id: op.id, kind: kind, domain: domain, album: op.album)
            if row != nil { try index.deleteItems([op.id]) }
        }
        for marker in markers { try ProtectedFiles.remove(marker) }
    }

    /// Temp files of interrupted commands, in the vault and in the key store (ciphertext
    /// or key records that never got committed). Returns what could not be removed (a
    /// read-only vault): reported, never fatal.
    static func sweepLeftovers(_ location: VaultLocation, keyStore: KeyStore) -> [String] {
        // Listed at every sweep, not stamped: the key store's own folder (which holds the stamp),
        // the vault's (the index's -wal and -shm come and go at every command) and the audit
        // log's (an entry at every unlock). Their times change at every command, so stamped they
        // made the stamp be written again at every gate (an atomic write: two fsyncs), twice per
        // command. Each is small.
        let always = [keyStore.root, location.vaultRoot, keyStore.layout.changedByEveryUnlock]
        var folders = location.folders + [location.vaultRoot + "/Quarantine", location.sharedKeysFolder, location.devicesFolder]
        folders += ((try? ProtectedFiles.list(location.albumsFolder)) ?? []).map { location.albumsFolder + "/" + $0 }
        folders += keyStore.layout.workFolders
        folders.removeAll { always.contains($0) }
        return always.flatMap { ProtectedFiles.removeLeftovers(in: $0) }
            + ProtectedFiles.removeLeftovers(in: folders, stampFile: keyStore.sweptPath)
    }

    /// Refuses PIN entry while the failed-PIN delay runs.
    static func checkLockout(_ state: DeviceState, now: Double) throws {
        guard now < state.lockedUntil else { return }
        let wait = Int((state.lockedUntil - now).rounded(.up))
        let text = wait >= 120 ? "\((wait + 59) / 60) minutes" : "\(wait) seconds"
        throw Nu11Error(.lockedOut, "too many wrong PINs (\(state.failures)); try again in \(text)",
                        remedy: .advice(.waitGrowingDelay))
    }
}
