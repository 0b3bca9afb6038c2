// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Unlocking with a FIDO2 security key (docs/THREAT-MODEL.md, "Security keys"): the seed's
/// Face ID. The key opens the primary vault; the PIN stays the fallback.
extension LockedVault {
    /// The enrolled keys, readable before unlock (labels and policies only); empty when none.
    public func securityKeys() throws -> [SecurityKeyRecord.Entry] {
        guard isInitialized else { return [] }
        return try KeyStore(root: location.keyStoreRoot).securityKeys().entries
    }

    /// The security key to use (`$NU11VLT_FIDO2_DEVICE`, else the first one plugged in), or nil.
    public static func findSecurityKey() throws -> FIDODevice? { try FIDODevice.find() }

    /// Runs the gate, then unlocks with the security key at `device`. An attempt whose key
    /// does not open the vault counts as a wrong PIN does (delay, erase-after); an absent or
    /// untouched key, or a wrong PIN of the key's own (which the key counts), does not.
    /// `keyPIN`: asked when an entry needs the key's own PIN.
    public func unlock(securityKey device: FIDODevice, keyPIN: () throws -> SecretBytes?, onWait: () -> Void = {},
                       report: (GateReport) -> Void = { _ in }) throws -> Vault {
        guard !(try securityKeys()).isEmpty else {
            throw Nu11Error(.notFound, "no security key is enrolled in this vault", remedy: .advice(.unlockWithPIN))
        }
        return try open(attempt: { try $0.unlock(securityKey: device, keyPIN: keyPIN) }, bySecurityKey: true,
                        onWait: onWait, reported: [], report: report)
    }
}

/// Security keys, after unlock: enrolment, removal, status.
extension Profiles {
    /// Enrols the security key at `device` for the primary vault; returns its number (1…4).
    /// `touch(n)` is called before each of the two touches.
    public func enrolSecurityKey(device: FIDODevice, keyPIN: SecretBytes?, policy: SecurityKeyRecord.Policy, label: String,
                                 touch: (Int) -> Void = { _ in }) throws -> Int {
        guard vault.isPrimary else { throw Nu11Error.wrongPIN }
        let primary = try self.held
        var number: Int?
        // Writing security-keys.n11u is the commit point: renamed into place, the key opens the
        // vault, so a failing folder fsync after it is "done, but …".
        try commitStep("enrolling the security key") {
            number = try keyStore.enrolSecurityKey(primary: primary, device: device, keyPIN: keyPIN, policy: policy,
                                                   label: label, touch: touch)
        }
        let enrolled = try number ?? keyStore.securityKeys().entries.count
        audit("security key enroll", detail: policy == .touch ? "touch" : "touch and the key's PIN")
        return enrolled
    }

    /// Removes security key `number` (1…4) for good (docs/FORMAT.md §4.2e): a new key
    /// generation whose commit also changes slot 0's KEK (a new pepper) and the security keys'
    /// F, so the removed key opens nothing — not with an old copy of `security-keys.n11u` or of
    /// the whole key store — that was added after. Returns the labels of keys enrolled before
    /// public halves, which could not follow and must be enrolled again.
    @discardableResult
    public func removeSecurityKey(number: Int, progress: @escaping (RekeyProgress) -> Void = { _ in }) throws -> [String] {
        guard vault.isPrimary else { throw Nu11Error.wrongPIN }
        let current = try held
        guard current.pinKEK != nil else {
            throw Nu11Error(.authenticationFailed, "removing a security key changes what opens the vault, so it needs the primary PIN, not a security key",
                            remedy: .advice(.unlockWithPIN))
        }
        guard try keyStore.securityKeys().entries.indices.contains(number - 1) else {
            throw Nu11Error(.notFound, "no security key number \(number) is enrolled", remedy: .useEnrolledSecurityKeyOrPIN)
        }
        var dropped: [String] = []
        let report = try vault.maintenance.rotate(to: current.keys.rotated(created: UInt64(max(0, now))), progress: progress) { keys in
            let revoked = try keyStore.revokeSecurityKey(number: number, held: current, keys: keys)
            dropped = revoked.dropped
            return revoked.unlocked
        }
        if !vault.isLocked { audit("security key remove", count: report.keyRecords, detail: "keys rotated") }
        return dropped
    }

    public func securityKeys() throws -> [SecurityKeyRecord.Entry] { try keyStore.securityKeys().entries }
}
