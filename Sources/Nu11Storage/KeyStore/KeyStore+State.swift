// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

extension KeyStore {
    public var statePath: String { layout.state }
    var settingsPath: String { layout.settings }

    public enum StateLoad: Sendable {
        case loaded(DeviceState)
        /// The file is gone although the key store exists: treated as tampering.
        case missing
        /// The file does not authenticate: treated as tampering.
        case damaged
        /// The state authenticates but the TPM's counter is `missed` writes ahead of it: an
        /// older copy was put back, or someone advanced the counter (an unauthenticated
        /// signal). Failing closed without destroying anything: see `Gate`.
        case counterAhead(DeviceState, missed: UInt64)
        /// The state authenticates but the TPM's counter is gone (anyone who may use the TPM can
        /// undefine it) or behind the state by more than one: an unauthenticated signal too,
        /// handled as `counterAhead` (fails closed, destroys nothing). The next correct PIN
        /// defines the counter again (`restoreCounter`) and writes the state.
        case counterMissing(DeviceState)
    }

    /// The device state. With a TPM it is sealed under a key the TPM holds and must carry the
    /// TPM's NV counter (or one more: written, then counted); an older one, a newer one or a
    /// counter that is gone is reported as such (never as tampering: see `StateLoad`).
    public func loadState() throws -> StateLoad {
        guard POSIX.exists(statePath) else { return .missing }
        let bytes = try ProtectedFiles.read(statePath, limit: 16 << 20)
        if let tpm = try readMaster().tpm {
            let connection = try openTPM(tpm)
            guard let state = try? DeviceState.open(bytes, deviceKey: stateKey(tpm, connection: connection)),
                  let written = state.tpmCounter else { return .damaged }
            guard let counter = try connection.readCounter(tpm.nvIndex, auth: counterAuth(tpm, connection: connection)) else {
                return .counterMissing(state)
            }
            if written == counter || written == counter &+ 1 { return .loaded(state) }
            if written < counter { return .counterAhead(state, missed: counter - written) }
            return .counterMissing(state)
        }
        if let state = try? DeviceState.open(bytes, deviceKey: deviceKey()) { return .loaded(state) }
        // An enrolment or removal interrupted between the state and the master record: the
        // state is sealed under the TPM record kept aside for that moment.
        if let aside = try? TPMRecord.parse(ProtectedFiles.read(tpmAsidePath, limit: 64 << 10)),
           let connection = try? openTPM(aside), let key = try? stateKey(aside, connection: connection),
           let state = try? DeviceState.open(bytes, deviceKey: key) {
            return .loaded(state)
        }
        return .damaged
    }

    /// The TPM record kept aside by an interrupted enrolment or removal is not needed once a
    /// state is written under the current sealing key: removing it is cleanup (a leftover is
    /// harmless), so its failure is ignored.
    public func saveState(_ state: DeviceState) throws {
        guard let tpm = try readMaster().tpm else {
            try ProtectedFiles.writeAtomically(state.sealed(deviceKey: deviceKey()), to: statePath)
            if POSIX.exists(tpmAsidePath) { try? ProtectedFiles.remove(tpmAsidePath) }
            return
        }
        try saveState(state, tpm: tpm, connection: openTPM(tpm))
        if POSIX.exists(tpmAsidePath) { try? ProtectedFiles.remove(tpmAsidePath) }
    }

    /// Writes the state under `tpm`'s state key with the next counter value, then counts.
    /// While the counter is gone (undefined by someone who may use the TPM; `restoreCounter`
    /// defines it again after a correct PIN) the state is written with the value it had and
    /// nothing is counted, so a wrong PIN is still recorded and the next load reports the
    /// counter missing again (failing closed, destroying nothing).
    func saveState(_ state: DeviceState, tpm: TPMRecord, connection: TPMConnection) throws {
        let auth = try counterAuth(tpm, connection: connection)
        guard let counter = try connection.readCounter(tpm.nvIndex, auth: auth) else {
            try ProtectedFiles.writeAtomically(state.sealed(deviceKey: stateKey(tpm, connection: connection)), to: statePath)
            return
        }
        var counted = state
        counted.tpmCounter = counter &+ 1
        try ProtectedFiles.writeAtomically(counted.sealed(deviceKey: stateKey(tpm, connection: connection)), to: statePath)
        try connection.incrementCounter(tpm.nvIndex, auth: auth)
    }

    /// Defines the key store's NV counter again at its index, with its auth value (FORMAT.md
    /// §4.2b), when it is gone; true when it was. The caller then writes the state, which
    /// counts it from the counter's new value. Called only after a correct PIN.
    public func restoreCounter() throws -> Bool {
        guard let tpm = try readMaster().tpm else { return false }
        let connection = try openTPM(tpm)
        let auth = try counterAuth(tpm, connection: connection)
        guard try connection.readCounter(tpm.nvIndex, auth: auth) == nil else { return false }
        try connection.defineCounter(at: tpm.nvIndex, auth: auth)
        return true
    }

    /// A TPM record kept aside while an enrolment or removal changes how the state is sealed.
    var tpmAsidePath: String { layout.tpmAside }

    public var hasState: Bool { POSIX.exists(statePath) }

    /// The settings; defaults when none were saved. A damaged file yields the defaults and
    /// `damaged = true` (reported by callers and by `check`); an older version is migrated
    /// and saved.
    public func loadSettings() throws -> (settings: Settings, damaged: Bool) {
        guard POSIX.exists(settingsPath) else { return (Settings(), false) }
        let bytes = try ProtectedFiles.read(settingsPath, limit: 1 << 20)
        do {
            let (settings, migrated) = try Settings.open(bytes, deviceKey: deviceKey())
            if migrated { try saveSettings(settings) }
            return (settings, false)
        } catch let error as Nu11Error where error.code == .unsupportedVersion {
            throw error
        } catch {
            return (Settings(), true)
        }
    }

    public enum SettingsStatus: Sendable { case present, missing, damaged }

    /// Whether the settings file is there and authenticates (no migration, no write).
    public func settingsStatus() throws -> SettingsStatus {
        guard POSIX.exists(settingsPath) else { return .missing }
        let bytes = try ProtectedFiles.read(settingsPath, limit: 1 << 20)
        do {
            _ = try Settings.open(bytes, deviceKey: deviceKey())
            return .present
        } catch let error as Nu11Error where error.code == .unsupportedVersion {
            throw error
        } catch {
            return .damaged
        }
    }

    /// Moves a settings file that does not authenticate to `settings.n11c.damaged`.
    public func setAsideDamagedSettings() throws {
        try ProtectedFiles.move(settingsPath, to: layout.settingsAside)
    }

    /// `tagKey`: the saving vault's settings key (see `Settings.authenticated(under:)`).
    public func saveSettings(_ settings: Settings, tagKey: SecretBytes? = nil) throws {
        try ProtectedFiles.writeAtomically(settings.sealed(deviceKey: deviceKey(), tagKey: tagKey), to: settingsPath)
    }

    /// Every file of the key store, for wipe.
    /// The leftover sweep's cache: folders and their times at their last clean sweep.
    public var sweptPath: String { layout.swept }

    /// The gallery's listing cache (`Items`, FORMAT.md §4.9): sealed by the vault layer, a
    /// cache only (absent, stale or unreadable, it is rebuilt).
    public var listingCachePath: String { layout.listing }

    /// Overwrites and removes the listing cache, if there is one (a deletion, the duress PIN).
    public func destroyListingCache() throws {
        if ProtectedFiles.kind(layout.listing) == .file { try ProtectedFiles.overwriteAndRemove(layout.listing) }
    }

    public func allFiles() -> [String] {
        var files = layout.files
        for folder in layout.folders {
            if let names = try? ProtectedFiles.list(folder) { files += names.map { POSIX.join(folder, $0) } }
        }
        if let top = try? ProtectedFiles.list(root) {
            files += top.filter { $0.hasPrefix(ProtectedFiles.tempPrefix) || $0 == BackupExclusion.tagName }
                .map { POSIX.join(root, $0) }
        }
        return files
    }
}
