// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// A key store bound to a TPM (master record version 2, docs/FORMAT.md §4.3): unlocking,
/// sealing a PIN's entry, and the errors a person can act on.
extension KeyStore {
    static let otherMachine = Nu11Error(
        .tpm, "this key store is bound to another machine's TPM (or this TPM was cleared)",
        remedy: .recoverWithRecoveryKey(first: nil))

    /// Connects and checks that this is the TPM the key store was enrolled with.
    func openTPM(_ tpm: TPMRecord) throws -> TPMConnection {
        let connection = try TPMConnection()
        guard try connection.primaryName() == tpm.primaryName else { throw Self.otherMachine }
        return connection
    }

    /// Unseals an object; the TPM's refusals become errors a person can act on.
    func unseal(_ blob: [UInt8], auth: SecretBytes?, policy: TPMPolicy, tpm: TPMRecord,
                connection: TPMConnection) throws -> SecretBytes {
        do {
            return try connection.unseal(blob, auth: auth, policy: policy)
        } catch let refusal as TPMRefusal {
            throw explain(refusal, tpm: tpm, connection: connection)
        }
    }

    func explain(_ refusal: TPMRefusal, tpm: TPMRecord, connection: TPMConnection) -> Nu11Error {
        switch refusal {
        case .wrongAuth:
            return .wrongPIN
        case .lockedOut:
            let lockout = try? connection.lockout()
            let wait = Int(lockout?.interval ?? 0)
            let tries = lockout.map { " (\($0.failures) of \($0.maxTries) tries used)" } ?? ""
            let when = wait > 0 ? "it forgives one wrong PIN every \(DurationText.format(Double(wait))): try again in \(DurationText.format(Double(wait)))"
                : tpm.lockoutHeld ? "it stays locked until it is cleared with your recovery key"
                : "it stays locked until its owner clears it with the TPM's lockout authorization"
            return Nu11Error(.lockedOut, "the TPM is locked out after too many wrong PINs\(tries); \(when)",
                             remedy: tpm.lockoutHeld ? .clearTPMLockout : .advice(.waitTPMCounts))
        case .pcrMismatch:
            let now = (try? connection.pcrValues(tpm.pcrMask)) ?? []
            let pcrs = TPMRecord.pcrs(in: tpm.pcrMask)
            let changed = pcrs.enumerated().filter { i, _ in
                now.count == pcrs.count * 32 && tpm.pcrValues.count == pcrs.count * 32
                    && now[(32 * i)..<(32 * i + 32)] != tpm.pcrValues[(32 * i)..<(32 * i + 32)]
            }.map { "PCR \($0.element)\($0.element == 7 ? " (Secure Boot policy)" : "")" }
            let what = changed.isEmpty ? "the bound PCRs (\(pcrs.map(String.init).joined(separator: ","))) changed" : changed.joined(separator: ", ") + " changed"
            return Nu11Error(.tpm, "the TPM refuses the key store's secrets: \(what) since enrolment",
                             remedy: .recoverWithRecoveryKey(first: "undo the firmware or boot change"))
        case .deadlinePassed:
            if let now = try? connection.clockInfo(), now.clock < tpm.skeletonDeadline,
               let limit = tpm.skeletonResetLimit, now.resetCount > limit {
                return Nu11Error(.authenticationFailed, "the PIN opens nothing: the TPM was restarted more times since the last check-in than the Skeleton Switch allows (each power cut may set its clock back)",
                                 remedy: .nothingRecoverable)
            }
            return Nu11Error(.authenticationFailed, "the PIN opens nothing: the Skeleton Switch's deadline on the TPM's clock has passed",
                             remedy: .nothingRecoverable)
        case .notThisTPM:
            return Self.otherMachine
        }
    }

    /// The PIN's unlock in a TPM-bound key store: Argon2id once, then exactly one TPM
    /// attempt (the entry of the PIN's bucket, or — when no entry has that bucket — a
    /// decoy attempt, so every wrong PIN costs one of the TPM's tries).
    func unlockTPM(_ record: MasterRecord, tpm: TPMRecord, pin: SecretBytes) throws -> UnlockedKeys {
        let connection = try openTPM(tpm)
        let stretched = try record.stretch(pin: pin)
        let bucket = TPMRecord.bucket(stretched: stretched)
        let auth = TPMRecord.auth(stretched: stretched)
        let policy = TPMPolicy(pcrMask: tpm.pcrMask)
        guard let slot = tpm.buckets.firstIndex(of: bucket) else {
            _ = try unseal(tpm.entries[Int(bucket) % 3], auth: auth, policy: policy, tpm: tpm, connection: connection)
            throw Nu11Error.wrongPIN
        }
        let secret = try unseal(tpm.entries[slot], auth: auth, policy: policy, tpm: tpm, connection: connection)
        let pinKEK = MasterRecord.kek(stretched: stretched, deviceKey: try deviceKey(), tpmSecret: secret)
        let base = record.slotKEK(pinKEK, slot: slot)
        var skeleton: SecretBytes?
        if slot == 0 && tpm.skeletonDeadline != 0 {
            // Sealed under the same PIN's auth value: nobody unseals it ahead of time without the PIN.
            // (An object sealed before this had no auth value and noDA: the next check-in, part of
            // this unlock, replaces it.)
            let legacy = Self.sealedWithoutPIN(tpm.skeletonObject)
            skeleton = try unseal(tpm.skeletonObject, auth: legacy ? nil : auth, policy: skeletonPolicy(tpm), tpm: tpm, connection: connection)
        }
        let kek = skeleton.map { MasterRecord.skeletonKEK(base: base, skeletonSecret: $0) } ?? base
        guard let keys = try? record.open(kek: kek, slot: slot) else { throw Nu11Error.wrongPIN }
        return UnlockedKeys(slot: slot, keys: keys, kek: kek, tpm: TPMUnlock(secret: secret, baseKEK: base, skeleton: skeleton, auth: auth),
                            pinKEK: pinKEK)
    }

    /// The Skeleton object: "TPM clock < deadline" and the primary PIN's auth value, counted
    /// by the dictionary-attack lockout (a guess at it costs a TPM try like any PIN).
    func skeletonPolicy(_ tpm: TPMRecord) -> TPMPolicy {
        TPMPolicy(pcrMask: tpm.pcrMask, deadline: tpm.skeletonDeadline, noDA: false, resetLimit: tpm.skeletonResetLimit)
    }

    /// Whether a sealed object (TPM2B_PUBLIC first) has the noDA attribute: the Skeleton
    /// objects sealed before they took the PIN's auth value.
    static func sealedWithoutPIN(_ blob: [UInt8]) -> Bool {
        guard blob.count >= 10 else { return false }
        let attributes = blob[6..<10].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return attributes & 0x0000_0400 != 0  // TPMA_OBJECT_NODA
    }

    /// A fresh Skeleton secret sealed under the primary PIN's auth value and the deadline
    /// already in `tpm`. Every check-in and PIN change makes a new one, so a secret someone
    /// saved (with the PIN, before the deadline) is useless after it.
    func sealSkeleton(_ tpm: inout TPMRecord, auth: SecretBytes, connection: TPMConnection) throws -> SecretBytes {
        let skeleton = SecretBytes(randomCount: 32)
        if tpm.skeletonResetLimit == nil {
            // Sealed before the reset condition existed: the remaining interval's allowance.
            let now = try connection.clockInfo()
            let left = tpm.skeletonDeadline > now.clock ? Double(tpm.skeletonDeadline - now.clock) / 1000 : 0
            tpm.skeletonResetLimit = now.resetCount &+ Self.resetAllowance(seconds: left)
        }
        do {
            tpm.skeletonObject = try connection.seal(skeleton, auth: auth, policy: skeletonPolicy(tpm))
        } catch let refusal as TPMRefusal {
            throw explain(refusal, tpm: tpm, connection: connection)
        }
        return skeleton
    }

    /// Seals slot `index` of a TPM-bound record for `pin`: the PIN's entry (keeping `secret`,
    /// or a new one) and the slot under the new KEK. Returns nil when the PIN's bucket is
    /// another slot's (the same PIN, or one that would share its TPM entry).
    /// `replacing`: slots about to be cleared in the same write (their buckets do not count).
    func sealTPMSlot(_ record: inout MasterRecord, slot index: Int, keys: DomainKeys, pin: SecretBytes,
                     secret: SecretBytes?, skeleton: SecretBytes?, replacing: [Int] = [],
                     connection: TPMConnection) throws -> UnlockedKeys? {
        guard var tpm = record.tpm else { throw Nu11Error(.internalError, "the key store is not bound to a TPM") }
        let stretched = try record.stretch(pin: pin)
        let bucket = TPMRecord.bucket(stretched: stretched)
        if let other = tpm.buckets.firstIndex(of: bucket), other != index, !replacing.contains(other) { return nil }
        let tpmSecret = secret ?? SecretBytes(randomCount: 32)
        do {
            tpm.entries[index] = try connection.seal(tpmSecret, auth: TPMRecord.auth(stretched: stretched),
                                                     policy: TPMPolicy(pcrMask: tpm.pcrMask))
        } catch let refusal as TPMRefusal {
            throw explain(refusal, tpm: tpm, connection: connection)
        }
        tpm.buckets[index] = bucket
        let auth = TPMRecord.auth(stretched: stretched)
        var skeletonSecret = skeleton
        if index == 0 && skeleton != nil && tpm.skeletonDeadline != 0 {
            // The primary PIN changed while armed: the Skeleton object follows the new PIN
            // (same deadline, a fresh secret).
            skeletonSecret = try sealSkeleton(&tpm, auth: auth, connection: connection)
        }
        record.tpm = tpm
        let pinKEK = MasterRecord.kek(stretched: stretched, deviceKey: try deviceKey(), tpmSecret: tpmSecret)
        let base = record.slotKEK(pinKEK, slot: index)
        let kek = skeletonSecret.map { MasterRecord.skeletonKEK(base: base, skeletonSecret: $0) } ?? base
        try record.seal(keys, slot: index, kek: kek)
        return UnlockedKeys(slot: index, keys: keys, kek: kek, tpm: TPMUnlock(secret: tpmSecret, baseKEK: base, skeleton: skeletonSecret, auth: auth),
                            pinKEK: pinKEK)
    }

    /// An entry no PIN opens (random secret, random auth value, a bucket no other entry has).
    static func filler(_ tpm: inout TPMRecord, slot index: Int, avoiding reserved: [UInt8] = [], connection: TPMConnection) throws {
        tpm.entries[index] = try connection.seal(SecretBytes(randomCount: 32), auth: SecretBytes(randomCount: 32),
                                                 policy: TPMPolicy(pcrMask: tpm.pcrMask))
        tpm.buckets[index] = TPMRecord.freeBucket(avoiding: tpm.buckets.enumerated().filter { $0.offset != index }.map(\.element) + reserved)
    }

    /// The key that seals the device state of a TPM-bound key store: held by the TPM (an
    /// object without PIN, not counted as a wrong PIN), so the device key alone forges nothing.
    func stateKey(_ tpm: TPMRecord, connection: TPMConnection) throws -> SecretBytes {
        Subkey.derive(from: try stateSecret(tpm, connection: connection), purpose: "device state key")
    }

    func stateSecret(_ tpm: TPMRecord, connection: TPMConnection) throws -> SecretBytes {
        try unseal(tpm.stateObject, auth: nil, policy: TPMPolicy(pcrMask: tpm.pcrMask, noDA: true), tpm: tpm, connection: connection)
    }

    /// What reads and advances the NV counter: derived from the state object's secret, so a
    /// process that may use the TPM but cannot read the key store (another user) cannot
    /// advance it. Nil for a counter made before (empty auth).
    func counterAuth(_ tpm: TPMRecord, connection: TPMConnection) throws -> SecretBytes? {
        guard tpm.counterAuthed else { return nil }
        return Self.counterAuth(stateSecret: try stateSecret(tpm, connection: connection))
    }

    static func counterAuth(stateSecret: SecretBytes) -> SecretBytes { Subkey.derive(from: stateSecret, purpose: "counter auth") }
}
