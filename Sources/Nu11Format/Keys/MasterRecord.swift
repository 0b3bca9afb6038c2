// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// The device-bound secret of the key store (`device.n11d`): magic "N11D", version 1, 32
/// random bytes. Readable without the PIN — it protects what must be checked before unlock
/// (the "until first authentication" class) and binds the PIN's KEK to this key store.
public enum DeviceKeyRecord {
    public static let magic: [UInt8] = Array("N11D".utf8)
    public static let byteCount = 5 + 32

    public static func encode(_ key: SecretBytes) -> [UInt8] {
        magic + [1] + key.withUnsafeBytes { Array($0) }
    }

    public static func parse(_ bytes: [UInt8]) throws -> SecretBytes {
        guard bytes.count == byteCount, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "the device key record is damaged",
                            remedy: .restoreKeyStore)
        }
        guard bytes[4] == 1 else {
            throw Nu11Error(.unsupportedVersion, "device key version \(bytes[4]) is not supported", remedy: .upgrade)
        }
        return bytes.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[5...])) }
    }
}

/// The PIN-protected part of the key store (`master.n11k`):
///
///     0   4   magic "N11K"
///     4   1   version: 1, or 2 when bound to a TPM (docs/FORMAT.md §4.3: every slot's KEK
///                 then also needs a secret the TPM releases only for that PIN)
///     5   1   KDF algorithm: 1 = Argon2id v1.3, parallelism 1
///     6   1   flags: bit 0 = Skeleton Switch armed (bound into slot 0 only)
///     7   1   reserved, 0
///     8   4   KDF passes, big-endian
///     12  4   KDF memory in KiB, big-endian
///     16  16  KDF salt
///     32  3 × 156  slots: KeyWrap(payload of 128 bytes: role, main, fade and archive keys,
///                  then the keys' creation time as 8 big-endian bytes, then zeros),
///                  associated data = bytes 0..<32 || slot index
///                  (for slots 1 and 2 with the flags byte read as 0; byte 4 read as 1, or 2
///                  with a TPM, whatever the file's version)
///     500 …   version 2 and 4: the TPM record
///     last 32  version 3 and 4: slot 0's pepper P (FORMAT.md §4.2e): slot 0's KEK is
///                  HKDF-SHA-256(IKM = the PIN's KEK, salt = P, info = "nu11vlt kek slot 0 v1"),
///                  so a new P (`fido2 remove`) changes what opens slot 0 without a new PIN.
///
/// There are always three slots. A slot no PIN opens is 156 random bytes, so the file does
/// not tell whether a backup or duress PIN exists. Unlock runs Argon2id once and tries
/// every slot, so all PINs cost the same.
public struct MasterRecord: Sendable {
    public static let magic: [UInt8] = Array("N11K".utf8)
    public static let slotCount = 3
    public static let slotByteCount = DomainKeys.payloadByteCount + KeyWrap.overhead
    public static let byteCount = 32 + slotCount * slotByteCount

    public var parameters: KDFParameters
    public var salt: [UInt8]
    public var slots: [[UInt8]]
    /// Whether the Skeleton Switch is armed. The flag is part of slot 0's associated data,
    /// so clearing it in the file makes the primary PIN open nothing: it cannot be used to
    /// disarm the switch and keep the vault.
    public private(set) var skeletonArmed = false
    /// Version 2: the TPM record (appended to the file), and every slot's key-encryption key
    /// also needs its PIN's TPM secret. Kept in the same file so a PIN change, a new backup
    /// PIN or a Skeleton check-in commits the TPM entry and the slot in one atomic write.
    public var tpm: TPMRecord?
    public var tpmBound: Bool { tpm != nil }
    /// Slot 0's pepper (versions 3 and 4); nil in files written before it (versions 1 and 2),
    /// where slot 0's KEK is the PIN's.
    public var pepper: [UInt8]?

    /// A fresh pepper: whatever opened slot 0 before (a security key's copy of its KEK) no
    /// longer does once slot 0 is sealed again.
    public mutating func newPepper() { pepper = SecureRandom.bytes(32) }

    /// The KEK that opens slot `index`, from the KEK a PIN (and a TPM) gives.
    public func slotKEK(_ pinKEK: SecretBytes, slot index: Int) -> SecretBytes {
        guard index == 0, let pepper else { return pinKEK }
        let key = pinKEK.withUnsafeBytes { ikm in
            HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: pepper,
                                   info: Array("nu11vlt kek slot 0 v1".utf8), outputByteCount: 32)
        }
        return key.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// A new record with random filler in every slot (and a fresh salt). `skeletonArmed`
    /// carries the switch over when a record is re-made (a KDF cost change must not disarm it).
    public init(parameters: KDFParameters, skeletonArmed: Bool = false, pepper: [UInt8]? = SecureRandom.bytes(32)) {
        self.parameters = parameters
        salt = SecureRandom.bytes(Argon2id.saltByteCount)
        slots = (0..<Self.slotCount).map { _ in SecureRandom.bytes(Self.slotByteCount) }
        self.skeletonArmed = skeletonArmed
        self.pepper = pepper
    }

    private init(parameters: KDFParameters, salt: [UInt8], slots: [[UInt8]], skeletonArmed: Bool, tpm: TPMRecord?, pepper: [UInt8]?) {
        self.parameters = parameters
        self.salt = salt
        self.slots = slots
        self.skeletonArmed = skeletonArmed
        self.tpm = tpm
        self.pepper = pepper
    }

    /// The same salt and cost (so every PIN stretches to the same value), every slot filler,
    /// bound to `tpm` or to none: enrolment and removal re-seal the slots whose PINs were given.
    public func remade(tpm: TPMRecord?) -> MasterRecord {
        MasterRecord(parameters: parameters, salt: salt,
                     slots: (0..<Self.slotCount).map { _ in SecureRandom.bytes(Self.slotByteCount) },
                     skeletonArmed: skeletonArmed, tpm: tpm, pepper: pepper)
    }

    /// The same cost and switch, a fresh salt, every slot filler (no PIN opens it until its
    /// slot is sealed again): enrolment draws one when two PINs given would share a TPM bucket.
    public func resalted() -> MasterRecord {
        MasterRecord(parameters: parameters, salt: SecureRandom.bytes(Argon2id.saltByteCount),
                     slots: (0..<Self.slotCount).map { _ in SecureRandom.bytes(Self.slotByteCount) },
                     skeletonArmed: skeletonArmed, tpm: tpm, pepper: pepper)
    }

    var clearFields: [UInt8] { fields(flags: skeletonArmed ? 1 : 0) }

    func aad(slot: Int) -> [UInt8] { (slot == 0 ? clearFields : fields(flags: 0)) + [UInt8(slot)] }

    /// The file's version: 1 or 2 (TPM), 3 or 4 with the pepper.
    var version: UInt8 { (tpmBound ? 2 : 1) + (pepper == nil ? 0 : 2) }

    private func fields(flags: UInt8, version: UInt8? = nil) -> [UInt8] {
        var out = Self.magic + [version ?? (tpmBound ? 2 : 1), 1, flags, 0]
        BigEndian.append(parameters.iterations, to: &out)
        BigEndian.append(parameters.memoryKiB, to: &out)
        return out + salt
    }

    public func encoded() -> [UInt8] {
        fields(flags: skeletonArmed ? 1 : 0, version: version) + slots.joined() + (tpm?.encoded() ?? []) + (pepper ?? [])
    }

    public static func parse(_ bytes: [UInt8]) throws -> MasterRecord {
        guard bytes.count >= 5, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "key store master record is damaged (bad magic)",
                            remedy: .restoreKeyStore)
        }
        guard (1...4).contains(bytes[4]) else {
            throw Nu11Error(.unsupportedVersion, "key store version \(bytes[4]) is not supported",
                            remedy: .upgrade)
        }
        let peppered = bytes[4] >= 3
        let tpmBound = bytes[4] % 2 == 0
        let pepper = peppered && bytes.count >= byteCount + 32 ? Array(bytes.suffix(32)) : nil
        let bytes = peppered ? Array(bytes.dropLast(32)) : bytes
        guard !peppered || pepper != nil, !tpmBound ? bytes.count == byteCount : bytes.count > byteCount,
              bytes[5] == 1, bytes[6] <= 1, bytes[7] == 0 else {
            throw Nu11Error(.corrupted, "key store master record is damaged",
                            remedy: .restoreKeyStore)
        }
        let params = KDFParameters(iterations: BigEndian.uint32(bytes[8..<12]), memoryKiB: BigEndian.uint32(bytes[12..<16]))
        try params.validateRead()
        let slots = (0..<slotCount).map { i in Array(bytes[(32 + i * slotByteCount)..<(32 + (i + 1) * slotByteCount)]) }
        let tpm = tpmBound ? try TPMRecord.parse(Array(bytes[byteCount...])) : nil
        return MasterRecord(parameters: params, salt: Array(bytes[16..<32]), slots: slots, skeletonArmed: bytes[6] == 1, tpm: tpm,
                            pepper: pepper)
    }

    /// Argon2id of the PIN (normalised to NFC unless `raw`): the expensive step.
    public func stretch(pin: SecretBytes, raw: Bool = false) throws -> SecretBytes {
        try Argon2id.deriveKey(passphrase: raw ? pin : Passphrase.normalized(pin), salt: salt, parameters: parameters)
    }

    /// The key-encryption key from a stretched PIN. Version 1: HKDF-SHA-256(IKM = stretched,
    /// salt = device key, info = "nu11vlt kek v1"). Version 2 (TPM): IKM = stretched || the
    /// secret the TPM unsealed for this PIN, info = "nu11vlt kek v2 tpm".
    public static func kek(stretched: SecretBytes, deviceKey: SecretBytes, tpmSecret: SecretBytes?) -> SecretBytes {
        var ikm = stretched.withUnsafeBytes { Array($0) } + (tpmSecret?.withUnsafeBytes { Array($0) } ?? [])
        defer { secureZero(&ikm) }
        let info = tpmSecret == nil ? "nu11vlt kek v1" : "nu11vlt kek v2 tpm"
        let kek = deviceKey.withUnsafeBytes { device in
            HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: device,
                                   info: Array(info.utf8), outputByteCount: 32)
        }
        return kek.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// Slot 0's KEK while the Skeleton Switch is armed in the TPM: it also needs the secret
    /// the TPM releases only before the switch's deadline on its own clock.
    public static func skeletonKEK(base: SecretBytes, skeletonSecret: SecretBytes) -> SecretBytes {
        let kek = base.withUnsafeBytes { ikm in
            skeletonSecret.withUnsafeBytes { salt in
                HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: salt,
                                       info: Array("nu11vlt kek v2 skeleton".utf8), outputByteCount: 32)
            }
        }
        return kek.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// Opens slot `index` only.
    public func open(kek: SecretBytes, slot index: Int) throws -> DomainKeys {
        guard (0..<Self.slotCount).contains(index) else { throw Nu11Error.wrongPIN }
        return try DomainKeys.fromPayload(KeyWrap.unwrap(slots[index], under: kek, associatedData: aad(slot: index)))
    }

    /// Derives the key-encryption key for `pin` (the expensive step), bound to this device:
    /// KEK = HKDF-SHA-256(IKM = Argon2id(pin, salt), salt = device key, info = "nu11vlt kek v1").
    /// Without the device key the master record alone cannot be attacked offline; the device
    /// key is where a TPM-held secret will enter.
    /// The PIN is normalised to Unicode NFC first (`Passphrase`); `raw: true` derives from
    /// the bytes as typed, for PINs set before normalisation.
    public func deriveKEK(pin: SecretBytes, deviceKey: SecretBytes, raw: Bool = false) throws -> SecretBytes {
        guard !tpmBound else {
            throw Nu11Error(.internalError, "a TPM-bound key store derives its KEK with the TPM")
        }
        return Self.kek(stretched: try stretch(pin: pin, raw: raw), deviceKey: deviceKey, tpmSecret: nil)
    }

    /// Derives the KEK and opens the slot `pin` opens; a non-NFC PIN set before
    /// normalisation is tried as typed too (one more Argon2id run, only for such PINs).
    /// `kek` is the slot's own (slot 0's with the pepper); `pinKEK` the PIN's, before it.
    public func open(pin: SecretBytes, deviceKey: SecretBytes) throws -> (slot: Int, keys: DomainKeys, kek: SecretBytes, pinKEK: SecretBytes) {
        let kek = try deriveKEK(pin: pin, deviceKey: deviceKey)
        do {
            let (slot, keys, slotKEK) = try open(pinKEK: kek)
            return (slot, keys, slotKEK, kek)
        } catch let error as Nu11Error where error == .wrongPIN && Passphrase.nfcIfDifferent(pin) != nil {
            let rawKEK = try deriveKEK(pin: pin, deviceKey: deviceKey, raw: true)
            let (slot, keys, slotKEK) = try open(pinKEK: rawKEK)
            return (slot, keys, slotKEK, rawKEK)
        }
    }

    /// Tries every slot with the KEK a PIN gives (slot 0 through the pepper), always all of them.
    public func open(pinKEK: SecretBytes) throws -> (slot: Int, keys: DomainKeys, kek: SecretBytes) {
        var found: (Int, DomainKeys, SecretBytes)?
        for i in 0..<Self.slotCount {
            let kek = slotKEK(pinKEK, slot: i)
            if let payload = try? KeyWrap.unwrap(slots[i], under: kek, associatedData: aad(slot: i)),
               found == nil, let keys = try? DomainKeys.fromPayload(payload) {
                found = (i, keys, kek)
            }
        }
        guard let found else { throw Nu11Error.wrongPIN }
        return found
    }

    /// Tries every slot with `kek` (always all of them, for uniform timing).
    public func open(kek: SecretBytes) throws -> (slot: Int, keys: DomainKeys) {
        var found: (Int, DomainKeys)?
        for i in 0..<Self.slotCount {
            if let payload = try? KeyWrap.unwrap(slots[i], under: kek, associatedData: aad(slot: i)),
               found == nil, let keys = try? DomainKeys.fromPayload(payload) {
                found = (i, keys)
            }
        }
        guard let found else { throw Nu11Error.wrongPIN }
        return found
    }

    /// Seals `keys` into slot `index` under `kek`.
    public mutating func seal(_ keys: DomainKeys, slot index: Int, kek: SecretBytes) throws {
        guard (0..<Self.slotCount).contains(index) else {
            throw Nu11Error(.internalError, "slot \(index) does not exist")
        }
        slots[index] = try KeyWrap.wrap(keys.payload(), under: kek, associatedData: aad(slot: index))
    }

    /// Arms or disarms the Skeleton Switch; slot 0 is re-sealed with the primary keys.
    public mutating func setSkeletonArmed(_ armed: Bool, primary keys: DomainKeys, kek: SecretBytes) throws {
        skeletonArmed = armed
        try seal(keys, slot: 0, kek: kek)
    }

    /// Replaces slot `index` with random filler (shreds whatever it held). Clearing slot 0
    /// also disarms the Skeleton Switch, whose flag only slot 0 carries.
    public mutating func clear(slot index: Int) {
        slots[index] = SecureRandom.bytes(Self.slotByteCount)
        if index == 0 { skeletonArmed = false }
    }
}
