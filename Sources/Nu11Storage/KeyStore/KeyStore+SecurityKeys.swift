// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// FIDO2 security keys that open the primary slot (`security-keys.n11u`, docs/FORMAT.md
/// §4.2d): the seed's Face ID, the Linux way. A key's hmac-secret opens F, F opens the base
/// KEK of slot 0, and that KEK opens the slot as the primary PIN's would. The file has one
/// size whether none or four keys are enrolled.
extension KeyStore {
    var securityKeysPath: String { layout.securityKeys }

    /// The decoy a key store starts with (random bytes of the real file's size).
    public func writeSecurityKeyDecoy() throws {
        try ProtectedFiles.writeAtomically(SecurityKeyRecord.decoy(), to: securityKeysPath)
    }

    /// The enrolled keys (none for a decoy, a missing or damaged file).
    public func securityKeys() throws -> SecurityKeyRecord {
        guard let bytes = try? ProtectedFiles.read(securityKeysPath, limit: SecurityKeyRecord.maxFileSize + 1) else { return .empty }
        return SecurityKeyRecord.parse(bytes, deviceKey: try deviceKey())
    }

    func saveSecurityKeys(_ record: SecurityKeyRecord) throws {
        try ProtectedFiles.writeAtomically(record.encoded(deviceKey: deviceKey()), to: securityKeysPath)
    }

    /// Security keys open the primary vault only: enrolling or removing one needs its unlock.
    static func requirePrimary(_ unlocked: UnlockedKeys) throws {
        guard unlocked.slot == 0 else {
            throw Nu11Error(.authenticationFailed, "security keys open the primary vault: unlock with the primary PIN",
                            remedy: .advice(.unlockWithPIN))
        }
    }

    /// The KEK of slot 0 without the Skeleton secret: what a security key gives back.
    public static func baseKEK(_ unlocked: UnlockedKeys) -> SecretBytes { unlocked.tpm?.baseKEK ?? unlocked.kek }

    /// Enrols the key at `device` (two touches: the credential, then its secret). Needs the
    /// primary PIN's unlock. `keyPIN`: the key's own PIN (needed when it has one). Returns the
    /// entry's number (1…4).
    public func enrolSecurityKey(primary unlocked: UnlockedKeys, device: FIDODevice, keyPIN: SecretBytes?,
                                 policy: SecurityKeyRecord.Policy, label: String,
                                 touch: (Int) -> Void = { _ in }) throws -> Int {
        try Self.requirePrimary(unlocked)
        var record = try securityKeys()
        guard record.entries.count < SecurityKeyRecord.capacity else {
            throw Nu11Error(.invalidArgument, "\(SecurityKeyRecord.capacity) security keys are enrolled already", remedy: .removeSecurityKeyFirst)
        }
        let base = Self.baseKEK(unlocked)
        let f = record.f(baseKEK: base)
        if !record.entries.isEmpty && f == nil {
            // Entries made for another KEK (a crash between a PIN change and their update): they open nothing.
            record = .empty
        }
        if policy == .touchAndKeyPIN && keyPIN == nil {
            throw Nu11Error(.invalidArgument, "this policy needs the security key's own PIN, and it has none",
                            remedy: .advice(.otherSecurityKey))
        }
        let userID = SecureRandom.bytes(16)
        touch(1)
        let credential = try device.makeCredential(userID: userID, keyPIN: keyPIN)
        let salt = SecureRandom.bytes(32)
        touch(2)
        let secret = try device.hmacSecret(credentialID: credential, salt: salt, keyPIN: policy == .touchAndKeyPIN ? keyPIN : nil)
        let w = SecurityKeyRecord.entryKey(hmacSecret: secret, deviceKey: try deviceKey())
        try record.add(label: label, policy: policy, credentialID: credential, salt: salt, entryKey: w, f: f, baseKEK: base)
        try saveSecurityKeys(record)
        return record.entries.count
    }

    /// Revokes entry `number` (1…4), as the commit of a key rotation to `keys` (docs/FORMAT.md
    /// §4.2e): slot 0 gets a new pepper, so its KEK changes — whatever a copy of this file made
    /// before gives (the removed key's way to slot 0's old KEK) opens nothing — and the file a new
    /// F, sealed to every remaining key's public half, so they keep working without a touch.
    /// Needs the primary PIN's unlock (the pepper is applied to the PIN's KEK). Returns the
    /// unlock as it now is and the labels of entries that could not follow (made before public
    /// halves: enrol them again).
    public func revokeSecurityKey(number: Int, held: UnlockedKeys, keys: DomainKeys) throws -> (unlocked: UnlockedKeys, dropped: [String]) {
        try Self.requirePrimary(held)
        guard let pinKEK = held.pinKEK else {
            throw Nu11Error(.authenticationFailed, "removing a security key changes what opens the vault, so it needs the primary PIN, not a security key",
                            remedy: .advice(.unlockWithPIN))
        }
        var record = try securityKeys()
        guard record.entries.indices.contains(number - 1) else {
            throw Nu11Error(.notFound, "no security key number \(number) is enrolled", remedy: .useEnrolledSecurityKeyOrPIN)
        }
        var master = try readMaster()
        master.newPepper()
        let base = master.slotKEK(pinKEK, slot: 0)
        let skeleton = held.tpm?.skeleton
        let kek = skeleton.map { MasterRecord.skeletonKEK(base: base, skeletonSecret: $0) } ?? base
        let dropped = try record.revoke(at: number - 1, baseKEK: base)
        // The entry goes first: a cut before the master record is written leaves the remaining
        // keys waiting for a KEK slot 0 does not have yet (the PIN works; removing again fixes it),
        // never the removed one working. Renamed into place but not yet durable (its folder's
        // fsync failed), the entry is gone all the same: the commit goes on, and the late
        // failure is reported after it as one that took effect ("done, but …"). A power cut
        // that then lost the rename brings back the old entries, which open nothing under the
        // new pepper: the PIN still works, and nothing the removed key opens is added.
        var late: Nu11Error?
        do { try saveSecurityKeys(record) } catch let error as Nu11Error where error.tookEffect { late = error }
        try master.seal(keys, slot: 0, kek: kek)
        try ProtectedFiles.writeAtomically(master.encoded(), to: masterPath)  // the commit point
        if let late { throw late }
        let tpm = held.tpm.map { TPMUnlock(secret: $0.secret, baseKEK: base, skeleton: $0.skeleton, auth: $0.auth) }
        return (UnlockedKeys(slot: 0, keys: keys, kek: kek, tpm: tpm, pinKEK: pinKEK), dropped)
    }

    /// After slot 0's base KEK changed (PIN change, TPM enrolment or removal): the entries
    /// wrap the new one. Without entries, nothing is written.
    public func rewrapSecurityKeys(from old: SecretBytes, to new: SecretBytes) throws {
        guard !old.constantTimeEquals(new) else { return }  // a rotation keeps the KEK: nothing to read
        var record = try securityKeys()
        guard !record.entries.isEmpty, let f = record.f(baseKEK: old) else { return }
        try record.rewrap(f: f, baseKEK: new)
        try saveSecurityKeys(record)
    }

    /// Opens slot 0 with the security key at `device`: the entry whose credential the key holds
    /// (asked without a touch), then one touch — and the key's own PIN, through `keyPIN`, when
    /// that entry's policy needs it. A key that holds none is a wrong key.
    public func unlock(securityKey device: FIDODevice, keyPIN: () throws -> SecretBytes?) throws -> UnlockedKeys {
        let record = try securityKeys()
        guard !record.entries.isEmpty else {
            throw Nu11Error(.notFound, "no security key is enrolled in this vault", remedy: .advice(.unlockWithPIN))
        }
        let master = try readMaster()
        if let tpm = master.tpm, tpm.skeletonDeadline != 0 {
            throw Nu11Error(.authenticationFailed, "the Skeleton Switch is armed: only the primary PIN opens the vault until it is disarmed",
                            remedy: .advice(.unlockWithPIN))
        }
        // Which entry this key made: asked silently, so a key PIN is asked only for its own entry.
        guard let entry = try record.entries.first(where: { try device.holds(credentialID: $0.credentialID) }) else {
            throw Nu11Error.wrongSecurityKey
        }
        let pin = entry.policy == .touchAndKeyPIN ? try keyPIN() : nil
        let secret = try device.hmacSecret(credentialID: entry.credentialID, salt: entry.salt, keyPIN: pin)
        let w = SecurityKeyRecord.entryKey(hmacSecret: secret, deviceKey: try deviceKey())
        guard let base = record.baseKEK(entry: entry, entryKey: w),
              let keys = try? master.open(kek: base, slot: 0) else { throw Nu11Error.wrongSecurityKey }
        // An entry made before public halves becomes one now that its key gave W (best effort:
        // a key store that cannot be written keeps it as it is).
        var upgraded = record
        if let index = record.entries.firstIndex(of: entry), (try? upgraded.upgrade(entryAt: index, entryKey: w)) == true {
            try? saveSecurityKeys(upgraded)
        }
        return UnlockedKeys(slot: 0, keys: keys, kek: base)
    }
}
