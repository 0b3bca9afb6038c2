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
    /// The effective time, now: fixed by the gate when the vault opened, then advanced by
    /// the boot clock (never by the wall clock), so in a session that stays open a fade
    /// deadline passes and the item stops opening without reopening the vault.
    public var now: Double { openedAt + max(0, Self.elapsed(clock) - openedElapsed) }
    private let openedAt: Double
    private let openedElapsed: Double
    let clock: any VaultClock

    static func elapsed(_ clock: any VaultClock) -> Double { clock.bootTime()?.elapsed ?? clock.wallTime() }
    var state: DeviceState
    private let lock: FileLock
    private var metadataKeys: [Domain: SecretBytes] = [:]
    /// Receives "done, but …" notices about late failures after a commit point.
    public var onNotice: (String) -> Void = { _ in } {
        didSet {
            for message in pendingNotices { onNotice(message) }
            pendingNotices.removeAll()
        }
    }
    var pendingNotices: [String] = []
    /// Decrypted previews, in memory only, bounded by the preview.cache_mib setting.
    public private(set) lazy var previewCache = PreviewCache<String>(capacityBytes: settings.previewCacheMiB << 20)

    /// The domains this PIN sees: the primary PIN sees Vault and Fade; a backup PIN sees
    /// only Backup.
    public var visibleDomains: [Domain] { keys.role == .primary ? [.vault, .fade] : [.backup, .fade] }
    var mainDomain: Domain { keys.mainDomain }

    private init(location: VaultLocation, keyStore: KeyStore, index: VaultIndex, keys: DomainKeys, lock: FileLock,
                 state: DeviceState, settings: Settings, now: Double, clock: any VaultClock) {
        self.location = location
        self.keyStore = keyStore
        self.index = index
        self.keys = keys
        self.lock = lock
        self.state = state
        self.settings = settings
        self.openedAt = now
        self.clock = clock
        self.openedElapsed = Self.elapsed(clock)
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
        var state = DeviceState(now: 0)
        _ = EffectiveTime.advance(&state, clock: SystemClock())
        state.settingsSaved = true
        try store.saveState(state)
        try store.saveSettings(Settings())
        try Pairing.bind(location, keyStore: store, index: VaultIndex(path: location.indexPath))
        try applyBackupExclusion(location, settings: Settings())
        withExtendedLifetime(lock) {}
    }

    /// Unlocks the vault with `pin`.
    public static func open(_ location: VaultLocation, pin: SecretBytes, clock: any VaultClock = SystemClock(),
                            onWait: () -> Void = {}) throws -> Vault {
        try open(location, clock: clock, onWait: onWait, report: { _ in }, readPIN: { pin })
    }

    /// Runs the gate, then asks `readPIN` (so no prompt appears while a delay runs or before
    /// expired items are gone), then unlocks. Wrong PINs are counted across processes, and
    /// counted *before* the PIN is tried, so killing the process mid-attempt still counts.
    public static func open(_ location: VaultLocation, clock: any VaultClock = SystemClock(), onWait: () -> Void = {},
                            report: (GateReport) -> Void, readPIN: () throws -> SecretBytes) throws -> Vault {
        guard isInitialized(location) else {
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)",
                            remedy: "run `nu11vlt init`, or pass --vault/--keystore with the right folders", item: location.vaultRoot)
        }
        let lock = try FileLock(path: location.lockPath, onWait: onWait)
        let keyStore = KeyStore(root: location.keyStoreRoot)
        let index = try VaultIndex(path: location.indexPath)
        try Pairing.verify(location, keyStore: keyStore, index: index)
        var (state, gateReport) = try Gate.run(location, keyStore: keyStore, index: index, clock: clock)
        report(gateReport)
        let now = gateReport.now
        try Gate.checkLockout(state, now: now)
        let settings = try keyStore.loadSettings().settings
        let pin = try readPIN()
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
        let unlocked: UnlockedKeys
        do {
            unlocked = try keyStore.unlock(pin: pin)
        } catch let error as Nu11Error where error == .wrongPIN {
            if settings.eraseAfterFailures > 0 && counted.failures >= settings.eraseAfterFailures {
                try Wipe.run(location, secure: settings.deletionMode == .secure)
                throw Nu11Error(.authenticationFailed,
                                "the PIN or passphrase is wrong; after \(counted.failures) wrong PINs the vault was erased",
                                remedy: "the erase-after setting was \(settings.eraseAfterFailures)")
            }
            throw error
        }
        let onDisk = recorded ? counted : state
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
        var lateNotice: String?
        if state != onDisk {
            do { try keyStore.saveState(state) } catch {
                lateNotice = "the device state could not be saved (\(describe(error))): the wrong-PIN count or the Skeleton check-in is not recorded"
            }
        }
        if !index.isReadOnly {
            for folder in location.folders { try ProtectedFiles.makeDirectory(folder) }
            try applyBackupExclusion(location, settings: settings)
        }
        let vault = Vault(location: location, keyStore: keyStore, index: index, keys: unlocked.keys, lock: lock,
                          state: state, settings: settings, now: now, clock: clock)
        if let lateNotice { vault.pendingNotices.append(lateNotice) }
        if unlocked.keys.role == .duress { try vault.runDuress() }
        return vault
    }

    /// The gate alone (for `sweep`, `status` and commands that need no PIN).
    @discardableResult
    public static func sweep(_ location: VaultLocation, clock: any VaultClock = SystemClock(),
                             onWait: () -> Void = {}) throws -> GateReport {
        guard isInitialized(location) else { return GateReport(now: clock.wallTime()) }
        let lock = try FileLock(path: location.lockPath, onWait: onWait)
        defer { withExtendedLifetime(lock) {} }
        let index = try VaultIndex(path: location.indexPath)
        let keyStore = KeyStore(root: location.keyStoreRoot)
        try Pairing.verify(location, keyStore: keyStore, index: index)
        return try Gate.run(location, keyStore: keyStore, index: index, clock: clock).1
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

    /// The KDF cost the kdf.* settings ask for, when it differs from the key store's.
    public func pendingKDFCost() throws -> KDFParameters? {
        var parameters = try keyStore.readMaster().parameters
        if settings.kdfIterations != 0 { parameters.iterations = settings.kdfIterations }
        if settings.kdfMemoryMiB != 0 { parameters.memoryKiB = settings.kdfMemoryMiB * 1024 }
        return try keyStore.kdfDiffers(parameters) ? parameters : nil
    }

    /// Re-seals this PIN's slot under `new`. No item key and no content is touched.
    /// Applies the kdf.* settings when they are set (non-zero); a cost change re-seals every
    /// slot in use, so `others` must hold the other PINs of this key store (see
    /// `KeyStore.changePIN`).
    public func changePIN(current: SecretBytes, new: SecretBytes, others: [SecretBytes] = []) throws {
        let parameters = try pendingKDFCost()
        try commitStep("the PIN change") { try keyStore.changePIN(current: current, new: new, parameters: parameters, others: others) }
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
