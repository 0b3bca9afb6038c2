// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A key rotation's forward record (`forward/<tag>.n11f` in the key store): a vault's new
/// domain keys, wrapped under a subkey of the keys they replace.
///
///     0   4   magic "N11F"
///     4   1   version (1)
///     5   3   reserved, 0
///     8   16  tag of the new keys (where the chain leads; lets the duress PIN's set-up remove
///             the records that lead to the keys it now holds)
///     24  156 KeyWrap(payload of the new keys), associated data = bytes 0..<24 || tag of the old
///
/// The tag (the file's name) is the first 16 bytes of the old main key's subkey
/// "forward tag", so the holder of the old keys finds the record and nobody else learns
/// which keys it belongs to. A rotation writes the record before it re-wraps anything; an
/// interrupted rotation is finished from it by the next unlock, and the duress slot (which
/// holds a copy of the backup vault's keys) follows it to the backup vault's current keys.
public enum ForwardRecord {
    public static let magic: [UInt8] = Array("N11F".utf8)
    public static let byteCount = 24 + DomainKeys.payloadByteCount + KeyWrap.overhead

    /// The record's name for the keys it replaces (hex).
    public static func tag(of old: DomainKeys) -> String {
        Hex.encode(tagBytes(of: old))
    }

    static func tagBytes(of old: DomainKeys) -> [UInt8] {
        Subkey.derive(from: old.main, purpose: "forward tag").withUnsafeBytes { Array($0.prefix(16)) }
    }

    static func clearFields(new: DomainKeys) -> [UInt8] { magic + [1, 0, 0, 0] + tagBytes(of: new) }

    /// The tag of the keys a record leads to, read without any key.
    public static func destination(_ bytes: [UInt8]) -> String? {
        guard bytes.count == byteCount, Array(bytes[0..<4]) == magic else { return nil }
        return Hex.encode(Array(bytes[8..<24]))
    }

    public static func seal(new: DomainKeys, old: DomainKeys) throws -> [UInt8] {
        let clear = clearFields(new: new)
        let key = Subkey.derive(from: old.main, purpose: "forward wrap")
        return clear + (try KeyWrap.wrap(new.payload(), under: key, associatedData: clear + tagBytes(of: old)))
    }

    /// The new keys, if `old` are the keys this record replaces and it is intact.
    public static func open(_ bytes: [UInt8], old: DomainKeys) throws -> DomainKeys {
        guard bytes.count == byteCount, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "a key rotation record is damaged", remedy: .restoreKeyStore)
        }
        guard bytes[4] == 1 else {
            throw Nu11Error(.unsupportedVersion, "key rotation record version \(bytes[4]) is not supported", remedy: .upgrade)
        }
        let clear = Array(bytes[0..<24])
        let key = Subkey.derive(from: old.main, purpose: "forward wrap")
        do {
            let payload = try KeyWrap.unwrap(bytes[24...], under: key, associatedData: clear + tagBytes(of: old))
            return try DomainKeys.fromPayload(payload)
        } catch {
            throw Nu11Error(.corrupted, "a key rotation record does not open", remedy: .restoreKeyStore)
        }
    }
}
