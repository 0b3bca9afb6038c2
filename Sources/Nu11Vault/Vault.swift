import Foundation
import Nu11Format
import Nu11Storage

/// The one public facade of Nu11VLT: an unlocked vault.
///
/// Opening takes the vault's lock (so two processes never modify it at once), runs the
/// gate (clock, fade sweep, failed-PIN delay) before asking for the PIN, then unlocks the
/// key store; the domain keys live in guarded memory until the object goes away.
public final class Vault {
    public let location: VaultLocation
    let keyStore: KeyStore
    let index: VaultIndex
    let keys: DomainKeys
    public let settings: Settings
    /// The effective time of this command (never earlier than any time seen before).
    public let now: Double
    var state: DeviceState
    private let lock: FileLock
    private var metadataKeys: [Domain: SecretBytes] = [:]
    /// Decrypted previews, in memory only, bounded by the preview.cache_mib setting.
    public private(set) lazy var previewCache = PreviewCache<String>(capacityBytes: settings.previewCacheMiB << 20)

    /// The domains this PIN sees: the primary PIN sees Vault and Fade; a backup PIN sees
    /// only Backup.
    public var visibleDomains: [Domain] { keys.role == .primary ? [.vault, .fade] : [.backup, .fade] }
    var mainDomain: Domain { keys.mainDomain }

    private init(location: VaultLocation, keyStore: KeyStore, index: VaultIndex, keys: DomainKeys, lock: FileLock,
                 state: DeviceState, settings: Settings, now: Double) {
        self.location = location
        self.keyStore = keyStore
        self.index = index
        self.keys = keys
        self.lock = lock
        self.state = state
        self.settings = settings
        self.now = now
    }

    public static func isInitialized(_ location: VaultLocation) -> Bool {
        FileManager.default.fileExists(atPath: location.indexPath) && KeyStore(root: location.keyStoreRoot).exists
    }

    /// Creates a new vault: the seed's folders, the index, and a key store whose domain keys
    /// are sealed under `pin`.
    public static func create(at location: VaultLocation, pin: SecretBytes, parameters: KDFParameters) throws {
        try parameters.validateChosen()
        if FileManager.default.fileExists(atPath: location.indexPath) {
            throw Nu11Error(.alreadyExists, "a vault already exists at \(location.vaultRoot)",
                            remedy: "use another --vault folder", item: location.vaultRoot)
        }
        if location.vaultRoot.hasPrefix(location.keyStoreRoot + "/") || location.keyStoreRoot.hasPrefix(location.vaultRoot + "/")
            || location.vaultRoot == location.keyStoreRoot {
            throw Nu11Error(.invalidArgument, "the key store must not be inside the vault folder (or the reverse)",
                            remedy: "choose separate folders for --vault and --keystore")
        }
        for folder in location.folders { try ProtectedFiles.makeDirectory(folder) }
        let lock = try FileLock(path: location.lockPath)
        let (store, _) = try KeyStore.create(root: location.keyStoreRoot, pin: pin, parameters: parameters)
        try store.saveState(DeviceState(now: Gate.clock()))
        _ = try VaultIndex(path: location.indexPath)
        try applyBackupExclusion(location, settings: Settings())
        withExtendedLifetime(lock) {}
    }

    /// Unlocks the vault with `pin`.
    public static func open(_ location: VaultLocation, pin: SecretBytes, onWait: () -> Void = {}) throws -> Vault {
        try open(location, onWait: onWait, report: { _ in }, readPIN: { pin })
    }

    /// Runs the gate, then asks `readPIN` (so no prompt appears while a delay runs or before
    /// expired items are gone), then unlocks. Wrong PINs are counted across processes.
    public static func open(_ location: VaultLocation, onWait: () -> Void = {}, report: (GateReport) -> Void,
                            readPIN: () throws -> SecretBytes) throws -> Vault {
        guard isInitialized(location) else {
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)",
                            remedy: "run `nu11vlt init`, or pass --vault/--keystore with the right folders", item: location.vaultRoot)
        }
        let lock = try FileLock(path: location.lockPath, onWait: onWait)
        let keyStore = KeyStore(root: location.keyStoreRoot)
        let index = try VaultIndex(path: location.indexPath)
        var (state, gateReport) = try Gate.run(location, keyStore: keyStore, index: index)
        report(gateReport)
        try Gate.checkLockout(state, now: gateReport.now)
        let settings = try keyStore.loadSettings().settings
        let pin = try readPIN()
        let unlocked: UnlockedKeys
        do {
            unlocked = try keyStore.unlock(pin: pin)
        } catch let error as Nu11Error where error == .wrongPIN {
            state.failures += 1
            state.lockedUntil = gateReport.now + DeviceState.delay(afterFailures: state.failures)
            try keyStore.saveState(state)
            if settings.eraseAfterFailures > 0 && state.failures >= settings.eraseAfterFailures {
                try Wipe.run(location, secure: settings.deletionMode == .secure)
                throw Nu11Error(.authenticationFailed,
                                "the PIN or passphrase is wrong; after \(state.failures) wrong PINs the vault was erased",
                                remedy: "the erase-after setting was \(settings.eraseAfterFailures)")
            }
            throw error
        }
        if state.failures != 0 || state.lockedUntil != 0 {
            state.failures = 0
            state.lockedUntil = 0
            try keyStore.saveState(state)
        }
        if unlocked.keys.role == .primary, var skeleton = state.skeleton {
            skeleton.lastCheckin = gateReport.now  // every primary unlock checks in
            state.skeleton = skeleton
            try keyStore.saveState(state)
        }
        for folder in location.folders { try ProtectedFiles.makeDirectory(folder) }
        try applyBackupExclusion(location, settings: settings)
        let vault = Vault(location: location, keyStore: keyStore, index: index, keys: unlocked.keys, lock: lock,
                          state: state, settings: settings, now: gateReport.now)
        if unlocked.keys.role == .duress { try vault.runDuress() }
        return vault
    }

    /// The gate alone (for `sweep`, `status` and commands that need no PIN).
    @discardableResult
    public static func sweep(_ location: VaultLocation, onWait: () -> Void = {}) throws -> GateReport {
        guard isInitialized(location) else { return GateReport(now: Gate.clock()) }
        let lock = try FileLock(path: location.lockPath, onWait: onWait)
        defer { withExtendedLifetime(lock) {} }
        let index = try VaultIndex(path: location.indexPath)
        return try Gate.run(location, keyStore: KeyStore(root: location.keyStoreRoot), index: index).1
    }

    static func applyBackupExclusion(_ location: VaultLocation, settings: Settings) throws {
        for folder in [location.vaultRoot, location.keyStoreRoot] {
            try BackupExclusion.apply(to: folder, excluded: !settings.allowBackups)
        }
    }

    /// What can be said without the PIN.
    public static func info(_ location: VaultLocation) throws -> VaultInfo {
        let store = KeyStore(root: location.keyStoreRoot)
        let initialized = isInitialized(location)
        let kdf = initialized ? try store.readMaster().parameters : nil
        return VaultInfo(vaultPath: location.vaultRoot, keyStorePath: location.keyStoreRoot, initialized: initialized,
                         kdfIterations: kdf?.iterations, kdfMemoryMiB: kdf?.memoryMiB,
                         backupsExcluded: initialized ? BackupExclusion.isExcluded(location.vaultRoot) : nil)
    }

    /// Counts, after unlock.
    public func status() throws -> VaultInfo {
        var info = try Self.info(location)
        let main = try index.count(domains: [mainDomain])
        let fading = try index.items(domains: [.fade], limit: Int.max).filter(isVisible).count
        info.items = main.items + fading
        info.albums = main.albums
        info.fadeItems = fading
        return info
    }

    /// Re-seals this PIN's slot under `new`. No item key and no content is touched.
    /// Applies the kdf.* settings when they are set (non-zero).
    public func changePIN(current: SecretBytes, new: SecretBytes) throws {
        let master = try keyStore.readMaster()
        var parameters = master.parameters
        if settings.kdfIterations != 0 { parameters.iterations = settings.kdfIterations }
        if settings.kdfMemoryMiB != 0 { parameters.memoryKiB = settings.kdfMemoryMiB * 1024 }
        try keyStore.changePIN(current: current, new: new, parameters: parameters)
    }

    /// A pragma as the program's own index connection sees it.
    public func indexPragma(_ name: String) throws -> String { try index.pragma(name) }

    func saveState() throws { try keyStore.saveState(state) }

    func metadataKey(_ domain: Domain) -> SecretBytes {
        if let key = metadataKeys[domain] { return key }
        let key = Subkey.derive(from: keys.key(for: domain), purpose: "index metadata")
        metadataKeys[domain] = key
        return key
    }

    func domainKey(_ domain: Domain) throws -> SecretBytes {
        guard visibleDomains.contains(domain) || domain == .archive else {
            throw Nu11Error(.internalError, "domain \(domain) is not open")
        }
        return keys.key(for: domain)
    }
}

/// Paths, KDF cost and (after unlock) counts.
public struct VaultInfo: Sendable, Codable {
    public var vaultPath: String
    public var keyStorePath: String
    public var initialized: Bool
    public var kdfIterations: UInt32?
    public var kdfMemoryMiB: UInt32?
    public var backupsExcluded: Bool?
    public var items: Int?
    public var albums: Int?
    public var fadeItems: Int?
}
