// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// An unlocked vault: what `LockedVault.unlock` returns.
///
/// It holds the vault's lock (so two processes never modify it at once), the domain keys
/// of the slot the PIN opened and that slot's key-encryption key (so a PIN change or the
/// Skeleton Switch re-seals the slot without stretching the PIN again), all in guarded
/// memory. `lock()` zeroes them, empties the preview cache and releases the lock; every
/// later call fails with "the vault is locked".
public final class Vault {
    public let location: VaultLocation
    let keyStore: KeyStore
    let index: VaultIndex
    /// Which vault this PIN opens (primary, backup or duress).
    public let role: DomainKeys.Role
    private var unlocked: UnlockedKeys?
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
    private var fileLock: FileLock?
    private var metadataKeys: [Domain: SecretBytes] = [:]
    /// The recovery phrase's public key, when the vault folder's recovery data is this
    /// vault's (see `loadRecovery`); new primary-vault items are sealed to it.
    var recoveryPublicKey: [UInt8]? {
        didSet { if recoveryPublicKey != oldValue { recoverySealer = nil } }
    }
    /// Seals the new item keys of one commit group to `recoveryPublicKey` (one X25519
    /// agreement for the group; dropped at each commit and on lock).
    var recoverySealer: RecoverySeal.Sealer?
    /// Why new items are not sealed to the recovery phrase (missing, put back or foreign
    /// recovery data; an interrupted setup), as `loadRecovery` found it; nil when they are or
    /// when the vault has no phrase.
    public internal(set) var recoveryProblem: String?
    /// The vault ID from the index, read once per session (it never changes while open).
    var cachedVaultID: ItemID?
    /// A shared vault's context (this device's ID, the key for the other devices' item keys),
    /// read once per session (`Devices.context`); nil inside when the vault is not shared.
    var sharedContext: SharedContext??
    /// Receives "done, but …" notices about late failures after a commit point, and what
    /// the unlock found that needs the user (each front end words the remedy).
    public var onNotice: (Notice) -> Void = { _ in } {
        didSet {
            noticeHandlerSet = true
            for notice in pendingNotices { onNotice(notice) }
            pendingNotices.removeAll()
        }
    }
    /// Notices from before a handler was set (during unlock) wait here for it.
    var pendingNotices: [Notice] = []
    var noticeHandlerSet = false
    /// Decrypted previews and thumbnails (the seed's thumbnail LRU), in memory only, bounded
    /// by the preview.cache_mib setting, zeroed on eviction; keyed by item and part,
    /// consulted only after the read-time checks, emptied on delete, fade expiry and lock.
    public private(set) lazy var previewCache = PreviewCache<CachedPart>(capacityBytes: settings.previewCacheMiB << 20)
    /// What a gallery listing read from each item's sealed metadata (its sort date, a Live
    /// Photo's motion), so a session that lists again (the app, after each import, delete or
    /// move) opens only what changed: keyed by item, checked against the sealed record's tag,
    /// emptied on lock (`Items.datedItemIDs`).
    var listingCache = ListingCache()
    /// The items a listing found sealed anew since the session listed them (handed to the
    /// next `libraryEntries` result, then forgotten).
    var listingChanged = Set<ItemID>()
    /// How many sealed thumbnail files this session has decrypted (for the tests: a tile's
    /// two sizes come from one).
    var thumbnailFilesOpened = 0
    /// Whether this session read `listing.n11g` into `listingCache`, and how many entries the
    /// file holds (-1: unknown), so a full listing knows when to write it again.
    var listingFileRead = false
    var listingFileEntries = -1

    /// The domains this PIN sees: the primary PIN sees Vault and Fade; a backup PIN sees
    /// only Backup.
    public var visibleDomains: [Domain] { role == .primary ? [.vault, .fade] : [.backup, .fade] }
    var mainDomain: Domain { role == .primary ? .vault : .backup }

    init(location: VaultLocation, keyStore: KeyStore, index: VaultIndex, unlocked: UnlockedKeys, lock: FileLock,
         state: DeviceState, settings: Settings, now: Double, clock: any VaultClock) {
        self.location = location
        self.keyStore = keyStore
        self.index = index
        self.role = unlocked.keys.role
        self.unlocked = unlocked
        self.fileLock = lock
        self.state = state
        self.settings = settings
        self.openedAt = now
        self.clock = clock
        self.openedElapsed = Self.elapsed(clock)
    }

    /// Whether `lock()` was called.
    public var isLocked: Bool { unlocked == nil }

    /// Zeroes the keys (domain keys, the slot's key-encryption key, metadata subkeys),
    /// empties the preview cache and releases the vault's lock.
    public func lock() {
        unlocked = nil
        metadataKeys.removeAll()
        previewCache.removeAll()
        listingCache.removeAll()
        listingChanged.removeAll()
        listingFileRead = false
        listingFileEntries = -1
        recoverySealer = nil
        sharedContext = nil
        fileLock = nil
    }

    /// For a session that stays open (the desktop app): gives up the vault's lock until the
    /// next `exclusive` operation, so the command line can use the same vault meanwhile.
    public func releaseLockBetweenOperations() { fileLock = nil }

    /// Runs one operation under the vault's lock: taken for its duration when the session
    /// released it (`releaseLockBetweenOperations`), re-reading the device state another
    /// process may have changed; a no-op wrapper while the session holds the lock.
    public func exclusive<T>(onWait: () -> Void = {}, _ body: () throws -> T) throws -> T {
        _ = try held
        if fileLock != nil { return try body() }
        let lock = try FileLock(path: location.lockPath, onWait: onWait)
        defer { withExtendedLifetime(lock) {} }
        // Re-read only when the state file changed since the last read (every write replaces
        // it: a new inode): a TPM-bound state costs TPM round trips, and the app runs one
        // operation per tile.
        let stamp = Self.fileStamp(keyStore.statePath)
        if stamp != stateStamp, case .loaded(let fresh) = try keyStore.loadState() {
            state = fresh
            stateStamp = stamp
        }
        try followKeyChanges()
        return try body()
    }

    /// Another program changed the master record since this session last looked (a `rekey`,
    /// `pin change` or Skeleton check-in from the command line): the session takes the keys
    /// its slot holds now, finishing a rotation left half-done, so it never seals a new item
    /// under keys the vault no longer uses. A slot that no longer opens with the session's
    /// key-encryption key (the PIN was changed) ends the session.
    func followKeyChanges() throws {
        let stamp = Self.fileStamp(keyStore.masterRecordPath)
        guard stamp != masterStamp else { return }
        let current = try held
        guard let fresh = try keyStore.reopen(current) else {
            lock()
            throw Nu11Error(.invalidArgument, "the PIN was changed by another program while the vault was open; nothing was done",
                            remedy: .unlockAgain)
        }
        masterStamp = stamp
        guard !fresh.keys.sameKeys(as: current.keys) else { return }
        replaceHeld(fresh)
        previewCache.removeAll()
        listingCache.removeAll()
        listingChanged.removeAll()
        listingFileRead = false
        listingFileEntries = -1
        profiles.loadRecovery()
        try maintenance.resumeRotation()
    }

    /// Inode, size and modification time of a file (empty when it cannot be read).
    private var stateStamp: [Int] = []
    /// The same for the master record, as of this session's last look.
    var masterStamp: [Int] = []
    /// What `anchorLog` found at this unlock when the log had been put back to an older copy.
    public internal(set) var logRollback: String?

    static func fileStamp(_ path: String) -> [Int] {
        var st = stat()
        guard stat(path, &st) == 0 else { return [] }
        return [Int(st.st_ino), Int(st.st_size), st.st_mtim.tv_sec, st.st_mtim.tv_nsec]
    }

    /// The keys of the open slot; throws once the vault is locked.
    var held: UnlockedKeys {
        get throws {
            guard let unlocked else {
                throw Nu11Error(.invalidArgument, "the vault is locked", remedy: .unlockAgain)
            }
            return unlocked
        }
    }

    var keys: DomainKeys { get throws { try held.keys } }

    /// Replaces the held slot after it was re-sealed (PIN change, key rotation); the
    /// metadata subkeys of the old keys are dropped.
    func replaceHeld(_ keys: UnlockedKeys) {
        let before = unlocked
        unlocked = keys
        metadataKeys.removeAll()
        sharedContext = nil  // the shared item key follows the main key
        // Slot 0's KEK changed (a PIN change, a TPM enrolment or removal): the security keys
        // follow it, so they keep opening the vault.
        // (Without enrolled keys the rewrap reads the file and writes nothing.)
        if let before, before.slot == 0, keys.slot == 0 {
            do {
                try keyStore.rewrapSecurityKeys(from: KeyStore.baseKEK(before), to: KeyStore.baseKEK(keys))
            } catch {
                notice("the security keys could not follow the new PIN (\(Vault.describe(error))); they no longer open the vault until they are enrolled again",
                       remedy: .advice(.unlockWithPIN))
            }
        }
    }

    static func applyBackupExclusion(_ location: VaultLocation, settings: Settings) throws {
        // The vault folder holds ciphertext only and may be backed up; the key store never
        // (a copy of a key record brings back what was deleted), whatever the settings say.
        try BackupExclusion.apply(to: location.vaultRoot, excluded: !settings.allowBackups)
        try BackupExclusion.apply(to: location.keyStoreRoot, excluded: true)
    }

    /// Counts, after unlock.
    public func status() throws -> VaultInfo {
        var info = try LockedVault(location, clock: clock).info()
        let main = try index.count(domains: [mainDomain])
        let fading = try index.items(domains: [.fade], limit: Int.max).filter(isListed).count
        info.items = main.items + fading
        info.albums = main.albums
        info.fadeItems = fading
        return info
    }

    /// The key store's KDF cost now.
    public func kdfCost() throws -> KDFParameters { try keyStore.readMaster().parameters }

    /// The KDF cost the kdf.* settings ask for, when it differs from the key store's.
    public func pendingKDFCost() throws -> KDFParameters? {
        var parameters = try keyStore.readMaster().parameters
        if settings.kdfIterations != 0 { parameters.iterations = settings.kdfIterations }
        if settings.kdfMemoryMiB != 0 { parameters.memoryKiB = settings.kdfMemoryMiB * 1024 }
        return try keyStore.kdfDiffers(parameters) ? parameters : nil
    }

    /// A pragma as the program's own index connection sees it.
    public func indexPragma(_ name: String) throws -> String { try index.pragma(name) }

    // MARK: what every feature shares

    public var isPrimary: Bool { role == .primary }

    /// Whether a row belongs to the vault this PIN opened.
    func isVisible(_ row: ItemRow) -> Bool {
        guard visibleDomains.contains(row.domain) else { return false }
        guard row.domain == .fade else { return true }
        // A fade item whose deadline passed in this session is gone from listings at once.
        if let entry = state.fade.first(where: { $0.id == row.id }), entry.deadline <= now { return false }
        return (try? ItemMetadata.open(row, key: metadataKey(.fade))) != nil
    }

    /// Whether a row is shown by listings, bulk exports and archives: a visible row, and for a
    /// Fade row one the sealed schedule names. A Fade row the schedule does not name (the
    /// device state put back from before it) is expired to the read-time check
    /// (`Items.checkFade`), which destroys it when it is named by its ID; no listing may show
    /// it meanwhile (issue 57).
    func isListed(_ row: ItemRow) -> Bool {
        guard isVisible(row) else { return false }
        return row.domain != .fade || state.fade.contains { $0.id == row.id }
    }

    /// Up to `limit` listed rows (`isListed`) after `afterSeq`.
    func visibleRows(kind: ItemKind?, album: ItemID?? = .none, afterSeq: Int64, limit: Int) throws -> [ItemRow] {
        if limit == Int.max {
            // Every row: one pass, sorted here (cheaper than SQLite sorting pages of rows).
            return try index.items(domains: visibleDomains, kind: kind, album: album, afterSeq: afterSeq, limit: nil)
                .filter(isListed).sorted { $0.seq < $1.seq }
        }
        let batchSize = limit > 4096 ? 4096 : 256
        var out: [ItemRow] = []
        var cursor = afterSeq
        while out.count < limit {
            let batch = try index.items(domains: visibleDomains, kind: kind, album: album, afterSeq: cursor, limit: batchSize)
            for row in batch where isListed(row) {
                out.append(row)
                if out.count == limit { break }
            }
            guard batch.count == batchSize, let last = batch.last else { break }
            cursor = last.seq
        }
        return out
    }

    /// Drops cached previews of fade items whose deadline has passed (they are never served
    /// anyway: the read-time checks come first; this keeps their plaintext out of memory).
    func evictExpiredPreviews() {
        let current = now
        for entry in state.fade where entry.deadline <= current { forgetCached(entry.id) }
    }

    /// Drops everything the cache holds for an item (its head and both thumbnails).
    func forgetCached(_ id: ItemID) {
        for part in [CachedPart.Part.head, .grid, .preview] { previewCache.remove(CachedPart(id: id, part: part)) }
    }

    /// Changes one setting (after unlock); backup exclusion follows at once.
    public func setSetting(_ key: String, _ value: String) throws -> Settings {
        var updated = settings
        try updated.set(key, value)
        let tagKey = try settingsKey()
        try commitStep("the settings change") { try keyStore.saveSettings(updated, tagKey: tagKey) }  // the commit point
        // Every unlock applies the exclusion again, so a failure here is finished by the next command.
        // The folder's markers follow the primary's settings only (see the unlock).
        if isPrimary { afterCommit("updating the backup exclusion") { try Self.applyBackupExclusion(location, settings: updated) } }
        audit("settings change", detail: "\(key) = \(try updated.value(key))")
        return updated
    }

    func saveState() throws { try keyStore.saveState(state) }

    /// The key that tags the settings this vault saves: a subkey of its archive key (kept
    /// across key rotations), so only its PIN (through the slot) yields it.
    static func settingsKey(_ keys: DomainKeys) -> SecretBytes { Subkey.derive(from: keys.archive, purpose: "settings auth") }
    func settingsKey() throws -> SecretBytes { Self.settingsKey(try keys) }

    func metadataKey(_ domain: Domain) throws -> SecretBytes {
        if let key = metadataKeys[domain] { return key }
        let key = Subkey.derive(from: try keys.key(for: domain), purpose: "index metadata")
        metadataKeys[domain] = key
        return key
    }

    func domainKey(_ domain: Domain) throws -> SecretBytes {
        guard visibleDomains.contains(domain) || domain == .archive else {
            throw Nu11Error(.internalError, "domain \(domain) is not open")
        }
        return try keys.key(for: domain)
    }
}

/// Paths, KDF cost and (after unlock) counts.
public struct VaultInfo: Sendable {
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

