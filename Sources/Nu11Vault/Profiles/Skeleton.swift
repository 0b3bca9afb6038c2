// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What `skeleton status` shows, without the PIN.
public struct SkeletonStatus: Sendable {
    public var enabled: Bool
    public var interval: String?
    public var lastCheckin: Date?
    public var deadline: Date?
    public var secondsLeft: Int?
    public var secure: Bool?
}

extension Profiles {
    /// Enables the Skeleton Switch: without a primary check-in for `interval`, the next
    /// command of any kind wipes the vault first. Only the primary PIN's vault can (slot 0
    /// is re-sealed with the armed flag, under the key-encryption key the unlock derived).
    public func enableSkeleton(interval: Double, secure: Bool) throws {
        guard vault.isPrimary else { throw Nu11Error.wrongPIN }
        guard interval >= 1 else {
            throw Nu11Error(.invalidArgument, "the interval must be at least 1 second", remedy: .advice(.durationFormat))
        }
        // The state (with its deadline) first, then the master record's flag: the commit
        // point. A failure before it leaves the switch off (the gate ignores a deadline the
        // master record does not arm).
        let previous = state.skeleton
        state.skeleton = DeviceState.Skeleton(interval: interval, lastCheckin: now, secure: secure)
        do {
            try saveState()
        } catch let error as Nu11Error where !error.tookEffect {
            state.skeleton = previous
            throw error
        }
        try commitMaster("arming the Skeleton Switch") { try keyStore.setSkeletonArmed(true, primary: held, interval: interval) }
        audit("skeleton arm", detail: DurationText.format(interval) + (secure ? ", secure" : ""))
    }

    public func disableSkeleton() throws {
        guard vault.isPrimary else { throw Nu11Error.wrongPIN }
        try commitMaster("disarming the Skeleton Switch") { try keyStore.setSkeletonArmed(false, primary: held) }
        state.skeleton = nil
        // After the commit point: the gate drops a deadline the master record no longer arms.
        afterCommit("recording the disarm in the device state") { try saveState() }
        audit("skeleton disarm")
    }

    /// Writes the master record (the commit point) and holds the keys it returns. A write that
    /// took effect but may not be durable succeeds with a notice; the session then locks,
    /// since the keys it holds may be the old ones.
    func commitMaster(_ what: String, _ write: () throws -> UnlockedKeys) throws {
        do {
            vault.replaceHeld(try write())
        } catch let error as Nu11Error where error.tookEffect {
            notice("done, but \(what) may not survive a power cut yet (\(error.message))")
            vault.lock()
        }
    }
}

extension Profiles {
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
            throw Nu11Error(.invalidArgument, "the Skeleton Switch is off", remedy: .armSkeletonFirst)
        }
        try enableSkeleton(interval: s.interval, secure: s.secure)
    }
}
