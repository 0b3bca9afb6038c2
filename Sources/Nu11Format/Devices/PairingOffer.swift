// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// A device's offer to share the vault's keys with a second device (docs/FORMAT.md § 9.6):
/// `Devices/pairing-<offer ID>.n11x`, sealed under a key made from a one-time code of 128
/// random bits that the offering device shows and the person types on the new one. The code
/// never touches the folder; whoever has the folder without the code learns nothing and can
/// forge no offer.
///
///     0   4   magic "N11X"
///     4   1   version = 1
///     5   3   zero
///     8   16  vault ID
///     24  16  the offering device's ID
///     40  8   expires: unix seconds (big-endian)
///     48  …   SmallSeal(payload, key = HKDF-SHA-256(IKM = code, salt = vault ID,
///                       info = "nu11vlt pairing v1", L = 32), ad = bytes[0..<48])
///     payload: main key (32) || archive key (32) || generation (4) || created (8)
///              || recovery commitment flag (1) || commitment (16, zeros for none)
public struct PairingOffer: Sendable {
    public static let magic: [UInt8] = Array("N11X".utf8)
    public static let fileExtension = "n11x"
    static let payloadCount = 32 + 32 + 4 + 8 + 1 + 16

    public let vaultID: ItemID
    public let device: ItemID
    public let expires: Int64

    public static func key(code: SecretBytes, vaultID: ItemID) -> SecretBytes {
        let derived = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: code), salt: vaultID.bytes,
                                             info: Array("nu11vlt pairing v1".utf8), outputByteCount: 32)
        return derived.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    static func header(vaultID: ItemID, device: ItemID, expires: Int64) -> [UInt8] {
        magic + [1, 0, 0, 0] + vaultID.bytes + device.bytes + withUnsafeBytes(of: expires.bigEndian, Array.init)
    }

    /// The offer file for `keys` (their Fade key stays on this device: § 9.6).
    public static func seal(keys: DomainKeys, vaultID: ItemID, device: ItemID, expires: Int64, code: SecretBytes) throws -> [UInt8] {
        let head = header(vaultID: vaultID, device: device, expires: expires)
        var payload = [UInt8]()
        payload.reserveCapacity(payloadCount)
        keys.main.withUnsafeBytes { payload += $0 }
        keys.archive.withUnsafeBytes { payload += $0 }
        payload += withUnsafeBytes(of: keys.generation.bigEndian, Array.init)
        payload += withUnsafeBytes(of: keys.created.bigEndian, Array.init)
        if let commitment = keys.recoveryCommitment {
            payload += [1] + commitment
        } else {
            payload += [UInt8](repeating: 0, count: 17)
        }
        defer { secureZero(&payload) }
        return head + (try SmallSeal.seal(payload, key: key(code: code, vaultID: vaultID), associatedData: head))
    }

    /// The clear part: whose offer, for which vault, until when.
    public static func parse(_ bytes: [UInt8]) throws -> PairingOffer {
        guard bytes.count > 48, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "the pairing offer is damaged or not a pairing offer", remedy: .advice(.newPairingCode))
        }
        guard bytes[4] == 1 else {
            throw Nu11Error(.unsupportedVersion, "the pairing offer has version \(bytes[4]), which this Nu11VLT does not read", remedy: .upgrade)
        }
        guard bytes[5..<8].allSatisfy({ $0 == 0 }) else {
            throw Nu11Error(.corrupted, "the pairing offer is damaged", remedy: .advice(.newPairingCode))
        }
        let expires = bytes[40..<48].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return PairingOffer(vaultID: try ItemID(bytes: bytes[8..<24]), device: try ItemID(bytes: bytes[24..<40]),
                            expires: Int64(bitPattern: expires))
    }

    /// The offered keys (role primary, with a fresh Fade key of the new device's own), when
    /// `code` is this offer's. A wrong code and an altered offer fail alike.
    public static func open(_ bytes: [UInt8], code: SecretBytes) throws -> (PairingOffer, DomainKeys) {
        let offer = try parse(bytes)
        var payload: [UInt8]
        do {
            payload = try SmallSeal.open(Array(bytes[48...]), key: key(code: code, vaultID: offer.vaultID), associatedData: Array(bytes[0..<48]))
        } catch {
            throw Nu11Error(.authenticationFailed, "the pairing code does not open the pairing offer (a typo, another offer's code, or the offer was altered)",
                            remedy: .advice(.typePairingCode))
        }
        defer { secureZero(&payload) }
        guard payload.count == payloadCount, payload[76] <= 1 else {
            throw Nu11Error(.corrupted, "the pairing offer is damaged", remedy: .advice(.newPairingCode))
        }
        let main = payload.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<32])) }
        let archive = payload.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[32..<64])) }
        let generation = payload[64..<68].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let created = payload[68..<76].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let commitment = payload[76] == 1 ? Array(payload[77..<93]) : nil
        let keys = DomainKeys(role: .primary, main: main, fade: SecretBytes(randomCount: 32), archive: archive, created: created,
                              generation: generation, recoveryCommitment: commitment)
        return (offer, keys)
    }
}

/// A device of a shared vault (docs/FORMAT.md § 9.6): `Devices/<device ID>.n11v`, written by
/// that device when it joins; its name and the time it joined, sealed under the vault's main key.
///
///     0   4   magic "N11V"
///     4   1   version = 1
///     5   3   zero
///     8   16  device ID (the file name's)
///     24  …   SmallSeal(JSON {"name", "added"}, key = Subkey(main, "device record"),
///                       ad = "nu11vlt device record v1" || vault ID || bytes[0..<24])
public struct DeviceRecord: Sendable, Codable, Equatable {
    public static let magic: [UInt8] = Array("N11V".utf8)
    public static let fileExtension = "n11v"

    public var id: String
    public var name: String
    /// Unix seconds.
    public var added: Int64

    public init(id: ItemID, name: String, added: Int64) {
        self.id = id.hex; self.name = name; self.added = added
    }

    private struct Body: Codable { var name: String; var added: Int64 }

    static func ad(vaultID: ItemID, header: [UInt8]) -> [UInt8] { Array("nu11vlt device record v1".utf8) + vaultID.bytes + header }

    public func sealed(vaultID: ItemID, main: SecretBytes) throws -> [UInt8] {
        let device = try ItemID(hex: id)
        let head = Self.magic + [1, 0, 0, 0] + device.bytes
        let body = Array(try JSONEncoder().encode(Body(name: name, added: added)))
        return head + (try SmallSeal.seal(body, key: Subkey.derive(from: main, purpose: "device record"), associatedData: Self.ad(vaultID: vaultID, header: head)))
    }

    public static func open(_ bytes: [UInt8], id: ItemID, vaultID: ItemID, main: SecretBytes) throws -> DeviceRecord {
        guard bytes.count > 24, Array(bytes[0..<4]) == magic, bytes[4] == 1, bytes[5..<8].allSatisfy({ $0 == 0 }),
              (try? ItemID(bytes: bytes[8..<24])) == id else {
            throw Nu11Error(.corrupted, "the record of device \(id.hex) is damaged", remedy: .advice(.damaged), item: id.hex)
        }
        let plain: [UInt8]
        do {
            plain = try SmallSeal.open(Array(bytes[24...]), key: Subkey.derive(from: main, purpose: "device record"),
                                       associatedData: ad(vaultID: vaultID, header: Array(bytes[0..<24])))
        } catch {
            throw Nu11Error(.authenticationFailed, "the record of device \(id.hex) does not open with this vault's keys (another generation's, or made by someone else)",
                            remedy: .advice(.untrusted), item: id.hex)
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(plain)) else {
            throw Nu11Error(.corrupted, "the record of device \(id.hex) is damaged", remedy: .advice(.damaged), item: id.hex)
        }
        return DeviceRecord(id: id, name: body.name, added: body.added)
    }
}
