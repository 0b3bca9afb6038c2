// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Nu11Format
import Nu11Storage

/// Where the vault gets the time: the system in production, a test clock in unit tests.
public protocol VaultClock: Sendable {
    /// Wall-clock time, Unix seconds.
    func wallTime() -> Double
    /// This boot's ID and the seconds since boot (CLOCK_BOOTTIME, which counts suspend and
    /// cannot be set); nil where the system does not tell.
    func bootTime() -> DeviceState.BootAnchor?
}

public struct SystemClock: VaultClock {
    public init() {}

    public func wallTime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    public func bootTime() -> DeviceState.BootAnchor? {
        #if os(Linux)
        // A /proc file reports size 0: read it with read(2), not by its size.
        let fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(fd, &buffer, buffer.count)
        close(fd)
        guard n > 0 else { return nil }
        let id = String(decoding: buffer.prefix(n), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        var ts = timespec()
        guard !id.isEmpty, clock_gettime(CLOCK_BOOTTIME, &ts) == 0 else { return nil }
        let elapsed = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        // A boot clock beyond ten years of uptime is not a boot clock (an LD_PRELOAD time
        // shim such as faketime fakes it): then the wall-clock rule applies.
        guard elapsed >= 0, elapsed < 10 * 365 * 86400 else { return nil }
        return DeviceState.BootAnchor(id: id, elapsed: elapsed, time: 0)
        #else
        return nil
        #endif
    }
}

/// The effective time of the vault, the one policy every deadline (fade, Skeleton Switch,
/// PIN delays) is measured with (docs/THREAT-MODEL.md, "Time"):
///
/// * Within one boot, time is the time since boot (CLOCK_BOOTTIME) added to the time fixed
///   at the boot's first command: setting the wall clock back or forward changes nothing.
/// * At the first command of a boot, the wall clock is taken, but never earlier than the
///   latest time any command saw: a clock behind it is held there (and a warning says so),
///   and nothing fires because of it.
/// * A clock anomaly alone never destroys anything and never extends a PIN delay beyond
///   what its message says.
enum EffectiveTime {
    static let tolerance: Double = 300

    static func advance(_ state: inout DeviceState, clock: any VaultClock) -> (now: Double, warning: String?) {
        let wall = clock.wallTime()
        let boot = clock.bootTime()
        var warning: String?
        var now: Double
        if let boot, let anchor = state.boot, anchor.id == boot.id, boot.elapsed >= anchor.elapsed {
            now = anchor.time + (boot.elapsed - anchor.elapsed)
        } else {
            now = max(wall, state.latestSeen)
            if wall + tolerance < state.latestSeen {
                warning = "the system clock is \(Int(state.latestSeen - wall)) s behind the latest time Nu11VLT saw; "
                    + "Nu11VLT holds its time at the latest time seen (deadlines neither fire nor stop)"
            }
            state.boot = boot.map { DeviceState.BootAnchor(id: $0.id, elapsed: $0.elapsed, time: now) }
        }
        now = max(now, state.latestSeen)
        // Within a boot the anchor carries the time; the latest time seen is refreshed
        // hourly, so read commands do not write the key store every time.
        if now - state.latestSeen > 3600 || state.boot == nil { state.latestSeen = now }
        return (now, warning)
    }
}
