// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc
import Nu11Format
import Synchronization

/// The key store: every key record, kept outside the documents tree (default
/// `$XDG_STATE_HOME/nu11vlt`), never next to the data and never in a backup of it. What is
/// where: `KeyStoreLayout`. Folders are 0700, files 0600, every write atomic.
public final class KeyStore: Sendable {
    public let root: String
    public let layout: KeyStoreLayout

    public init(root: String) {
        self.root = root
        layout = KeyStoreLayout(root: root)
    }

    /// The master record and the device key as last read, with the stamp of the file they came
    /// from: an unlock reads each file once (the architecture review's first problem: 8 and 10
    /// opens per unlock before), and a file another process replaced (every write is a rename:
    /// a new inode) is read again.
    /// Shared by every `KeyStore` of the process (keyed by the file's path): the unlock makes
    /// several, for the pairing, the gate and the slot.
    private static let memo = Mutex<[String: Memo]>([:])

    struct Memo: Sendable {
        var master: (stamp: [Int], record: MasterRecord)?
        var device: (stamp: [Int], key: SecretBytes)?
    }

    static func stamp(_ path: String) -> [Int] {
        var st = stat()
        guard stat(path, &st) == 0 else { return [] }
        return [Int(st.st_ino), Int(st.st_size), st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec]
    }

    var masterPath: String { layout.master }
    var devicePath: String { layout.device }

    public var exists: Bool { POSIX.exists(masterPath) }

    /// The marker of a vault being created (`creating`): written before anything else of a new
    /// vault, removed as the last step, so a vault whose creation was cut short (a failing
    /// disk, a kill) is recognised as such, never taken for a vault or half of one.
    public var creationMarker: String { layout.creating }
    /// Empty: a `recover` put this key store in place and has not yet brought the index's
    /// entries under its keys (the next unlock does, from the items' sidecars).
    public var recoveryMarker: String { layout.recovering }
    public var isBeingCreated: Bool { POSIX.exists(layout.creating) }

    /// Creates a key store with fresh primary domain keys sealed under `pin` (or `keys`, the
    /// primary keys a recovery phrase brought back).
    public static func create(root: String, pin: SecretBytes, parameters: KDFParameters, created: UInt64 = 0,
                              keys given: DomainKeys? = nil) throws -> (KeyStore, UnlockedKeys) {
        try parameters.validateChosen()
        let store = KeyStore(root: root)
        guard !store.exists else {
            throw Nu11Error(.alreadyExists, "a key store already exists at \(root)",
                            remedy: .otherKeyStore, item: root)
        }
        try ProtectedFiles.makeDirectory(root)
        try store.createMissingPacks()
        let device = try store.deviceKey(createIfMissing: true)
        var record = MasterRecord(parameters: parameters)
        let keys = given?.withRole(.primary) ?? DomainKeys.generate(role: .primary, created: created)
        let pinKEK = try record.deriveKEK(pin: pin, deviceKey: device)
        let kek = record.slotKEK(pinKEK, slot: 0)
        try record.seal(keys, slot: 0, kek: kek)
        try ProtectedFiles.writeAtomically(record.encoded(), to: store.masterPath)
        return (store, UnlockedKeys(slot: 0, keys: keys, kek: kek, pinKEK: pinKEK))
    }

    /// The master record's path (a session compares its stamp to see another program's change).
    public var masterRecordPath: String { masterPath }

    /// The slot `held` opened, read again with its key-encryption key: after another program
    /// rotated the keys (`rekey` re-seals the slot under the same KEK). Nil when the slot no
    /// longer opens with it (the PIN was changed elsewhere).
    public func reopen(_ held: UnlockedKeys) throws -> UnlockedKeys? {
        guard let (slot, keys) = try? readMaster().open(kek: held.kek), slot == held.slot else { return nil }
        return held.with(keys: keys)
    }

    public func readMaster() throws -> MasterRecord {
        guard exists else {
            throw Nu11Error(.notFound, "no key store at \(root)",
                            remedy: .createVaultOrPointAtKeyStore, item: root)
        }
        let stamp = Self.stamp(masterPath)
        let path = masterPath
        if !stamp.isEmpty, let cached = Self.memo.withLock({ $0[path]?.master }), cached.stamp == stamp { return cached.record }
        let record = try MasterRecord.parse(ProtectedFiles.read(masterPath, limit: 64 << 10))
        if !stamp.isEmpty && Self.stamp(masterPath) == stamp { Self.memo.withLock { $0[path, default: Memo()].master = (stamp, record) } }
        return record
    }

    /// Runs Argon2id once and tries every slot. Any failure is the generic wrong-PIN error.
    public func unlock(pin: SecretBytes) throws -> UnlockedKeys {
        let record = try readMaster()
        if let tpm = record.tpm { return try unlockTPM(record, tpm: tpm, pin: pin) }
        let (slot, keys, kek, pinKEK) = try record.open(pin: pin, deviceKey: deviceKey())
        return UnlockedKeys(slot: slot, keys: keys, kek: kek, pinKEK: pinKEK)
    }

    /// Re-seals the slot `current` opens under `new`. No content is re-encrypted. With new
    /// `parameters` the salt and cost change for every slot, so every slot in use must be
    /// re-sealed: `others` are the other PINs of this key store (the file cannot tell which
    /// slots are in use). The primary PIN must be among them, since its slot carries the
    /// Skeleton Switch; a slot whose PIN is not given becomes filler — the caller asked for
    /// the PINs, so nothing is dropped silently.
    @discardableResult
    public func changePIN(current: SecretBytes, new: SecretBytes, parameters: KDFParameters? = nil,
                          others: [SecretBytes] = []) throws -> UnlockedKeys {
        try changePIN(unlocked: unlock(pin: current), new: new, parameters: parameters, others: others)
    }

    /// The same, for a caller that holds its slot's key-encryption key from the unlock (no
    /// Argon2id run for the current PIN). Returns the slot unlocked under the new PIN.
    /// `replacing`: new domain keys for this slot (a rotation that commits with the PIN change).
    public func changePIN(unlocked current: UnlockedKeys, new: SecretBytes, parameters: KDFParameters? = nil,
                          others: [SecretBytes] = [], replacing: DomainKeys? = nil) throws -> UnlockedKeys {
        var record = try readMaster()
        let device = try deviceKey()
        let (slot, opened) = try record.open(kek: current.kek)
        let keys = replacing ?? opened
        if let tpm = record.tpm {
            if let parameters, parameters != record.parameters {
                throw Nu11Error(.invalidArgument, "the KDF cost of a TPM-bound key store cannot change; nothing was changed",
                                remedy: .removeTPMToChangeCost)
            }
            guard let held = current.tpm else { throw Nu11Error(.internalError, "a TPM unlock without its TPM secret") }
            let connection = try openTPM(tpm)
            guard let changed = try sealTPMSlot(&record, slot: slot, keys: keys, pin: new, secret: held.secret,
                                                skeleton: held.skeleton, connection: connection) else {
                throw Self.pinInUse
            }
            try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
            return changed
        }
        var reseal: [(slot: Int, keys: DomainKeys, pin: SecretBytes)] = [(slot, keys, new)]
        if let parameters, parameters != record.parameters {
            try parameters.validateChosen()
            for other in others {
                guard let (s, k, _, _) = try? record.open(pin: other, deviceKey: device),
                      !reseal.contains(where: { $0.slot == s }) else {
                    throw Nu11Error(.invalidArgument, "one of the other PINs given opens no other slot of this key store; nothing was changed",
                                    remedy: .advice(.otherPINsOnce))
                }
                reseal.append((s, k, other))
            }
            guard reseal.contains(where: { $0.slot == 0 }) else {
                throw Nu11Error(.invalidArgument, "a KDF cost change needs the primary PIN too; nothing was changed",
                                remedy: .primaryPINForCostChange)
            }
            record = MasterRecord(parameters: parameters, skeletonArmed: record.skeletonArmed, pepper: record.pepper)
        }
        let newKEK = try record.deriveKEK(pin: new, deviceKey: device)
        if let (s, _, _) = try? record.open(pinKEK: newKEK), s != slot {
            throw Nu11Error(.invalidArgument, "the new PIN is already in use in this key store",
                            remedy: .otherPIN)
        }
        for entry in reseal {
            let kek = entry.pin === new ? newKEK : try record.deriveKEK(pin: entry.pin, deviceKey: device)
            if entry.slot != slot && kek.constantTimeEquals(newKEK) {
                throw Nu11Error(.invalidArgument, "the new PIN is already in use in this key store", remedy: .otherPIN)
            }
            try record.seal(entry.keys, slot: entry.slot, kek: record.slotKEK(kek, slot: entry.slot))
        }
        try ProtectedFiles.writeAtomically(record.encoded(), to: masterPath)
        return UnlockedKeys(slot: slot, keys: keys, kek: record.slotKEK(newKEK, slot: slot), pinKEK: newKEK)
    }

    static let pinInUse = Nu11Error(
        .invalidArgument, "that PIN cannot be used: it is another PIN of this key store, or (with a TPM) it would share a TPM entry with one",
        remedy: .otherPIN)

    /// Whether `parameters` differ from the key store's current KDF cost.
    public func kdfDiffers(_ parameters: KDFParameters) throws -> Bool { try readMaster().parameters != parameters }

    /// The device-bound key; created on first use.
    public func deviceKey(createIfMissing: Bool = false) throws -> SecretBytes {
        if !POSIX.exists(devicePath) {
            guard createIfMissing else {
                throw Nu11Error(.notFound, "the device key is missing from \(root)",
                                remedy: .restoreKeyStore, item: devicePath)
            }
            let key = SecretBytes(randomCount: 32)
            var bytes = DeviceKeyRecord.encode(key)
            defer { secureZero(&bytes) }
            try ProtectedFiles.writeAtomically(bytes, to: devicePath)
            return key
        }
        let stamp = Self.stamp(devicePath)
        let path = devicePath
        if !stamp.isEmpty, let cached = Self.memo.withLock({ $0[path]?.device }), cached.stamp == stamp { return cached.key }
        var bytes = try ProtectedFiles.read(devicePath, limit: 64)
        defer { secureZero(&bytes) }
        let key = try DeviceKeyRecord.parse(bytes)
        if !stamp.isEmpty && Self.stamp(devicePath) == stamp { Self.memo.withLock { $0[path, default: Memo()].device = (stamp, key) } }
        return key
    }
}

/// The domain keys of the slot a PIN opened, and the key-encryption key that opened it
/// (kept while the vault is open so the slot can be re-sealed without stretching the PIN
/// again; zeroed when the last reference goes).
public struct UnlockedKeys: Sendable {
    public let slot: Int
    public let keys: DomainKeys
    public let kek: SecretBytes
    /// With a TPM: the slot's TPM secret and the KEK's parts (to re-seal the PIN's entry).
    public let tpm: TPMUnlock?
    /// The KEK the PIN gave (with a TPM: and the slot's TPM secret), before slot 0's pepper and
    /// the Skeleton secret; nil when a security key opened the slot (it gives slot 0's KEK only).
    /// Changing slot 0's pepper (`fido2 remove`) needs it.
    public let pinKEK: SecretBytes?

    public init(slot: Int, keys: DomainKeys, kek: SecretBytes, tpm: TPMUnlock? = nil, pinKEK: SecretBytes? = nil) {
        self.slot = slot
        self.keys = keys
        self.kek = kek
        self.tpm = tpm
        self.pinKEK = pinKEK
    }

    /// The same PIN's unlock with other domain keys (a rotation).
    public func with(keys: DomainKeys) -> UnlockedKeys { UnlockedKeys(slot: slot, keys: keys, kek: kek, tpm: tpm, pinKEK: pinKEK) }
}

/// What a TPM unlock keeps while the vault is open.
public struct TPMUnlock: Sendable {
    /// The slot's TPM secret (a new PIN for the slot seals the same secret).
    public let secret: SecretBytes
    /// The KEK without the Skeleton secret.
    public let baseKEK: SecretBytes
    /// The Skeleton secret, when slot 0 was opened while the switch is armed in the TPM.
    public let skeleton: SecretBytes?
    /// The PIN's TPM auth value (slot 0: the Skeleton object is sealed under it too, so the
    /// Skeleton secret never opens without the PIN).
    public let auth: SecretBytes?

    public init(secret: SecretBytes, baseKEK: SecretBytes, skeleton: SecretBytes?, auth: SecretBytes? = nil) {
        self.secret = secret
        self.baseKEK = baseKEK
        self.skeleton = skeleton
        self.auth = auth
    }
}
