// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

extension KeyStore {
    /// Seals `keys` into slot `index` under `pin`, refusing a PIN that already opens a slot.
    /// `clearing`: other slots filled with random bytes in the same write.
    public func sealSlot(_ index: Int, keys: DomainKeys, pin: SecretBytes, clearing: [Int] = []) throws {
        var record = try readMaster()
        if record.tpmBound {
            guard try sealSlotIfFree(index, keys: keys, pin: pin) else { throw Self.pinInUse }
            return
        }
        let kek = try record.deriveKEK(pin: pin, deviceKey: deviceKey())
        if let (slot, _, _) = try? record.open(pinKEK: kek), slot != index {
            throw Nu11Error(.invalidArgument, "that PIN is already in use in this key store", remedy: .otherPIN)
        }
        try record.seal(keys, slot: index, kek: record.slotKEK(kek, slot: index))
        for other in clearing where other != index { record.clear(slot: other) }
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
    }

    /// Seals `keys` into slot `index` under `pin` unless that PIN already opens another slot;
    /// returns whether it sealed. `silent`, for callers that must not reveal which (the duress
    /// PIN): the master record is written either way — a PIN in use leaves slot `index`
    /// holding fresh filler — so comparing the file before and after tells nothing.
    public func sealSlotIfFree(_ index: Int, keys: DomainKeys, pin: SecretBytes, silent: Bool = false) throws -> Bool {
        try sealFreeSlot(index, keys: keys, pin: pin, silent: silent) != nil
    }

    /// `sealSlotIfFree`, returning the slot's KEK when it sealed.
    public func sealFreeSlot(_ index: Int, keys: DomainKeys, pin: SecretBytes, silent: Bool = false) throws -> SecretBytes? {
        var record = try readMaster()
        if let tpm = record.tpm {
            guard index != 0 else { throw Nu11Error(.internalError, "slot 0 is sealed by init or a PIN change") }
            let connection = try openTPM(tpm)
            guard let sealed = try sealTPMSlot(&record, slot: index, keys: keys, pin: pin, secret: nil, skeleton: nil,
                                               connection: connection) else {
                guard silent else { return nil }
                record.clear(slot: index)
                if var sealed = record.tpm {
                    try Self.filler(&sealed, slot: index, connection: connection)
                    record.tpm = sealed
                }
                try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
                return nil
            }
            try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
            return sealed.kek
        }
        let pinKEK = try record.deriveKEK(pin: pin, deviceKey: deviceKey())
        if let (slot, _, _) = try? record.open(pinKEK: pinKEK), slot != index {
            guard silent else { return nil }  // a PIN in use, said aloud (backup PIN, PIN change)
            record.clear(slot: index)
            try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
            return nil
        }
        let kek = record.slotKEK(pinKEK, slot: index)
        try record.seal(keys, slot: index, kek: kek)
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
        return kek
    }

    /// A new backup PIN: slot 1 sealed with `keys`, slot 2 (the duress PIN, which held the
    /// former backup vault's keys) cleared — in one write. With a TPM, the duress entry's
    /// bucket does not stand in the new PIN's way (it is replaced in the same write).
    public func setBackupSlot(keys: DomainKeys, pin: SecretBytes) throws {
        var record = try readMaster()
        guard let tpm = record.tpm else {
            try sealSlot(1, keys: keys, pin: pin, clearing: [2])  // one write: the commit point
            return
        }
        let connection = try openTPM(tpm)
        guard try sealTPMSlot(&record, slot: 1, keys: keys, pin: pin, secret: nil, skeleton: nil, replacing: [2],
                              connection: connection) != nil, var sealed = record.tpm else { throw Self.pinInUse }
        record.clear(slot: 2)
        try Self.filler(&sealed, slot: 2, connection: connection)
        record.tpm = sealed
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
    }

    /// Replaces a slot with random filler: whatever PIN opened it opens nothing now.
    public func clearSlot(_ index: Int) throws {
        var record = try readMaster()
        record.clear(slot: index)
        if var tpm = record.tpm {
            try Self.filler(&tpm, slot: index, connection: openTPM(tpm))
            if index == 0 {
                tpm.skeletonDeadline = 0
                tpm.skeletonObject = []
            }
            record.tpm = tpm
        }
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
    }

    /// Arms or disarms the Skeleton Switch flag (needs the primary slot's key-encryption
    /// key, as the unlock derived it). With a TPM, arming also seals the Skeleton secret under
    /// "TPM clock < now + interval" and slot 0 then needs it; arming again (a check-in) moves
    /// the deadline. Returns the primary's unlock as it now is.
    @discardableResult
    public func setSkeletonArmed(_ armed: Bool, primary unlocked: UnlockedKeys, interval: Double = 0) throws -> UnlockedKeys {
        var record = try readMaster()
        let (slot, keys) = try record.open(kek: unlocked.kek)
        guard slot == 0 else {
            throw Nu11Error(.authenticationFailed, "the Skeleton Switch needs the primary PIN", remedy: .primaryPINOnly)
        }
        guard var tpm = record.tpm, let held = unlocked.tpm else {
            try record.setSkeletonArmed(armed, primary: keys, kek: unlocked.kek)
            try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
            return unlocked
        }
        let connection = try openTPM(tpm)
        var secret: SecretBytes?
        if armed {
            guard let auth = held.auth else {
                throw Nu11Error(.invalidArgument, "the Skeleton Switch needs the primary PIN typed in this session", remedy: .unlockAgain)
            }
            let now = try connection.clockInfo()
            tpm.skeletonDeadline = now.clock + UInt64(max(1, interval) * 1000)
            tpm.skeletonResetLimit = now.resetCount &+ Self.resetAllowance(seconds: interval)
            // Every check-in seals a fresh secret: one saved before is useless after it.
            secret = try sealSkeleton(&tpm, auth: auth, connection: connection)
        } else {
            tpm.skeletonDeadline = 0
            tpm.skeletonObject = []
        }
        record.tpm = tpm
        let kek = secret.map { MasterRecord.skeletonKEK(base: held.baseKEK, skeletonSecret: $0) } ?? held.baseKEK
        try record.setSkeletonArmed(armed, primary: keys, kek: kek)
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
        return UnlockedKeys(slot: 0, keys: keys, kek: kek, tpm: TPMUnlock(secret: held.secret, baseKEK: held.baseKEK, skeleton: secret, auth: held.auth),
                            pinKEK: unlocked.pinKEK)
    }

    /// With the Skeleton Switch armed in the TPM: whether the TPM's clock passed the deadline.
    /// Read from the TPM's clock, not by unsealing (the Skeleton object needs the PIN). The
    /// deadline in the file only decides when nu11vlt wipes: the object's policy carries the
    /// real one, so a deadline edited in the file opens nothing after it.
    public func hardwareSkeletonExpired() throws -> Bool {
        guard let tpm = try readMaster().tpm, tpm.skeletonDeadline != 0 else { return false }
        let now = try openTPM(tpm).clockInfo()
        return now.clock >= tpm.skeletonDeadline || now.resetCount > (tpm.skeletonResetLimit ?? .max)
    }

    /// How many TPM resets (reboots, power cuts) the Skeleton object allows between check-ins:
    /// two a day of the interval, at least 4, at most 64. A power cut can set the TPM's clock
    /// back to its last save (at most 2^22 ms ≈ 70 min on a TPM that follows the
    /// specification), so cutting power holds the deadline back by at most this many times
    /// that; one reset more and the object opens nothing, as at the deadline.
    public static func resetAllowance(seconds: Double) -> UInt32 {
        UInt32(min(64, max(4, 2 * (max(0, seconds) / 86_400).rounded(.up))))
    }
}
