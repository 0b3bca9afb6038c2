import Nu11Format

extension KeyStore {
    var statePath: String { POSIX.join(root, "state.n11s") }
    var settingsPath: String { POSIX.join(root, "settings.n11c") }

    public enum StateLoad: Sendable {
        case loaded(DeviceState)
        /// The file is gone although the key store exists: treated as tampering.
        case missing
        /// The file does not authenticate: treated as tampering.
        case damaged
    }

    public func loadState() throws -> StateLoad {
        guard POSIX.exists(statePath) else { return .missing }
        let bytes = try ProtectedFiles.read(statePath, limit: 16 << 20)
        guard let state = try? DeviceState.open(bytes, deviceKey: deviceKey()) else { return .damaged }
        return .loaded(state)
    }

    public func saveState(_ state: DeviceState) throws {
        try ProtectedFiles.writeAtomically(state.sealed(deviceKey: deviceKey()), to: statePath)
    }

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
        try ProtectedFiles.move(settingsPath, to: settingsPath + ".damaged")
    }

    public func saveSettings(_ settings: Settings) throws {
        try ProtectedFiles.writeAtomically(settings.sealed(deviceKey: deviceKey()), to: settingsPath)
    }

    /// Every file of the key store, for wipe.
    public func allFiles() -> [String] {
        var files = [masterPath, devicePath, statePath, settingsPath, settingsPath + ".damaged", vaultIDPath]
        for folder in [itemsPath, pendingPath, quarantinePath, forwardFolder, logFolder] {
            if let names = try? ProtectedFiles.list(folder) { files += names.map { POSIX.join(folder, $0) } }
        }
        if let top = try? ProtectedFiles.list(root) {
            files += top.filter { $0.hasPrefix(ProtectedFiles.tempPrefix) || $0 == BackupExclusion.tagName }
                .map { POSIX.join(root, $0) }
        }
        return files
    }
}
