// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation
import Testing
@testable import Nu11Format

/// The files of a shared vault (docs/FORMAT.md § 9.6): key files, pairing offers, device records.
/// Each is opened here as the spec says, with swift-crypto directly, and every byte of each is
/// flipped: none may still open.
@Suite("shared vault files: key files, pairing offers, device records")
struct DeviceFormatTests {
    let main = SecretBytes(randomCount: 32)
    let vaultID = ItemID()
    let item = ItemID()

    func bytes(_ secret: SecretBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    @Test("a key file opens as FORMAT.md § 9.6 says (HKDF-Expand subkey, ChaCha20-Poly1305, the documented associated data) and carries its kind, generation and the device that added the item")
    func keyFileBySpec() throws {
        let itemKey = SecretBytes(randomCount: 32)
        let device = ItemID()
        let file = try SharedItemKey.seal(itemKey: itemKey, kind: .note, id: item, vaultID: vaultID, generation: 7,
                                          device: device, key: SharedItemKey.key(main: main))
        #expect(file.count == SharedItemKey.byteCount && file.count == 108 && Array(file[0..<4]) == Array("N11W".utf8) && file[4] == 2)
        #expect(file[5] == ItemKind.note.rawValue && Array(file[8..<24]) == item.bytes && Array(file[24..<28]) == [0, 0, 0, 7])
        #expect(Array(file[32..<48]) == device.bytes)
        let subkey = HKDF<SHA256>.expand(pseudoRandomKey: SymmetricKey(data: bytes(main)),
                                         info: Array("nu11vlt subkey v1 shared item key".utf8), outputByteCount: 32)
        let ad = Array("nu11vlt shared item key v1".utf8) + vaultID.bytes + Array(file[0..<48])
        let opened = try ChaChaPoly.open(try ChaChaPoly.SealedBox(combined: file[48...]), using: subkey, authenticating: ad)
        #expect(Array(opened) == bytes(itemKey))
        let (kind, back) = try SharedItemKey.open(file, id: item, vaultID: vaultID, key: SharedItemKey.key(main: main))
        #expect(kind == .note && bytes(back) == bytes(itemKey))
        #expect(try SharedItemKey.head(file, id: item) == SharedItemKey.Head(kind: .note, generation: 7, device: device))
    }

    @Test("a version 1 key file (no device ID, written before 0.2.1) still opens, made here byte by byte as § 9.6 says; its device is unknown")
    func keyFileVersion1() throws {
        let itemKey = SecretBytes(randomCount: 32)
        let subkey = HKDF<SHA256>.expand(pseudoRandomKey: SymmetricKey(data: bytes(main)),
                                         info: Array("nu11vlt subkey v1 shared item key".utf8), outputByteCount: 32)
        let header = Array("N11W".utf8) + [1, ItemKind.file.rawValue, 0, 0] + item.bytes + [0, 0, 0, 3] + [0, 0, 0, 0]
        let ad = Array("nu11vlt shared item key v1".utf8) + vaultID.bytes + header
        let file = header + Array(try ChaChaPoly.seal(bytes(itemKey), using: subkey, authenticating: ad).combined)
        #expect(file.count == 92)
        let (kind, back) = try SharedItemKey.open(file, id: item, vaultID: vaultID, key: SharedItemKey.key(main: main))
        #expect(kind == .file && bytes(back) == bytes(itemKey))
        #expect(try SharedItemKey.head(file, id: item) == SharedItemKey.Head(kind: .file, generation: 3, device: nil))
        for i in file.indices {
            var bad = file
            bad[i] ^= 0x01
            #expect(throws: Nu11Error.self, "version 1, byte \(i) flipped still opens") {
                try SharedItemKey.open(bad, id: item, vaultID: vaultID, key: SharedItemKey.key(main: main))
            }
        }
    }

    @Test("a key file does not open when any byte is flipped (the device ID included), under another item's name, for another vault, or under another main key")
    func keyFileRefusals() throws {
        let key = SharedItemKey.key(main: main)
        let file = try SharedItemKey.seal(itemKey: SecretBytes(randomCount: 32), kind: .file, id: item, vaultID: vaultID, generation: 1,
                                          device: ItemID(), key: key)
        for i in file.indices {
            var bad = file
            bad[i] ^= 0x01
            #expect(throws: Nu11Error.self, "byte \(i) flipped still opens") { try SharedItemKey.open(bad, id: item, vaultID: vaultID, key: key) }
        }
        #expect(throws: Nu11Error.self) { try SharedItemKey.open(file, id: ItemID(), vaultID: vaultID, key: key) }
        #expect(throws: Nu11Error.self) { try SharedItemKey.open(file, id: item, vaultID: ItemID(), key: key) }
        #expect(throws: Nu11Error.self) { try SharedItemKey.open(file, id: item, vaultID: vaultID, key: SharedItemKey.key(main: SecretBytes(randomCount: 32))) }
        #expect(throws: Nu11Error.self) { try SharedItemKey.open(Array(file.dropLast()), id: item, vaultID: vaultID, key: key) }
        var newer = file
        newer[4] = 3
        let error = #expect(throws: Nu11Error.self) { try SharedItemKey.open(newer, id: item, vaultID: vaultID, key: key) }
        #expect(error?.code == .unsupportedVersion)
        // A version 2 file labelled version 1 (its device ID then read as the wrapped key's start) does not open.
        var older = file
        older[4] = 1
        #expect(throws: Nu11Error.self) { try SharedItemKey.open(older, id: item, vaultID: vaultID, key: key) }
    }

    @Test("a pairing offer opens with its code alone: the keys come back (main, archive, generation, created, recovery commitment), the Fade key is fresh; a wrong code, any flipped byte and a cut offer fail")
    func pairingOffer() throws {
        let keys = DomainKeys(role: .primary, main: main, fade: SecretBytes(randomCount: 32), archive: SecretBytes(randomCount: 32),
                              created: 1_700_000_000, generation: 4, recoveryCommitment: Array(repeating: 9, count: 16))
        let code = SecretBytes(randomCount: 16), device = ItemID()
        let offer = try PairingOffer.seal(keys: keys, vaultID: vaultID, device: device, expires: 1_800_000_000, code: code)
        let (head, back) = try PairingOffer.open(offer, code: code)
        #expect(head.vaultID == vaultID && head.device == device && head.expires == 1_800_000_000)
        #expect(bytes(back.main) == bytes(keys.main) && bytes(back.archive) == bytes(keys.archive))
        #expect(back.generation == 4 && back.created == 1_700_000_000 && back.recoveryCommitment == Array(repeating: 9, count: 16))
        #expect(bytes(back.fade) != bytes(keys.fade), "the Fade key travelled")
        // The key as the spec says: HKDF-SHA-256(IKM = code, salt = vault ID, info = "nu11vlt pairing v1").
        let derived = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes(code)), salt: vaultID.bytes,
                                             info: Array("nu11vlt pairing v1".utf8), outputByteCount: 32)
        #expect(derived.withUnsafeBytes { Array($0) } == bytes(PairingOffer.key(code: code, vaultID: vaultID)))
        let wrong = #expect(throws: Nu11Error.self) { try PairingOffer.open(offer, code: SecretBytes(randomCount: 16)) }
        #expect(wrong?.code == .authenticationFailed)
        for i in offer.indices where i != 4 {
            var bad = offer
            bad[i] ^= 0x80
            #expect(throws: Nu11Error.self, "byte \(i) flipped still opens") { try PairingOffer.open(bad, code: code) }
        }
        #expect(throws: Nu11Error.self) { try PairingOffer.open(Array(offer.prefix(60)), code: code) }
        var none = keys.withRecovery(nil)
        let plain = try PairingOffer.seal(keys: none, vaultID: vaultID, device: device, expires: 1, code: code)
        none = try PairingOffer.open(plain, code: code).1
        #expect(none.recoveryCommitment == nil)
    }

    @Test("a device record opens only under its vault's main key, for its vault and its file name; any flipped byte fails")
    func deviceRecord() throws {
        let device = ItemID()
        let record = DeviceRecord(id: device, name: "phone", added: 1_750_000_000)
        let file = try record.sealed(vaultID: vaultID, main: main)
        #expect(try DeviceRecord.open(file, id: device, vaultID: vaultID, main: main) == record)
        #expect(throws: Nu11Error.self) { try DeviceRecord.open(file, id: ItemID(), vaultID: vaultID, main: main) }
        #expect(throws: Nu11Error.self) { try DeviceRecord.open(file, id: device, vaultID: ItemID(), main: main) }
        #expect(throws: Nu11Error.self) { try DeviceRecord.open(file, id: device, vaultID: vaultID, main: SecretBytes(randomCount: 32)) }
        for i in file.indices {
            var bad = file
            bad[i] ^= 0x01
            #expect(throws: Nu11Error.self, "byte \(i) flipped still opens") { try DeviceRecord.open(bad, id: device, vaultID: vaultID, main: main) }
        }
    }
}
