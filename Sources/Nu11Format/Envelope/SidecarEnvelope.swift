// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// `Meta/<ID>.n11m`, an item's sidecar (docs/FORMAT.md §2.2): what the index holds about the
/// item, sealed under the item's own key, and its recovery seal in the clear — so that a lost
/// or damaged index is rebuilt from the vault folder and the key store (or the phrase).
///
///     0    4   magic "N11M"
///     4    1   version 1
///     5    1   kind
///     6    1   domain
///     7    1   flags: bit 0 = a recovery seal follows (other bits 0)
///     8    16  item ID
///     24   92  the item key sealed to the recovery phrase (§5.2), or 92 zero bytes
///     116  …   SmallSeal(plain, Subkey(item key, "item sidecar"), ad = bytes[0..<7] || 0 || item ID)
///
/// The associated data is the first 24 bytes with the flags byte as 0, so a new recovery
/// seal (a new phrase) replaces bytes 7 and 24..<116 without the item key. (The recovery
/// seal authenticates itself: under the phrase's key, bound to the vault and item, §5.2.)
public enum SidecarEnvelope {
    public static let magic = Array("N11M".utf8)
    public static let version: UInt8 = 1
    public static let recoverySealBytes = 92
    public static let headBytes = 24 + recoverySealBytes
    /// Far more than any metadata (a name is at most a few KiB).
    public static let maxBytes = 1 << 20

    public struct Head: Sendable, Equatable {
        public var kind: ItemKind
        public var domain: Domain
        public var itemID: ItemID
        public var recoverySeal: [UInt8]?
    }

    public static func key(_ itemKey: SecretBytes) -> SecretBytes { Subkey.derive(from: itemKey, purpose: "item sidecar") }

    static func prefix(kind: ItemKind, domain: Domain, id: ItemID, sealed: Bool) -> [UInt8] {
        magic + [version, kind.rawValue, domain.rawValue, sealed ? 1 : 0] + id.bytes
    }

    static func associatedData(_ bytes: [UInt8]) -> [UInt8] { Array(bytes[0..<7]) + [0] + Array(bytes[8..<24]) }

    public static func seal(_ plain: [UInt8], kind: ItemKind, domain: Domain, id: ItemID,
                            recoverySeal: [UInt8]?, itemKey: SecretBytes) throws -> [UInt8] {
        if let recoverySeal, recoverySeal.count != recoverySealBytes {
            throw Nu11Error(.internalError, "a recovery seal is \(recoverySealBytes) bytes, not \(recoverySeal.count)")
        }
        let head = prefix(kind: kind, domain: domain, id: id, sealed: recoverySeal != nil)
        let sealed = try SmallSeal.seal(plain, key: key(itemKey), associatedData: associatedData(head))
        return head + (recoverySeal ?? [UInt8](repeating: 0, count: recoverySealBytes)) + sealed
    }

    /// The clear part, checked: what a reader needs before it has the item key.
    public static func head(_ bytes: [UInt8]) throws -> Head {
        let damaged = Nu11Error(.corrupted, "the item's metadata file is damaged", remedy: .check(reason: nil))
        guard bytes.count > headBytes + 28, bytes.count <= maxBytes, Array(bytes[0..<4]) == magic else { throw damaged }
        guard bytes[4] == version else {
            throw Nu11Error(.unsupportedVersion, "item metadata file version \(bytes[4]) is not supported", remedy: .upgrade)
        }
        guard let kind = ItemKind(rawValue: bytes[5]), let domain = Domain(rawValue: bytes[6]), bytes[7] & ~1 == 0 else { throw damaged }
        let id = try ItemID(bytes: bytes[8..<24])
        return Head(kind: kind, domain: domain, itemID: id,
                    recoverySeal: bytes[7] & 1 == 1 ? Array(bytes[24..<headBytes]) : nil)
    }

    /// Opens a sidecar expected to belong to `id`; the plaintext (the caller zeroes it).
    public static func open(_ bytes: [UInt8], expected id: ItemID, itemKey: SecretBytes) throws -> (Head, [UInt8]) {
        let head = try head(bytes)
        guard head.itemID == id else {
            throw Nu11Error(.corrupted, "the metadata file holds item \(head.itemID), not \(id)", remedy: .check(reason: nil), item: id.hex)
        }
        let plain = try SmallSeal.open(Array(bytes[headBytes...]), key: key(itemKey), associatedData: associatedData(bytes))
        return (head, plain)
    }

    /// The same sidecar with another recovery seal (nil: none); the sealed part is untouched.
    public static func replacingSeal(_ bytes: [UInt8], with seal: [UInt8]?) throws -> [UInt8] {
        _ = try head(bytes)
        if let seal, seal.count != recoverySealBytes {
            throw Nu11Error(.internalError, "a recovery seal is \(recoverySealBytes) bytes, not \(seal.count)")
        }
        var out = Array(bytes[0..<24])
        out[7] = seal == nil ? 0 : 1
        out += seal ?? [UInt8](repeating: 0, count: recoverySealBytes)
        out += bytes[headBytes...]
        return out
    }
}
