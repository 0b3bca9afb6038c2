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

    /// Every key present, `null` when the switch is off (docs/JSON.md).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(enabled, forKey: .enabled)
        try c.encode(interval, forKey: .interval)
        try c.encode(lastCheckin, forKey: .lastCheckin)
        try c.encode(deadline, forKey: .deadline)
        try c.encode(secondsLeft, forKey: .secondsLeft)
        try c.encode(secure, forKey: .secure)
    }
}

extension Vault {
    /// Enables the Skeleton Switch: without a primary check-in for `interval`, the next
    /// command of any kind wipes the vault first. Only the primary PIN's vault can (slot 0
    /// is re-sealed with the armed flag, under the key-encryption key the unlock derived).
    public func enableSkeleton(interval: Double, secure: Bool) throws {
        guard isPrimary else { throw Nu11Error.wrongPIN }
        guard interval >= 1 else {
            throw Nu11Error(.invalidArgument, "the interval must be at least 1 second", remedy: "choose e.g. 7d")
        }
        state.skeleton = DeviceState.Skeleton(interval: interval, lastCheckin: now, secure: secure)
        try saveState()
        replaceHeld(try keyStore.setSkeletonArmed(true, primary: held, interval: interval))
        audit("skeleton arm", detail: DurationText.format(interval) + (secure ? ", secure" : ""))
    }

    public func disableSkeleton() throws {
        guard isPrimary else { throw Nu11Error.wrongPIN }
        replaceHeld(try keyStore.setSkeletonArmed(false, primary: held))
        state.skeleton = nil
        try saveState()
        audit("skeleton disarm")
    }
}

extension Vault {
    /// The Skeleton Switch as this open session sees it (the app's settings screen); the
    /// command line's `skeleton status` runs the gate instead.
    public func skeletonStatus() -> SkeletonStatus {
        guard let s = state.skeleton else { return SkeletonStatus(enabled: false) }
        return SkeletonStatus(enabled: true, interval: DurationText.format(s.interval),
                              lastCheckin: Date(timeIntervalSince1970: s.lastCheckin),
                              deadline: Date(timeIntervalSince1970: s.deadline),
                              secondsLeft: max(0, Int(s.deadline - now)), secure: s.secure)
    }

    /// A check-in from a session that stays open: the deadline moves to a full interval from
    /// now (as an unlock with the primary PIN does).
    public func skeletonCheckIn() throws {
        guard let s = state.skeleton else {
            throw Nu11Error(.invalidArgument, "the Skeleton Switch is off", remedy: "arm it first")
        }
        try enableSkeleton(interval: s.interval, secure: s.secure)
    }
}
