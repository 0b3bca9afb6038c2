// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// Binding a key store to the TPM, unbinding it, recovering it on another TPM.
///
/// Every change commits with one atomic write of the master record (which carries the TPM
/// record). The device state changes sealing key on the way: the new TPM record is kept
/// aside in `tpm.n11t` first, so a crash between the state and the master record leaves a
/// state the next command can still read.
extension KeyStore {
    /// The result of an enrolment: the recovery key (to be shown once) and the primary's unlock.
    public struct Enrolment: Sendable {
        public let recoveryKey: SecretBytes
        public let unlocked: UnlockedKeys
    }

    /// Binds this key store to the TPM. `pins`: the primary PIN first, then the other PINs
    /// that must keep working (a slot whose PIN is not given stops opening — the caller
    /// asked for them). `state`: the device state, re-sealed under the TPM. `strongPIN`: the
    /// primary PIN has passphrase strength (required when the TPM's lockout authorization is
    /// someone else's). `lockoutMayBeOurs`: `given` may already hold this TPM's lockout
    /// authorization (a rebuild on the same machine).
    public func enrollTPM(pins: [SecretBytes], pcrMask: UInt32, state: DeviceState, recoveryKey given: SecretBytes? = nil,
                          lockoutMayBeOurs: Bool = false, strongPIN: Bool) throws -> Enrolment {
        let record = try readMaster()
        guard !record.tpmBound else {
            throw Nu11Error(.alreadyExists, "this key store is already bound to a TPM", remedy: .tpmStatus)
        }
        guard !record.skeletonArmed else {
            throw Nu11Error(.invalidArgument, "the Skeleton Switch is armed; nothing was changed",
                            remedy: .disarmSkeletonToEnrol)
        }
        let device = try deviceKey()
        var opened: [(slot: Int, keys: DomainKeys, pin: SecretBytes)] = []
        var buckets: [UInt8] = []
        for pin in pins {
            let stretched = try record.stretch(pin: pin)
            buckets.append(TPMRecord.bucket(stretched: stretched))
            let kek = MasterRecord.kek(stretched: stretched, deviceKey: device, tpmSecret: nil)
            guard let (slot, keys, _) = try? record.open(pinKEK: kek), !opened.contains(where: { $0.slot == slot }) else {
                throw Nu11Error(.invalidArgument, "one of the PINs given opens no other slot of this key store; nothing was changed",
                                remedy: .advice(.otherPINsOnce))
            }
            opened.append((slot, keys, pin))
        }
        guard opened.first?.slot == 0 else {
            throw Nu11Error(.invalidArgument, "enrolling the TPM needs the primary PIN; nothing was changed", remedy: .primaryPINOnly)
        }
        let (salted, distinct) = try distinctBuckets(record, pins: pins, buckets: buckets)
        let connection = try TPMConnection()
        let recoveryKey = given ?? RecoveryKey.generate()
        let taking = try takeLockout(connection, recoveryKey: recoveryKey, mayBeOurs: given != nil && lockoutMayBeOurs, strongPIN: strongPIN)
        do {
            return try enrol(salted, opened: opened, buckets: distinct, pcrMask: pcrMask, state: state, recoveryKey: recoveryKey,
                             taking: taking, connection: connection)
        } catch {
            undoLockout(taking, connection, recoveryKey: recoveryKey)
            throw error
        }
    }

    /// Two PINs whose buckets are the same would need one TPM entry (docs/FORMAT.md §4.2c).
    /// Every slot is sealed again at enrolment, so a fresh salt costs nothing but another
    /// Argon2id per PIN: one is drawn until the given PINs' buckets differ (two PINs share a
    /// bucket once in 16 salts, three once in 5.5; eight draws leave about one enrolment in
    /// a million with three PINs refused, which says so).
    private func distinctBuckets(_ record: MasterRecord, pins: [SecretBytes], buckets: [UInt8]) throws -> (MasterRecord, [UInt8]) {
        var salted = record
        var buckets = buckets
        var draws = 0
        while Set(buckets).count < buckets.count {
            guard draws < Self.saltDraws else {
                throw Self.bucketsMeet
            }
            draws += 1
            salted = salted.resalted()
            buckets = try pins.map { TPMRecord.bucket(stretched: try salted.stretch(pin: $0)) }
        }
        return (salted, buckets)
    }

    static let saltDraws = 8
    static let bucketsMeet = Nu11Error(.invalidArgument, "two PINs of this key store would share one TPM entry; nothing was changed",
                                       remedy: .changeOnePINThenEnrol)

    private func enrol(_ record: MasterRecord, opened: [(slot: Int, keys: DomainKeys, pin: SecretBytes)], buckets: [UInt8],
                       pcrMask: UInt32, state: DeviceState, recoveryKey: SecretBytes, taking: LockoutTaking,
                       connection: TPMConnection) throws -> Enrolment {
        let device = try deviceKey()
        var tpm = try newTPMRecord(pcrMask: pcrMask, reserving: buckets, connection: connection)
        tpm.lockoutHeld = taking.held
        tpm.lockoutForeign = taking.foreign
        var bound = record.remade(tpm: tpm)
        var primary: UnlockedKeys?
        for entry in opened {
            guard let unlocked = try sealTPMSlot(&bound, slot: entry.slot, keys: entry.keys, pin: entry.pin, secret: nil,
                                                 skeleton: nil, connection: connection) else {
                connection.removeCounter(tpm.nvIndex)
                throw Self.bucketsMeet
            }
            if entry.slot == 0 { primary = unlocked }
        }
        guard let primary, let secret = primary.tpm?.secret else { throw Nu11Error(.internalError, "no primary entry") }
        tpm = bound.tpm ?? tpm
        tpm.recovery = try TPMRecord.sealRecovery(secret, recoveryKey: recoveryKey, deviceKey: device)
        bound.tpm = tpm
        try commit(bound, tpm: tpm, state: state, connection: connection)
        return Enrolment(recoveryKey: recoveryKey, unlocked: primary)
    }

    /// Sets the TPM record aside, re-seals the state under it, writes the master record (the
    /// commit point). Before it, a failure frees the new NV counter; after it, leaving the
    /// aside copy behind is harmless (the next state write removes it).
    private func commit(_ record: MasterRecord, tpm: TPMRecord, state: DeviceState, connection: TPMConnection) throws {
        do {
            try ProtectedFiles.writeAtomically(tpm.encoded(), to: tpmAsidePath)
            try saveState(state, tpm: tpm, connection: connection)
            do {
                try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
            } catch let error as Nu11Error where error.tookEffect {
                return  // committed; only its durability step failed
            }
        } catch {
            connection.removeCounter(tpm.nvIndex)
            throw error
        }
        // Cleanup of a copy only an interrupted change reads; a leftover is harmless (the
        // next state write removes it).
        try? ProtectedFiles.remove(tpmAsidePath)
    }

    /// A TPM record for this TPM: its primary key's name, a new NV counter, a new state
    /// object, three filler entries whose buckets avoid `reserving` (the PINs to be sealed).
    func newTPMRecord(pcrMask: UInt32, reserving: [UInt8], connection: TPMConnection) throws -> TPMRecord {
        let name = try connection.primaryName()
        let values = pcrMask == 0 ? [] : try connection.pcrValues(pcrMask)
        let stateSecret = SecretBytes(randomCount: 32)
        let state = try connection.seal(stateSecret, auth: nil, policy: TPMPolicy(pcrMask: pcrMask, noDA: true))
        let index = try connection.defineCounter(auth: Self.counterAuth(stateSecret: stateSecret))
        var tpm = TPMRecord(pcrMask: pcrMask, nvIndex: index, primaryName: name, buckets: [0xFF, 0xFF, 0xFF],
                            recovery: [UInt8](repeating: 0, count: 60), pcrValues: values,
                            entries: [[0], [0], [0]], stateObject: state)
        tpm.counterAuthed = true
        for slot in 0..<3 { try Self.filler(&tpm, slot: slot, avoiding: reserving, connection: connection) }
        return tpm
    }

    /// Unbinds the key store from the TPM: `pins` as for enrolment (each costs one TPM try).
    /// Returns the primary's unlock, and what failed after the commit point (to be reported
    /// as "done, but …").
    public func removeTPM(pins: [SecretBytes], state: DeviceState) throws -> (unlocked: UnlockedKeys, late: String?) {
        let record = try readMaster()
        guard let tpm = record.tpm else {
            throw Nu11Error(.notFound, "this key store is not bound to a TPM", remedy: .advice(.nothingToDo))
        }
        guard tpm.skeletonDeadline == 0 else {
            throw Nu11Error(.invalidArgument, "the Skeleton Switch is armed in the TPM; nothing was changed",
                            remedy: .disarmSkeletonFirst)
        }
        let device = try deviceKey()
        var unbound = record.remade(tpm: nil)
        var primary: UnlockedKeys?
        var done: Set<Int> = []
        for pin in pins {
            let unlocked = try unlockTPM(record, tpm: tpm, pin: pin)
            guard done.insert(unlocked.slot).inserted else {
                throw Nu11Error(.invalidArgument, "a PIN was given twice; nothing was changed", remedy: .advice(.otherPINsOnce))
            }
            let kek = MasterRecord.kek(stretched: try record.stretch(pin: pin), deviceKey: device, tpmSecret: nil)
            try unbound.seal(unlocked.keys, slot: unlocked.slot, kek: unbound.slotKEK(kek, slot: unlocked.slot))
            if unlocked.slot == 0 { primary = UnlockedKeys(slot: 0, keys: unlocked.keys, kek: unbound.slotKEK(kek, slot: 0), pinKEK: kek) }
        }
        guard let primary else {
            throw Nu11Error(.invalidArgument, "removing the TPM needs the primary PIN; nothing was changed", remedy: .primaryPINOnly)
        }
        let connection = try openTPM(tpm)
        try ProtectedFiles.writeAtomically(tpm.encoded(), to: tpmAsidePath)
        do {
            try ProtectedFiles.writeAtomically(unbound.encoded(), to: masterPath)
        } catch let error as Nu11Error where error.tookEffect {}
        // After the commit point nothing is rolled back: a state left under the TPM key is read
        // through the aside copy (while this TPM is reachable) until the next state write
        // re-seals it under the device key, and the caller says so.
        do {
            try ProtectedFiles.writeAtomically(state.sealed(deviceKey: device), to: statePath)
        } catch {
            return (primary, "the device state could not be re-sealed without the TPM yet (\((error as? Nu11Error)?.message ?? "\(error)")); the next command does it while this TPM is still reachable")
        }
        // Cleanup of a copy only an interrupted change reads; a leftover is harmless.
        try? ProtectedFiles.remove(tpmAsidePath)
        connection.removeCounter(tpm.nvIndex)
        return (primary, nil)
    }

    /// Opens the primary vault with the recovery key and the primary PIN, without the TPM the
    /// key store was enrolled with, and enrols this machine's TPM (the same recovery key
    /// keeps working). The backup and duress PINs' entries lived in the old TPM: those slots
    /// stop opening. `state`: the device state to start from (the old one was sealed by the
    /// old TPM).
    public func recoverTPM(recoveryKey: SecretBytes, pin: SecretBytes, state: DeviceState, strongPIN: Bool) throws -> UnlockedKeys {
        let record = try readMaster()
        guard let old = record.tpm else {
            throw Nu11Error(.notFound, "this key store is not bound to a TPM: there is nothing to recover",
                            remedy: .advice(.unlockWithPIN))
        }
        guard old.skeletonDeadline == 0 else {
            throw Nu11Error(.tpm, "the Skeleton Switch is armed in the TPM this key store was enrolled with: only that TPM, before its deadline, opens the primary vault",
                            remedy: .advice(.hardwareSwitchIsFinal))
        }
        let device = try deviceKey()
        let secret = try old.recoverSecret(recoveryKey, deviceKey: device)
        let stretched = try record.stretch(pin: pin)
        let kek = MasterRecord.kek(stretched: stretched, deviceKey: device, tpmSecret: secret)
        guard let keys = try? record.open(kek: record.slotKEK(kek, slot: 0), slot: 0) else { throw Nu11Error.wrongPIN }
        let connection = try TPMConnection()
        let sameTPM = try connection.primaryName() == old.primaryName
        let taking = try takeLockout(connection, recoveryKey: recoveryKey, mayBeOurs: sameTPM && old.lockoutHeld, strongPIN: strongPIN)
        // A person locked out by wrong PINs, on the TPM this key store holds: the recovery key clears the count.
        if taking.held && !taking.changedNow { try? resetLockout(connection, recoveryKey: recoveryKey) }
        do {
            var tpm = try newTPMRecord(pcrMask: old.pcrMask, reserving: [TPMRecord.bucket(stretched: stretched)], connection: connection)
            tpm.recovery = old.recovery
            tpm.lockoutHeld = taking.held
            tpm.lockoutForeign = taking.foreign
            var bound = record
            bound.tpm = tpm
            guard let unlocked = try sealTPMSlot(&bound, slot: 0, keys: keys, pin: pin, secret: secret, skeleton: nil,
                                                 connection: connection) else {
                throw Nu11Error(.internalError, "slot 0's bucket is taken")
            }
            try commit(bound, tpm: bound.tpm ?? tpm, state: state, connection: connection)
            // The old counter on this same TPM (re-enrolled after a lockout or a PCR change) is nobody's now.
            if sameTPM { connection.removeCounter(old.nvIndex) }
            return unlocked
        } catch {
            undoLockout(taking, connection, recoveryKey: recoveryKey)
            throw error
        }
    }

    /// Best effort, for wipe: frees the key store's NV counter on its TPM (only on that TPM).
    public func releaseTPMCounter() {
        guard let tpm = try? readMaster().tpm, let connection = try? openTPM(tpm) else { return }
        connection.removeCounter(tpm.nvIndex)
    }

    /// What `tpm status` shows.
    public struct TPMStatus: Sendable {
        public var enrolled: Bool
        public var thisTPM: Bool?
        public var pcrs: [Int]?
        public var nvIndex: String?
        public var lockoutFailures: Int?
        public var lockoutMaxTries: Int?
        public var lockoutIntervalSeconds: Int?
        /// Wrong PINs the TPM still allows before it locks (`lockoutMaxTries - lockoutFailures`).
        public var wrongPINsLeft: Int?
        /// Who can reset the TPM's wrong-PIN count early: "recovery key" (this key store set the
        /// lockout authorization), "someone else" (it was set before enrolment), "anyone" (empty).
        public var limitResetBy: String?
        public var skeletonArmedInTPM: Bool?
        /// TPM restarts the Skeleton object still allows before the next check-in.
        public var skeletonRestartsLeft: Int?
        public var skeletonSecondsLeft: Int?
        public var problem: String?
    }

    public func tpmStatus() throws -> TPMStatus {
        guard let tpm = try readMaster().tpm else {
            return TPMStatus(enrolled: false)
        }
        var status = TPMStatus(enrolled: true, pcrs: TPMRecord.pcrs(in: tpm.pcrMask),
                               nvIndex: "0x" + String(tpm.nvIndex, radix: 16), skeletonArmedInTPM: tpm.skeletonDeadline != 0)
        do {
            let connection = try TPMConnection()
            status.thisTPM = try connection.primaryName() == tpm.primaryName
            let lockout = try connection.lockout()
            status.lockoutFailures = Int(lockout.failures)
            status.lockoutMaxTries = Int(lockout.maxTries)
            status.lockoutIntervalSeconds = Int(lockout.interval)
            status.wrongPINsLeft = Int(lockout.maxTries) - Int(min(lockout.failures, lockout.maxTries))
            let set = try connection.lockoutAuthSet()
            status.limitResetBy = !set ? "anyone" : tpm.lockoutHeld && status.thisTPM == true ? "recovery key" : "someone else"
            if tpm.skeletonDeadline != 0, status.thisTPM == true {
                let now = try connection.clockInfo()
                status.skeletonSecondsLeft = now.clock >= tpm.skeletonDeadline ? 0 : Int((tpm.skeletonDeadline - now.clock) / 1000)
                if let limit = tpm.skeletonResetLimit {
                    status.skeletonRestartsLeft = now.resetCount > limit ? 0 : Int(limit - now.resetCount)
                }
            }
        } catch let error as Nu11Error {
            status.problem = error.message
        }
        return status
    }
}
