// SPDX-License-Identifier: GPL-3.0-or-later
/// The vault ID as the key store records it (`vault-id.n11v`), so that a vault folder and
/// a key store that were not made together are refused before anything is written:
///
///     0  4  magic "N11V"
///     4  1  version (1)
///     5  …  SmallSeal(16-byte vault ID) under Subkey(device key, "vault id"),
///           associated data "nu11vlt vault id v1"
///
/// Sealed under the device key, so it is readable before unlock and cannot be edited
/// without being noticed (by someone without the device key).
public enum VaultIDRecord {
    public static let magic: [UInt8] = Array("N11V".utf8)
    static let aad = Array("nu11vlt vault id v1".utf8)

    public static func seal(_ id: ItemID, deviceKey: SecretBytes) throws -> [UInt8] {
        magic + [1] + (try SmallSeal.seal(id.bytes, key: Subkey.derive(from: deviceKey, purpose: "vault id"), associatedData: aad))
    }

    public static func open(_ bytes: [UInt8], deviceKey: SecretBytes) throws -> ItemID {
        guard bytes.count > 5, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "the key store's vault ID record is damaged",
                            remedy: .restoreKeyStore)
        }
        guard bytes[4] == 1 else {
            throw Nu11Error(.unsupportedVersion, "vault ID record version \(bytes[4]) is not supported", remedy: .upgrade)
        }
        let plain: [UInt8]
        do {
            plain = try SmallSeal.open(Array(bytes[5...]), key: Subkey.derive(from: deviceKey, purpose: "vault id"), associatedData: aad)
        } catch {
            throw Nu11Error(.corrupted, "the key store's vault ID record does not authenticate",
                            remedy: .restoreKeyStore)
        }
        return try ItemID(bytes: plain)
    }
}
