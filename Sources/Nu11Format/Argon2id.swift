// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Argon2id cost, stored next to what it protects so it can be raised later.
///
/// Three bounds apply. The *floor* is the least a user (or a test) may choose. The *cap*
/// bounds any cost read from a file, so that a hostile key store or archive cannot make us
/// allocate 1 TiB or spin for hours. The *default* is calibrated on this machine at
/// `init`: about half a second with at least 256 MiB.
public struct KDFParameters: Sendable, Equatable, Hashable, Codable {
    /// Argon2 passes (libsodium's `opslimit`).
    public var iterations: UInt32
    /// Memory in KiB (libsodium's `memlimit` / 1024). Parallelism is always 1.
    public var memoryKiB: UInt32

    public init(iterations: UInt32, memoryKiB: UInt32) {
        self.iterations = iterations
        self.memoryKiB = memoryKiB
    }

    public var memoryMiB: UInt32 { memoryKiB / 1024 }

    /// OWASP's minimum for Argon2id (19 MiB, 2 passes). Lower is refused.
    public static let floor = KDFParameters(iterations: 2, memoryKiB: 19 * 1024)
    /// The most any file may ask for: 4 GiB, 32 passes.
    public static let cap = KDFParameters(iterations: 32, memoryKiB: 4 * 1024 * 1024)
    /// The least memory calibration picks.
    public static let calibrationMemoryKiB: UInt32 = 256 * 1024

    /// Checks a cost a user chose: at or above the floor, at or below the cap.
    public func validateChosen() throws {
        guard iterations >= Self.floor.iterations, memoryKiB >= Self.floor.memoryKiB else {
            throw Nu11Error(
                .invalidArgument,
                "KDF cost \(iterations) passes / \(memoryMiB) MiB is below the floor",
                remedy: .advice(.kdfFloor(passes: Int(Self.floor.iterations), memoryMiB: Int(Self.floor.memoryMiB))))
        }
        try validateRead()
    }

    /// Checks a cost read from a file, before anything is allocated.
    public func validateRead() throws {
        guard iterations >= 1, memoryKiB >= 8 else {
            throw Nu11Error(.corrupted, "KDF cost \(iterations) passes / \(memoryKiB) KiB is invalid",
                            remedy: .advice(.damaged))
        }
        guard iterations <= Self.cap.iterations, memoryKiB <= Self.cap.memoryKiB else {
            throw Nu11Error(
                .costTooHigh,
                "KDF cost \(iterations) passes / \(memoryMiB) MiB exceeds the cap of \(Self.cap.iterations) passes / \(Self.cap.memoryMiB) MiB",
                remedy: .advice(.untrusted))
        }
    }
}

/// Argon2id v1.3 (RFC 9106), parallelism 1, through libsodium's `crypto_pwhash`.
public enum Argon2id {
    public static let saltByteCount = 16

    /// Derives `length` bytes from `passphrase` into guarded memory.
    public static func deriveKey(passphrase: SecretBytes, salt: [UInt8], parameters: KDFParameters,
                                 length: Int = 32) throws -> SecretBytes {
        try parameters.validateRead()
        runs?.increment()
        return try SecretBytes.filling(count: length) { out in
            try passphrase.withUnsafeBytes { pw in
                try Sodium.argon2id(output: out, password: pw, salt: salt,
                                    iterations: UInt64(parameters.iterations),
                                    memoryBytes: Int(parameters.memoryKiB) * 1024)
            }
        }
    }

    /// Picks the cost for this machine: at least `minimumMemoryKiB`, passes raised until one
    /// derivation takes about `target` seconds (never fewer than the floor's passes).
    public static func calibrate(target: Double = 0.5,
                                 minimumMemoryKiB: UInt32 = KDFParameters.calibrationMemoryKiB) throws -> KDFParameters {
        let probe = KDFParameters(iterations: KDFParameters.floor.iterations, memoryKiB: minimumMemoryKiB)
        let seconds = try time(probe)
        let perPass = seconds / Double(probe.iterations)
        var passes = UInt32((target / max(perPass, 0.001)).rounded())
        passes = min(max(passes, KDFParameters.floor.iterations), 10)
        return KDFParameters(iterations: passes, memoryKiB: minimumMemoryKiB)
    }

    /// Wall time of one derivation at `parameters`.
    public static func time(_ parameters: KDFParameters) throws -> Double {
        let pin = SecretBytes(randomCount: 8)
        let start = DispatchTime.now().uptimeNanoseconds
        _ = try deriveKey(passphrase: pin, salt: SecureRandom.bytes(saltByteCount), parameters: parameters)
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

/// Counts runs of something costly made in the task that installs it
/// (`Argon2id.$runs.withValue`, and the vault's gate): the seam through which tests check
/// that a command stretches each PIN once and runs the gate once.
public final class KDFRunCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    public init() {}
    public var count: Int { lock.withLock { value } }
    public func increment() { lock.withLock { value += 1 } }
}

extension Argon2id {
    @TaskLocal public static var runs: KDFRunCounter?
}
