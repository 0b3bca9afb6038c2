// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// What must be readable before any PIN is typed — the "until first authentication" class:
/// the fade schedule, the failed-PIN counter, the latest time seen. Sealed (authenticated
/// and encrypted) under a subkey of the device key, so it can be read without the PIN but
/// not edited without being noticed.
///
/// File `state.n11s` in the key store: magic "N11S" || version 1 || SmallSeal(JSON).
public struct DeviceState: Codable, Sendable, Equatable {
    public struct FadeEntry: Codable, Sendable, Equatable {
        public var id: ItemID
        public var domain: UInt8
        public var kind: UInt8
        /// Unix seconds after which the item is shredded.
        public var deadline: Double

        public init(id: ItemID, domain: Domain, kind: ItemKind, deadline: Double) {
            self.id = id
            self.domain = domain.rawValue
            self.kind = kind.rawValue
            self.deadline = deadline
        }
    }

    /// The latest wall-clock time any command has seen (Unix seconds). Time never runs
    /// backwards for fade deadlines and PIN delays: the effective time is the later of the
    /// clock and this.
    public var latestSeen: Double
    /// Consecutive wrong PINs.
    public var failures: Int
    /// No PIN is accepted before this time (Unix seconds).
    public var lockedUntil: Double
    public var fade: [FadeEntry]
    /// The Skeleton Switch (dead man's switch), when enabled.
    public var skeleton: Skeleton?
    /// Where this boot's time was fixed: the boot ID, the seconds since boot then, and the
    /// effective time then (see EffectiveTime in the vault layer). Absent in older files.
    public var boot: BootAnchor?
    /// `pin set-duress` attempts since the last primary unlock, and the wait they impose
    /// (the answer never says whether the new PIN matched another slot). Absent in older files.
    public var duressAttempts: Int?
    public var duressLockedUntil: Double?
    /// Whether a settings file was saved (so a missing one is tampering). Absent in older files.
    public var settingsSaved: Bool?
    /// With a TPM: the value the TPM's NV counter had when this state was written (or one
    /// less: written, then counted). An older file is a rollback. Absent without a TPM.
    public var tpmCounter: UInt64?
    /// With a TPM: each vault log's last entry as of that vault's last unlock (by log file
    /// name), so a log put back to an older copy is noticed. Absent in older files.
    public var logMarks: [String: UInt64]?

    public struct BootAnchor: Codable, Sendable, Equatable {
        public var id: String
        public var elapsed: Double
        public var time: Double

        public init(id: String, elapsed: Double, time: Double) {
            self.id = id
            self.elapsed = elapsed
            self.time = time
        }
    }

    public struct Skeleton: Codable, Sendable, Equatable {
        /// Seconds without a primary check-in after which the vault is wiped.
        public var interval: Double
        public var lastCheckin: Double
        public var secure: Bool

        public init(interval: Double, lastCheckin: Double, secure: Bool) {
            self.interval = interval
            self.lastCheckin = lastCheckin
            self.secure = secure
        }

        public var deadline: Double { lastCheckin + interval }
    }

    public init(now: Double) {
        latestSeen = now
        failures = 0
        lockedUntil = 0
        fade = []
    }

    public static let magic: [UInt8] = Array("N11S".utf8)
    static let aad = Array("nu11vlt device state v1".utf8)

    public func sealed(deviceKey: SecretBytes) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Padded with JSON whitespace to a multiple of 1 KiB, so the file's size does not
        // vary with timestamps or counters (nor tell anything about the key store).
        var json = Array(try encoder.encode(self))
        json += [UInt8](repeating: 0x20, count: (1024 - json.count % 1024) % 1024)
        return Self.magic + [1] + (try SmallSeal.seal(json,
                                                     key: Subkey.derive(from: deviceKey, purpose: "device state"),
                                                     associatedData: Self.aad))
    }

    /// Parses and authenticates; any damage is `.corrupted`.
    public static func open(_ bytes: [UInt8], deviceKey: SecretBytes) throws -> DeviceState {
        guard bytes.count > 5, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "the device state is damaged")
        }
        guard bytes[4] == 1 else {
            throw Nu11Error(.unsupportedVersion, "device state version \(bytes[4]) is not supported", remedy: .upgrade)
        }
        let plain = try SmallSeal.open(Array(bytes[5...]), key: Subkey.derive(from: deviceKey, purpose: "device state"),
                                       associatedData: aad)
        do {
            return try JSONDecoder().decode(DeviceState.self, from: Data(plain))
        } catch {
            throw Nu11Error(.corrupted, "the device state is damaged")
        }
    }

    /// A state that only carries a lockout (for messages).
    public static func lockout(failures: Int, until: Double) -> DeviceState {
        var state = DeviceState(now: 0)
        state.failures = failures
        state.lockedUntil = until
        return state
    }

    /// The PIN delay after `failures` consecutive wrong PINs (documented in the README):
    /// 1–4 → none, 5 → 1 min, 6 → 5 min, 7–8 → 15 min, 9 and more → 1 hour.
    public static func delay(afterFailures failures: Int) -> Double {
        switch failures {
        case ..<5: 0
        case 5: 60
        case 6: 300
        case 7, 8: 900
        default: 3600
        }
    }
}

/// Durations as users write them: `30s`, `10m`, `24h`, `7d`.
public enum DurationText {
    public static let maximum: Double = 3650 * 86400

    public static func parse(_ text: String) throws -> Double {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        guard let unit = text.last, let factor = units[unit], let value = Double(text.dropLast()),
              value.isFinite, value > 0, value == value.rounded() else {
            throw Nu11Error(.invalidArgument, "'\(text)' is not a duration",
                            remedy: .advice(.durationFormat))
        }
        let seconds = value * factor
        guard seconds <= maximum else {
            throw Nu11Error(.invalidArgument, "'\(text)' is longer than 10 years", remedy: .advice(.shorterDuration))
        }
        return seconds
    }

    public static func format(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s % 86400 == 0 { return "\(s / 86400)d" }
        if s % 3600 == 0 { return "\(s / 3600)h" }
        if s % 60 == 0 { return "\(s / 60)m" }
        return "\(s)s"
    }
}
