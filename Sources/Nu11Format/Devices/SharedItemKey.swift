// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// An item key for the other devices of a shared vault (docs/FORMAT.md § 9.6):
/// `Keys/<ItemID>.n11w` in the vault folder, written by the device that imported the item and
/// removed (overwritten, then unlinked) with it. It is wrapped under a subkey of the vault's
/// main key, which every paired device holds and a folder writer does not, so a key file
/// cannot be forged, and its associated data binds it to the vault, the item and its kind.
///
///     0   4   magic "N11W"
///     4   1   version = 2 (1: the same without the device ID, 32 bytes of header; still read)
///     5   1   item kind (§ 2)
///     6   2   zero
///     8   16  item ID (the file name's)
///     24  4   key generation (§ 4.2e) of the main key whose subkey wraps it
///     28  4   zero
///     32  16  the ID of the device that added the item (§ 9.6; version 2)
///     48  60  KeyWrap(item key, under: Subkey(main, "shared item key"),
///                     ad = "nu11vlt shared item key v1" || vault ID || header (bytes[0..<48]))
public enum SharedItemKey {
    public static let magic: [UInt8] = Array("N11W".utf8)
    public static let version: UInt8 = 2
    /// The header's length by version.
    static func headerCount(_ version: UInt8) -> Int { version == 1 ? 32 : 48 }
    public static let byteCount = 48 + 32 + KeyWrap.overhead
    public static let fileExtension = "n11w"

    /// What a key file says in clear: the item's kind, the generation that wraps it, and the
    /// device that added the item (nil in a version 1 file).
    public struct Head: Sendable, Equatable {
        public let kind: ItemKind
        public let generation: UInt32
        public let device: ItemID?
    }

    /// The key that wraps item keys for the other devices (one per generation's main key).
    public static func key(main: SecretBytes) -> SecretBytes { Subkey.derive(from: main, purpose: "shared item key") }

    static func header(kind: ItemKind, id: ItemID, generation: UInt32, device: ItemID) -> [UInt8] {
        var out = magic + [version, kind.rawValue, 0, 0] + id.bytes
        out += withUnsafeBytes(of: generation.bigEndian, Array.init)
        return out + [0, 0, 0, 0] + device.bytes
    }

    static func associatedData(vaultID: ItemID, header: [UInt8]) -> [UInt8] {
        Array("nu11vlt shared item key v1".utf8) + vaultID.bytes + header
    }

    /// A key file for `id`, added by `device`.
    public static func seal(itemKey: SecretBytes, kind: ItemKind, id: ItemID, vaultID: ItemID, generation: UInt32,
                            device: ItemID, key: SecretBytes) throws -> [UInt8] {
        let head = header(kind: kind, id: id, generation: generation, device: device)
        return head + (try KeyWrap.wrap(itemKey, under: key, associatedData: associatedData(vaultID: vaultID, header: head)))
    }

    /// The clear part of a key file (version 1 or 2).
    public static func head(_ bytes: [UInt8], id: ItemID) throws -> Head {
        guard bytes.count >= 5, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "the key file of item \(id.hex) is damaged or not a key file", remedy: .advice(.damaged), item: id.hex)
        }
        guard bytes[4] == 1 || bytes[4] == 2 else {
            throw Nu11Error(.unsupportedVersion, "the key file of item \(id.hex) has version \(bytes[4]), which this Nu11VLT does not read",
                            remedy: .upgrade, item: id.hex)
        }
        let count = headerCount(bytes[4])
        guard bytes.count == count + 32 + KeyWrap.overhead else {
            throw Nu11Error(.corrupted, "the key file of item \(id.hex) is damaged or not a key file", remedy: .advice(.damaged), item: id.hex)
        }
        guard let kind = ItemKind(rawValue: bytes[5]), bytes[6] == 0, bytes[7] == 0, bytes[28..<32].allSatisfy({ $0 == 0 }),
              (try? ItemID(bytes: bytes[8..<24])) == id else {
            throw Nu11Error(.corrupted, "the key file of item \(id.hex) is damaged or names another item", remedy: .advice(.damaged), item: id.hex)
        }
        let generation = bytes[24..<28].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Head(kind: kind, generation: generation, device: count == 48 ? try? ItemID(bytes: bytes[32..<48]) : nil)
    }

    /// The item key, when `key` wraps it for this vault and this item.
    public static func open(_ bytes: [UInt8], id: ItemID, vaultID: ItemID, key: SecretBytes) throws -> (kind: ItemKind, itemKey: SecretBytes) {
        let kind = try head(bytes, id: id).kind
        let count = headerCount(bytes[4])
        do {
            let itemKey = try KeyWrap.unwrap(bytes[count...], under: key, associatedData: associatedData(vaultID: vaultID, header: Array(bytes[0..<count])))
            return (kind, itemKey)
        } catch {
            throw Nu11Error(.authenticationFailed, "the key file of item \(id.hex) does not open with this vault's shared key (made by someone who does not hold it, or altered)",
                            remedy: .advice(.untrusted), item: id.hex)
        }
    }
}
