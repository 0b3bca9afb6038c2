// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11TPM
import Foundation
import Nu11Format

/// The policy a Nu11VLT TPM object carries (see `n11tpm_policy`).
public struct TPMPolicy: Sendable {
    public var pcrMask: UInt32
    /// "TPM clock < deadline" (ms); 0 = none.
    public var deadline: UInt64
    /// Wrong auth values are not counted by the dictionary-attack lockout (objects whose auth
    /// value is empty: the device state, the Skeleton).
    public var noDA: Bool
    /// "TPM resetCount <= resetLimit" (nil = none): each power cut is a TPM reset and may set
    /// the clock back to its last save, so a deadline object allows only so many.
    public var resetLimit: UInt32?

    public init(pcrMask: UInt32, deadline: UInt64 = 0, noDA: Bool = false, resetLimit: UInt32? = nil) {
        self.pcrMask = pcrMask
        self.deadline = deadline
        self.noDA = noDA
        self.resetLimit = resetLimit
    }

    var c: n11tpm_policy {
        n11tpm_policy(pcr_mask: pcrMask, deadline: deadline, no_da: noDA ? 1 : 0,
                      has_reset_limit: resetLimit == nil ? 0 : 1, reset_limit: resetLimit ?? 0)
    }
}

/// Why the TPM refused to unseal.
public enum TPMRefusal: Error, Sendable {
    /// Wrong auth value (a wrong PIN), counted by the TPM.
    case wrongAuth
    /// Too many wrong PINs: the TPM refuses every PIN for a while.
    case lockedOut
    /// The TPM's clock passed the object's deadline.
    case deadlinePassed
    /// The PCRs the object is bound to changed.
    case pcrMismatch
    /// The object does not belong to this TPM.
    case notThisTPM
}

/// One connection to the TPM for one step of a command: opened, used, closed, every handle
/// flushed (works with the kernel's resource manager and without one).
public final class TPMConnection {
    private let handle: OpaquePointer

    /// The TCTI: `$NU11VLT_TPM_TCTI` (a standard TCTI string: device, swtpm, mssim, tabrmd),
    /// else the kernel's resource manager `/dev/tpmrm0`.
    public static func tcti() throws -> String {
        if let conf = ProcessInfo.processInfo.environment["NU11VLT_TPM_TCTI"], !conf.isEmpty {
            let name = conf.split(separator: ":", maxSplits: 1).first.map(String.init) ?? conf
            // cmd would start a program, pcap would record the traffic to a file.
            guard ["device", "swtpm", "mssim", "tabrmd"].contains(name) else {
                throw Nu11Error(.invalidArgument, "NU11VLT_TPM_TCTI names the TCTI '\(name)', which Nu11VLT does not use",
                                remedy: .advice(.tctiSyntax))
            }
            // No network, ever: a TCP TCTI (a simulator) only on this machine's loopback.
            let options = conf.split(separator: ":", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            for option in options.split(separator: ",") where option.hasPrefix("host=") {
                guard ["host=127.0.0.1", "host=localhost", "host=::1"].contains(String(option)) else {
                    throw Nu11Error(.invalidArgument, "NU11VLT_TPM_TCTI names a TPM on another host (\(option.dropFirst(5))); Nu11VLT uses no network",
                                    remedy: .advice(.localTPMOnly))
                }
            }
            return conf
        }
        guard POSIX.exists("/dev/tpmrm0") else {
            throw Nu11Error(.tpm, "no TPM found (/dev/tpmrm0 does not exist and NU11VLT_TPM_TCTI is not set)",
                            remedy: .recoverWithRecoveryKey(first: "enable the TPM in the firmware settings, or set NU11VLT_TPM_TCTI"))
        }
        return "device:/dev/tpmrm0"
    }

    public init() throws {
        let conf = try Self.tcti()
        var out: OpaquePointer?
        let rc = n11tpm_open(conf, &out)
        guard rc == 0, let out else {
            throw Nu11Error(.tpm, "the TPM could not be reached through \(conf) (\(Self.describe(rc)))",
                            remedy: .recoverWithRecoveryKey(first: "check that the TPM is enabled and that you may use it (the 'tss' group owns /dev/tpmrm0)"))
        }
        handle = out
    }

    deinit { n11tpm_close(handle) }

    static func describe(_ rc: UInt32) -> String { n11tpm_describe(rc).map { String(cString: $0) } ?? "0x\(String(rc, radix: 16))" }

    private func check(_ rc: UInt32, _ what: String) throws {
        guard rc != 0 else { return }
        throw Nu11Error(.tpm, "the TPM failed to \(what) (\(Self.describe(rc)))",
                        remedy: .recoverWithRecoveryKey(first: "check the TPM (tpm2-tools: tpm2_getcap properties-variable)"))
    }

    /// The storage primary key's name: the same on the same TPM, different on any other.
    public func primaryName() throws -> [UInt8] {
        var name = [UInt8](repeating: 0, count: 34)
        try check(n11tpm_primary_name(handle, &name), "create its storage key")
        return name
    }

    /// Seals `secret` under `auth` (nil: empty) and `policy`; returns the object blob.
    public func seal(_ secret: SecretBytes, auth: SecretBytes?, policy: TPMPolicy) throws -> [UInt8] {
        var blob = [UInt8](repeating: 0, count: 2048)
        var length = 0
        let rc = secret.withUnsafeBytes { data in
            withAuth(auth) { a in
                n11tpm_seal(handle, a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count,
                            data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count,
                            policy.c, &blob, blob.count, &length)
            }
        }
        if n11tpm_base_code(rc) == 0x921 { throw TPMRefusal.lockedOut }
        try check(rc, "seal a secret")
        return Array(blob[0..<length])
    }

    /// Unseals an object; a refusal is a `TPMRefusal`, anything else a `Nu11Error`.
    public func unseal(_ blob: [UInt8], auth: SecretBytes?, policy: TPMPolicy) throws -> SecretBytes {
        var out = [UInt8](repeating: 0, count: 128)
        defer { secureZero(&out) }
        var length = 0
        var stage: Int32 = 0
        let rc = withAuth(auth) { a in
            n11tpm_unseal(handle, blob, blob.count, a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count,
                          policy.c, &out, out.count, &length, &stage)
        }
        if rc != 0 {
            let base = n11tpm_base_code(rc)
            switch (base, stage) {
            case (0x921, _): throw TPMRefusal.lockedOut
            case (0x08E, _), (0x0A2, _): throw TPMRefusal.wrongAuth
            case (_, 3) where base != 0: throw TPMRefusal.deadlinePassed
            case (0x09D, 5), (0x099, 5): throw policy.pcrMask != 0 ? TPMRefusal.pcrMismatch : TPMRefusal.notThisTPM
            case (_, 1) where base != 0: throw TPMRefusal.notThisTPM
            default: try check(rc, "unseal a secret")
            }
        }
        var secret = Array(out[0..<length])
        return SecretBytes(consuming: &secret)
    }

    private func withAuth<R>(_ auth: SecretBytes?, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let auth else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return auth.withUnsafeBytes(body)
    }

    /// The TPM's clock (ms; runs only while the TPM is powered, never backwards).
    public func clock() throws -> UInt64 {
        var value: UInt64 = 0
        try check(n11tpm_clock(handle, &value), "read its clock")
        return value
    }

    public struct ClockInfo: Sendable {
        public var clock: UInt64
        /// TPM resets (TPM2_Startup(CLEAR): a reboot or a power cut) since the TPM was cleared.
        public var resetCount: UInt32
        /// NO after a power cut until the clock is saved again: it may have gone back.
        public var safe: Bool
    }

    public func clockInfo() throws -> ClockInfo {
        var info = ClockInfo(clock: 0, resetCount: 0, safe: false)
        var safe: Int32 = 0
        try check(n11tpm_clock_info(handle, &info.clock, &info.resetCount, &safe), "read its clock")
        info.safe = safe != 0
        return info
    }

    /// Whether the TPM's lockout hierarchy has an authorization value (someone set one).
    public func lockoutAuthSet() throws -> Bool {
        var set: Int32 = 0
        try check(n11tpm_lockout_auth_set(handle, &set), "report its properties")
        return set != 0
    }

    /// Changes the lockout hierarchy's authorization value (nil: empty). A wrong `old` is
    /// `TPMRefusal.wrongAuth` (and locks the lockout hierarchy for its recovery time).
    public func changeLockoutAuth(old: SecretBytes?, new: SecretBytes?) throws {
        let rc = withAuth(old) { o in
            withAuth(new) { n in
                n11tpm_lockout_change(handle, o.baseAddress?.assumingMemoryBound(to: UInt8.self), o.count,
                                      n.baseAddress?.assumingMemoryBound(to: UInt8.self), n.count)
            }
        }
        try lockoutResult(rc, "change its lockout authorization")
    }

    /// Clears the dictionary-attack count with the lockout hierarchy's authorization value.
    public func resetLockout(auth: SecretBytes?) throws {
        let rc = withAuth(auth) { a in n11tpm_lockout_reset(handle, a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count) }
        try lockoutResult(rc, "clear its wrong-PIN count")
    }

    private func lockoutResult(_ rc: UInt32, _ what: String) throws {
        switch n11tpm_base_code(rc) {
        case 0x08E, 0x0A2, 0x09A: throw TPMRefusal.wrongAuth  // AUTH_FAIL, BAD_AUTH, AUTH_MISSING
        case 0x921: throw TPMRefusal.lockedOut
        default: try check(rc, what)
        }
    }

    public struct Lockout: Sendable {
        public var failures: UInt32
        public var maxTries: UInt32
        /// Seconds after which one failure is forgiven.
        public var interval: UInt32
        public var recovery: UInt32
    }

    public func lockout() throws -> Lockout {
        var l = Lockout(failures: 0, maxTries: 0, interval: 0, recovery: 0)
        try check(n11tpm_lockout(handle, &l.failures, &l.maxTries, &l.interval, &l.recovery), "report its lockout state")
        return l
    }

    /// Defines a monotonic counter at a free index in the owner range; returns the index.
    /// `auth`: what reads and advances it (nil: empty, anyone who may use the TPM).
    public func defineCounter(auth: SecretBytes?) throws -> UInt32 {
        var last: UInt32 = 0
        for _ in 0..<16 {
            let random = SecureRandom.bytes(3)
            let index = 0x0180_0000 | (UInt32(random[0] & 0x3F) << 16 | UInt32(random[1]) << 8 | UInt32(random[2]))
            last = withAuth(auth) { a in n11tpm_nv_define(handle, index, a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count) }
            if last == 0 { return index }
            guard n11tpm_base_code(last) == 0x14C else { break }  // TPM_RC_NV_DEFINED: try another
        }
        try check(last, "create its counter (an owner password on the TPM prevents it)")
        return 0
    }

    /// Defines the counter again at `index` (after someone undefined it), as `defineCounter`.
    public func defineCounter(at index: UInt32, auth: SecretBytes?) throws {
        let rc = withAuth(auth) { a in n11tpm_nv_define(handle, index, a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count) }
        try check(rc, "create its counter again (an owner password on the TPM prevents it)")
    }

    public func incrementCounter(_ index: UInt32, auth: SecretBytes?) throws {
        let rc = withAuth(auth) { a in n11tpm_nv_increment(handle, index, a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count) }
        try check(rc, "advance its counter")
    }

    /// The counter's value, or nil when it does not exist on this TPM.
    public func readCounter(_ index: UInt32, auth: SecretBytes?) throws -> UInt64? {
        var value: UInt64 = 0
        let rc = withAuth(auth) { a in n11tpm_nv_read(handle, index, a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count, &value) }
        if rc != 0 && n11tpm_base_code(rc) == 0x08B { return nil }  // TPM_RC_HANDLE: no such index
        try check(rc, "read its counter")
        return value
    }

    public func removeCounter(_ index: UInt32) { _ = n11tpm_nv_undefine(handle, index) }

    /// SHA-256 values of the PCRs in `mask`, 32 bytes each, lowest first.
    public func pcrValues(_ mask: UInt32) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 24 * 32)
        var length = 0
        try check(n11tpm_pcr_read(handle, mask, &out, out.count, &length), "read its PCRs")
        return Array(out[0..<length])
    }
}
