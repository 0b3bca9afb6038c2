import Foundation
import Nu11Format
import Nu11Storage

/// The one public facade of Nu11VLT: an unlocked vault.
///
/// Opening takes the vault's lock (so two processes never modify it at once) and unlocks
/// the key store; the domain keys live in guarded memory until the object goes away.
public final class Vault {
    public let location: VaultLocation
    let keyStore: KeyStore
    let index: VaultIndex
    let keys: DomainKeys
    private let lock: FileLock
    private var metadataKeys: [Domain: SecretBytes] = [:]

    /// The domains this PIN sees: the primary PIN sees Vault and Fade; a backup PIN sees
    /// only Backup.
    public var visibleDomains: [Domain] { keys.role == .primary ? [.vault, .fade] : [.backup] }
    var mainDomain: Domain { keys.mainDomain }

    private init(location: VaultLocation, keyStore: KeyStore, index: VaultIndex, keys: DomainKeys, lock: FileLock) {
        self.location = location
        self.keyStore = keyStore
        self.index = index
        self.keys = keys
        self.lock = lock
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
        _ = try KeyStore.create(root: location.keyStoreRoot, pin: pin, parameters: parameters)
        _ = try VaultIndex(path: location.indexPath)
        withExtendedLifetime(lock) {}
    }

    /// Unlocks the vault with `pin`. `onWait` is called if another nu11vlt holds the lock.
    public static func open(_ location: VaultLocation, pin: SecretBytes, onWait: () -> Void = {}) throws -> Vault {
        guard FileManager.default.fileExists(atPath: location.indexPath) else {
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)",
                            remedy: "run `nu11vlt init`, or pass --vault with the right folder", item: location.vaultRoot)
        }
        let lock = try FileLock(path: location.lockPath, onWait: onWait)
        let keyStore = KeyStore(root: location.keyStoreRoot)
        let unlocked = try keyStore.unlock(pin: pin)
        for folder in location.folders { try ProtectedFiles.makeDirectory(folder) }
        let index = try VaultIndex(path: location.indexPath)
        return Vault(location: location, keyStore: keyStore, index: index, keys: unlocked.keys, lock: lock)
    }

    /// What can be said without the PIN.
    public static func info(_ location: VaultLocation) throws -> VaultInfo {
        let store = KeyStore(root: location.keyStoreRoot)
        let initialized = isInitialized(location)
        let kdf = initialized ? try store.readMaster().parameters : nil
        return VaultInfo(vaultPath: location.vaultRoot, keyStorePath: location.keyStoreRoot, initialized: initialized,
                         kdfIterations: kdf?.iterations, kdfMemoryMiB: kdf?.memoryMiB)
    }

    /// Counts, after unlock.
    public func status() throws -> VaultInfo {
        var info = try Self.info(location)
        let counts = try index.count(domains: visibleDomains)
        info.items = counts.items
        info.albums = counts.albums
        return info
    }

    /// Re-seals this PIN's slot under `new`. No item key and no content is touched.
    public func changePIN(current: SecretBytes, new: SecretBytes) throws {
        try keyStore.changePIN(current: current, new: new)
    }

    /// A pragma as the program's own index connection sees it.
    public func indexPragma(_ name: String) throws -> String { try index.pragma(name) }

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
    public var items: Int?
    public var albums: Int?
}
