import Foundation
import Nu11Format
import Nu11Storage

/// What `skeleton status` shows, without the PIN.
public struct SkeletonStatus: Sendable, Codable {
    public var enabled: Bool
    public var interval: String?
    public var lastCheckin: Date?
    public var deadline: Date?
    public var secondsLeft: Int?
    public var secure: Bool?
}

extension Vault {
    /// Enables the Skeleton Switch: without a primary check-in for `interval`, the next
    /// command of any kind wipes the vault first. `pin` must be the primary PIN (it re-seals
    /// slot 0 with the armed flag).
    public func enableSkeleton(interval: Double, secure: Bool, pin: SecretBytes) throws {
        guard isPrimary else { throw Nu11Error.wrongPIN }
        guard interval >= 1 else {
            throw Nu11Error(.invalidArgument, "the interval must be at least 1 second", remedy: "choose e.g. 7d")
        }
        state.skeleton = DeviceState.Skeleton(interval: interval, lastCheckin: now, secure: secure)
        try saveState()
        try keyStore.setSkeletonArmed(true, primaryPIN: pin)
    }

    public func disableSkeleton(pin: SecretBytes) throws {
        guard isPrimary else { throw Nu11Error.wrongPIN }
        try keyStore.setSkeletonArmed(false, primaryPIN: pin)
        state.skeleton = nil
        try saveState()
    }

    /// Time left, readable before unlock (runs the gate, which may fire the switch).
    public static func skeletonStatus(_ location: VaultLocation) throws -> SkeletonStatus {
        guard isInitialized(location) else {
            throw Nu11Error(.notFound, "no vault at \(location.vaultRoot)", remedy: "run `nu11vlt init`")
        }
        let lock = try FileLock(path: location.lockPath)
        defer { withExtendedLifetime(lock) {} }
        let index = try VaultIndex(path: location.indexPath)
        let keyStore = KeyStore(root: location.keyStoreRoot)
        try Pairing.verify(location, keyStore: keyStore, index: index)
        let (state, report) = try Gate.run(location, keyStore: keyStore, index: index, clock: SystemClock())
        guard let s = state.skeleton else { return SkeletonStatus(enabled: false) }
        return SkeletonStatus(enabled: true, interval: DurationText.format(s.interval),
                              lastCheckin: Date(timeIntervalSince1970: s.lastCheckin),
                              deadline: Date(timeIntervalSince1970: s.deadline),
                              secondsLeft: max(0, Int(s.deadline - report.now)), secure: s.secure)
    }
}
