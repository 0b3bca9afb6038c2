// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// What a TPM-bound key store keeps about its TPM (`tpm.n11t`, docs/FORMAT.md §4.3):
///
///     0   4   magic "N11T"
///     4   1   version (2; 1 = written before the trailer existed, read as trailer 0xFFFFFFFF, 0)
///     5   3   reserved, 0
///     8   4   PCR mask, big-endian (bit i = PCR i of the SHA-256 bank; 0 = not bound to PCRs)
///     12  4   NV counter index, big-endian (rollback detection of the device state)
///     16  34  the TPM's storage primary key name (identifies the TPM's owner seed)
///     50  8   hardware Skeleton deadline on the TPM's clock (ms), big-endian; 0 = not armed
///     58  3   bucket of each PIN entry (slot order), 0..<16, all different
///     61  3   reserved, 0
///     64  60  KeyWrap(slot 0's TPM secret) under the recovery key's wrapping key,
///             associated data "N11T recovery v1"
///     124 32n SHA-256 values of the bound PCRs at enrolment (lowest first; n = bits in the mask)
///     then 5 objects, each a 2-byte big-endian length and TPM2B_PUBLIC || TPM2B_PRIVATE:
///             the PIN entries of slots 0, 1, 2, the device-state object, the Skeleton object
///             (length 0 when not armed)
///     then (version 2) 4 bytes: the Skeleton object's TPM reset limit, big-endian (its policy
///             also requires resetCount <= this; 0xFFFFFFFF = no such condition), and 1 byte of
///             flags: bit 0 = this key store set the TPM's lockout authorization (derived from
///             its recovery key), bit 1 = the lockout authorization was someone else's at
///             enrolment (the TPM's wrong-PIN limit is theirs to reset), bit 2 = the NV counter
///             needs Subkey(state object's secret, "counter auth"); other bits 0
///
/// Each PIN entry seals a 32-byte secret whose auth value is derived from the stretched PIN
/// (so the TPM counts every wrong PIN); an entry no PIN uses seals random bytes under a
/// random auth value and cannot be told apart. A PIN is tried only against the entry of
/// its bucket, so one wrong PIN costs exactly one of the TPM's tries.
public struct TPMRecord: Sendable, Equatable {
    public static let magic: [UInt8] = Array("N11T".utf8)
    public static let bucketCount = 16
    static let recoveryAAD = Array("N11T recovery v1".utf8)

    public var pcrMask: UInt32
    public var nvIndex: UInt32
    public var primaryName: [UInt8]
    public var skeletonDeadline: UInt64
    public var buckets: [UInt8]
    public var recovery: [UInt8]
    public var pcrValues: [UInt8]
    /// The PIN entries (slot order), the device-state object, the Skeleton object.
    public var entries: [[UInt8]]
    public var stateObject: [UInt8]
    public var skeletonObject: [UInt8]
    /// The Skeleton object's "resetCount <= limit" condition (nil: sealed before it existed).
    public var skeletonResetLimit: UInt32?
    /// This key store holds the TPM's lockout authorization (derived from its recovery key).
    public var lockoutHeld = false
    /// The TPM's lockout authorization was set by someone else at enrolment.
    public var lockoutForeign = false
    /// The NV counter needs an auth value derived from the device-state object's secret
    /// (counters made before it have an empty one).
    public var counterAuthed = false

    public init(pcrMask: UInt32, nvIndex: UInt32, primaryName: [UInt8], buckets: [UInt8], recovery: [UInt8],
                pcrValues: [UInt8], entries: [[UInt8]], stateObject: [UInt8]) {
        self.pcrMask = pcrMask
        self.nvIndex = nvIndex
        self.primaryName = primaryName
        skeletonDeadline = 0
        self.buckets = buckets
        self.recovery = recovery
        self.pcrValues = pcrValues
        self.entries = entries
        self.stateObject = stateObject
        skeletonObject = []
    }

    /// PCR indexes in the mask, lowest first.
    public static func pcrs(in mask: UInt32) -> [Int] { (0..<24).filter { mask & (1 << UInt32($0)) != 0 } }

    public func encoded() -> [UInt8] {
        var out = Self.magic + [2, 0, 0, 0]
        BigEndian.append(pcrMask, to: &out)
        BigEndian.append(nvIndex, to: &out)
        out += primaryName
        BigEndian.append(skeletonDeadline, to: &out)
        out += buckets + [0, 0, 0] + recovery + pcrValues
        for object in entries + [stateObject, skeletonObject] {
            out += [UInt8(object.count >> 8), UInt8(object.count & 0xFF)] + object
        }
        BigEndian.append(skeletonResetLimit ?? UInt32.max, to: &out)
        out.append((lockoutHeld ? 1 : 0) | (lockoutForeign ? 2 : 0) | (counterAuthed ? 4 : 0))
        return out
    }

    public static func parse(_ bytes: [UInt8]) throws -> TPMRecord {
        func damaged() -> Nu11Error {
            Nu11Error(.corrupted, "the key store's TPM record (tpm.n11t) is damaged",
                      remedy: .recoverWithRecoveryKey(first: "restore the key store from your own copy"))
        }
        guard bytes.count >= 124, Array(bytes[0..<4]) == magic else { throw damaged() }
        guard bytes[4] == 1 || bytes[4] == 2 else {
            throw Nu11Error(.unsupportedVersion, "TPM record version \(bytes[4]) is not supported", remedy: .upgrade)
        }
        let mask = BigEndian.uint32(bytes[8..<12])
        guard mask < 1 << 24 else { throw damaged() }
        let buckets = Array(bytes[58..<61])
        guard buckets.allSatisfy({ Int($0) < bucketCount }), Set(buckets).count == 3 else { throw damaged() }
        var offset = 124 + 32 * pcrs(in: mask).count
        guard bytes.count >= offset else { throw damaged() }
        let values = Array(bytes[124..<offset])
        var objects: [[UInt8]] = []
        for _ in 0..<5 {
            guard bytes.count >= offset + 2 else { throw damaged() }
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            guard bytes.count >= offset + 2 + length else { throw damaged() }
            objects.append(Array(bytes[(offset + 2)..<(offset + 2 + length)]))
            offset += 2 + length
        }
        let trailer = bytes[4] == 2 ? 5 : 0
        guard offset + trailer == bytes.count, objects[0..<4].allSatisfy({ !$0.isEmpty }) else { throw damaged() }
        var record = TPMRecord(pcrMask: mask, nvIndex: BigEndian.uint32(bytes[12..<16]), primaryName: Array(bytes[16..<50]),
                               buckets: buckets, recovery: Array(bytes[64..<124]), pcrValues: values,
                               entries: Array(objects[0..<3]), stateObject: objects[3])
        record.skeletonDeadline = BigEndian.uint64(bytes[50..<58])
        record.skeletonObject = objects[4]
        if trailer != 0 {
            let limit = BigEndian.uint32(bytes[offset..<(offset + 4)])
            record.skeletonResetLimit = limit == UInt32.max ? nil : limit
            let flags = bytes[offset + 4]
            guard flags & ~7 == 0 else { throw damaged() }
            record.lockoutHeld = flags & 1 != 0
            record.lockoutForeign = flags & 2 != 0
            record.counterAuthed = flags & 4 != 0
        }
        guard (record.skeletonDeadline == 0) == record.skeletonObject.isEmpty else { throw damaged() }
        return record
    }

    // MARK: what a PIN's stretched value gives

    /// The entry a PIN is tried against (of 16).
    public static func bucket(stretched: SecretBytes) -> UInt8 {
        Subkey.derive(from: stretched, purpose: "tpm bucket").withUnsafeBytes { $0[0] } & UInt8(bucketCount - 1)
    }

    /// The auth value of a PIN's TPM entry.
    public static func auth(stretched: SecretBytes) -> SecretBytes { Subkey.derive(from: stretched, purpose: "tpm auth") }

    /// A bucket none of `others` uses, for an entry no PIN opens.
    public static func freeBucket(avoiding others: [UInt8]) -> UInt8 {
        while true {
            let candidate = SecureRandom.bytes(1)[0] & UInt8(bucketCount - 1)
            if !others.contains(candidate) { return candidate }
        }
    }

    // MARK: recovery

    public func recoverSecret(_ recoveryKey: SecretBytes, deviceKey: SecretBytes) throws -> SecretBytes {
        do {
            return try KeyWrap.unwrap(recovery, under: RecoveryKey.wrappingKey(recoveryKey, deviceKey: deviceKey),
                                      associatedData: Self.recoveryAAD)
        } catch {
            throw Nu11Error(.authenticationFailed, "that recovery key does not open this key store",
                            remedy: .advice(.typeTPMRecoveryKey))
        }
    }

    /// The TPM lockout authorization value a key store sets: derived from the recovery key
    /// alone (not the device key), so the recovery key gives it back even after the key store
    /// is gone (`nu11vlt tpm release-lockout`).
    public static func lockoutAuth(recoveryKey: SecretBytes) -> SecretBytes {
        let derived = recoveryKey.withUnsafeBytes { ikm in
            HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: Array("nu11vlt tpm lockout".utf8),
                                   info: Array("nu11vlt tpm lockout auth v1".utf8), outputByteCount: 32)
        }
        return derived.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    public static func sealRecovery(_ secret: SecretBytes, recoveryKey: SecretBytes, deviceKey: SecretBytes) throws -> [UInt8] {
        try KeyWrap.wrap(secret, under: RecoveryKey.wrappingKey(recoveryKey, deviceKey: deviceKey), associatedData: recoveryAAD)
    }
}

/// The recovery key: 128 random bits written as 32 "modhex" letters (c b d e f g h i j k l n
/// r t u v — the same on every keyboard layout) in 8 groups of 4, as systemd does. It stands
/// in for the TPM, never for the PIN: with it and the primary PIN the primary vault opens on
/// any machine, and the TPM can be enrolled again.
public enum RecoveryKey {
    static let alphabet = Array("cbdefghijklnrtuv")

    public static func generate() -> SecretBytes { SecretBytes(randomCount: 16) }

    /// The grouped text (shown once; never stored).
    public static func text(_ key: SecretBytes) -> String {
        key.withUnsafeBytes { bytes in
            let letters = bytes.flatMap { [alphabet[Int($0 >> 4)], alphabet[Int($0 & 0x0F)]] }
            return stride(from: 0, to: letters.count, by: 4).map { String(letters[$0..<($0 + 4)]) }.joined(separator: "-")
        }
    }

    /// What a parsed text stands for: the vault's recovery phrase, or a TPM's recovery key
    /// (the same kind of secret; the error names the one the user was asked for).
    public enum Use: Sendable { case phrase, tpmKey, pairingCode }

    /// Parses what a person typed: case, spaces and dashes do not matter. A letter no phrase
    /// has is named with its group; a wrong count says how many letters there were.
    public static func parse(_ typed: SecretBytes, as use: Use = .phrase) throws -> SecretBytes {
        var nibbles: [UInt8] = []
        defer { secureZero(&nibbles) }
        var stray: Character?
        var strayAt = 0
        typed.withUnsafeBytes { raw in
            for byte in raw {
                let c = Character(Unicode.Scalar(byte)).lowercased().first ?? " "
                if c == " " || c == "-" || c == "\n" || c == "\r" || c == "\t" { continue }
                guard let i = alphabet.firstIndex(of: c) else {
                    if stray == nil { (stray, strayAt) = (c, nibbles.count) }
                    nibbles.append(0)
                    continue
                }
                nibbles.append(UInt8(i))
            }
        }
        let what = switch use { case .phrase: "recovery phrase"; case .tpmKey: "recovery key"; case .pairingCode: "pairing code" }
        let advice: Advice = switch use { case .phrase: .typeRecoveryPhrase; case .tpmKey: .typeTPMRecoveryKey; case .pairingCode: .typePairingCode }
        if let stray {
            // Only a letter or digit is shown: it is one of 32, not the secret.
            let shown = stray.isASCII && (stray.isLetter || stray.isNumber) ? "'\(stray)'" : "a character"
            throw Nu11Error(.invalidArgument, "that is not a \(what): group \(strayAt / 4 + 1) has \(shown), which no \(what) has (its letters are c b d e f g h i j k l n r t u v)",
                            remedy: .advice(advice))
        }
        guard nibbles.count == 32 else {
            throw Nu11Error(.invalidArgument, "that is not a \(what): it has \(nibbles.count) letter\(nibbles.count == 1 ? "" : "s"), a \(what) has 32 (8 groups of 4, from c b d e f g h i j k l n r t u v)",
                            remedy: .advice(advice))
        }
        var bytes = (0..<16).map { nibbles[2 * $0] << 4 | nibbles[2 * $0 + 1] }
        return SecretBytes(consuming: &bytes)
    }

    /// The group (1…8) of a likely typo: the one letter changed, or two neighbours swapped,
    /// that turns `typed` into the secret `matches` accepts; nil when no single slip does.
    /// (At most 32 × 15 + 31 candidates; each is one cheap check.)
    public static func typoGroup(_ typed: SecretBytes, matches: (SecretBytes) -> Bool) -> Int? {
        var nibbles = typed.withUnsafeBytes { raw in (0..<32).map { i in (raw[i / 2] >> (i % 2 == 0 ? 4 : 0)) & 0x0F } }
        defer { secureZero(&nibbles) }
        func candidate() -> SecretBytes {
            var bytes = (0..<16).map { nibbles[2 * $0] << 4 | nibbles[2 * $0 + 1] }
            return SecretBytes(consuming: &bytes)
        }
        for position in 0..<32 {
            let kept = nibbles[position]
            for value in UInt8(0)..<16 where value != kept {
                nibbles[position] = value
                if matches(candidate()) { return position / 4 + 1 }
            }
            nibbles[position] = kept
        }
        for position in 0..<31 where nibbles[position] != nibbles[position + 1] {
            nibbles.swapAt(position, position + 1)
            defer { nibbles.swapAt(position, position + 1) }
            if matches(candidate()) { return position / 4 + 1 }
        }
        return nil
    }

    static func wrappingKey(_ key: SecretBytes, deviceKey: SecretBytes) -> SecretBytes {
        let derived = key.withUnsafeBytes { ikm in
            deviceKey.withUnsafeBytes { salt in
                HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: salt,
                                       info: Array("nu11vlt recovery v1".utf8), outputByteCount: 32)
            }
        }
        return derived.withUnsafeBytes { SecretBytes(copying: $0) }
    }
}
