// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

struct Argon2Vector: Decodable {
    let password: String
    let salt: String
    let iterations: UInt32
    let memoryKiB: UInt32
    let length: Int
    let hash: String
}

struct Argon2File: Decodable { let tests: [Argon2Vector] }

@Suite("keys: Argon2id, key wrapping, key records")
struct KeyTests {
    @Test("Argon2id matches the reference argon2 command")
    func argon2KnownAnswers() throws {
        let file = try JSONDecoder().decode(Argon2File.self, from: Data(contentsOf: Vectors.url("argon2id_kat.json")))
        #expect(file.tests.count >= 3)
        for v in file.tests {
            var pw = Array(v.password.utf8)
            let out = try Argon2id.deriveKey(passphrase: SecretBytes(consuming: &pw), salt: Array(v.salt.utf8),
                                             parameters: KDFParameters(iterations: v.iterations, memoryKiB: v.memoryKiB),
                                             length: v.length)
            #expect(out.withUnsafeBytes { Hex.encode($0) } == v.hash, "\(v.password) t=\(v.iterations) m=\(v.memoryKiB)")
            #expect(pw.allSatisfy { $0 == 0 }, "the caller's copy of the passphrase is zeroed")
        }
    }

    @Test("KDF floor and cap")
    func kdfBounds() throws {
        #expect(throws: Nu11Error.self) { try KDFParameters(iterations: 1, memoryKiB: 19 * 1024).validateChosen() }
        #expect(throws: Nu11Error.self) { try KDFParameters(iterations: 2, memoryKiB: 8 * 1024).validateChosen() }
        try KDFParameters.floor.validateChosen()
        let tooMuch = KDFParameters(iterations: 3, memoryKiB: KDFParameters.cap.memoryKiB + 1)
        #expect { try tooMuch.validateRead() } throws: { ($0 as? Nu11Error)?.code == .costTooHigh }
        #expect { try KDFParameters(iterations: 33, memoryKiB: 65536).validateRead() } throws: {
            ($0 as? Nu11Error)?.code == .costTooHigh
        }
        var empty: [UInt8] = []
        #expect(throws: Nu11Error.self) {
            _ = try Argon2id.deriveKey(passphrase: SecretBytes(consuming: &empty), salt: SecureRandom.bytes(16),
                                       parameters: .floor)
        }
    }

    @Test("key wrap: wrong key, wrong associated data, any flipped bit all fail alike")
    func keyWrap() throws {
        let kek = SecretBytes(randomCount: 32)
        let secret = SecretBytes(randomCount: 32)
        let wrapped = try KeyWrap.wrap(secret, under: kek, associatedData: [1, 2, 3])
        #expect(wrapped.count == 32 + KeyWrap.overhead)
        #expect(try KeyWrap.unwrap(wrapped, under: kek, associatedData: [1, 2, 3]).constantTimeEquals(secret))
        #expect { _ = try KeyWrap.unwrap(wrapped, under: SecretBytes(randomCount: 32), associatedData: [1, 2, 3]) }
            throws: { ($0 as? Nu11Error) == .wrongPIN }
        #expect { _ = try KeyWrap.unwrap(wrapped, under: kek, associatedData: [1, 2, 4]) }
            throws: { ($0 as? Nu11Error) == .wrongPIN }
        for i in 0..<wrapped.count {
            var bad = wrapped
            bad[i] ^= 0x80
            #expect { _ = try KeyWrap.unwrap(bad, under: kek, associatedData: [1, 2, 3]) }
                throws: { ($0 as? Nu11Error) == .wrongPIN }
        }
        #expect(throws: Nu11Error.self) { _ = try KeyWrap.unwrap(wrapped.prefix(20), under: kek, associatedData: []) }
    }

    @Test("item key records are bound to item, domain and kind")
    func itemKeyRecords() throws {
        let domainKey = SecretBytes(randomCount: 32)
        let itemKey = SecretBytes(randomCount: 32)
        let id = ItemID()
        let record = try ItemKeyRecord.seal(itemKey: itemKey, domain: .vault, kind: .file, itemID: id, domainKey: domainKey)
        let bytes = record.encoded()
        #expect(bytes.count == ItemKeyRecord.byteCount)
        #expect(try ItemKeyRecord.parse(bytes).open(domainKey: domainKey).constantTimeEquals(itemKey))
        // Moving the record to another item or domain fails to open.
        var other = bytes
        other[8] ^= 1
        #expect(throws: Nu11Error.self) { _ = try ItemKeyRecord.parse(other).open(domainKey: domainKey) }
        var fade = bytes
        fade[5] = Domain.fade.rawValue
        #expect(throws: Nu11Error.self) { _ = try ItemKeyRecord.parse(fade).open(domainKey: domainKey) }
        var future = bytes
        future[4] = 2
        #expect { _ = try ItemKeyRecord.parse(future) } throws: { ($0 as? Nu11Error)?.code == .unsupportedVersion }
        #expect(throws: Nu11Error.self) { _ = try ItemKeyRecord.parse(Array(bytes.dropLast())) }
        #expect(throws: Nu11Error.self) { _ = try ItemKeyRecord.parse([]) }
    }

    @Test("master record: three slots, only the right PIN opens one, filler is indistinguishable in size")
    func masterRecord() throws {
        var record = MasterRecord(parameters: .floor)
        var pin = Array("1234".utf8)
        let device = SecretBytes(randomCount: 32)
        let kek = try record.deriveKEK(pin: SecretBytes(consuming: &pin), deviceKey: device)
        // Another device key gives another KEK: the record is bound to this key store.
        var samePin = Array("1234".utf8)
        let elsewhere = try record.deriveKEK(pin: SecretBytes(consuming: &samePin), deviceKey: SecretBytes(randomCount: 32))
        #expect(!elsewhere.constantTimeEquals(kek))
        let keys = DomainKeys.generate(role: .primary)
        try record.seal(keys, slot: 0, kek: kek)
        let bytes = record.encoded()
        // Version 3: the slots, then slot 0's pepper (FORMAT.md §4.2e); a record without it is version 1.
        #expect(bytes.count == MasterRecord.byteCount + 32 && bytes[4] == 3)
        var unpeppered = record
        unpeppered.pepper = nil
        #expect(unpeppered.encoded().count == MasterRecord.byteCount && unpeppered.encoded()[4] == 1)
        #expect(try MasterRecord.parse(unpeppered.encoded()).pepper == nil)
        let parsed = try MasterRecord.parse(bytes)
        #expect(parsed.pepper == record.pepper)
        let opened = try parsed.open(kek: kek)
        #expect(opened.slot == 0 && opened.keys.role == .primary)
        #expect(opened.keys.main.constantTimeEquals(keys.main))
        var wrong = Array("1235".utf8)
        let badKEK = try parsed.deriveKEK(pin: SecretBytes(consuming: &wrong), deviceKey: device)
        #expect { _ = try parsed.open(kek: badKEK) } throws: { ($0 as? Nu11Error) == .wrongPIN }
        // A flipped bit anywhere in the slot or in the clear fields looks exactly like a wrong PIN.
        for index in [20, 33, 32 + 100, 32 + MasterRecord.slotByteCount - 1] {
            var damaged = bytes
            damaged[index] ^= 4
            #expect { _ = try MasterRecord.parse(damaged).open(kek: kek) } throws: { ($0 as? Nu11Error) == .wrongPIN }
        }
        // KDF cost from the file is capped before anything is allocated.
        var hostile = bytes
        hostile[12...15] = [0xff, 0xff, 0xff, 0xff]
        #expect { _ = try MasterRecord.parse(hostile) } throws: { ($0 as? Nu11Error)?.code == .costTooHigh }
        var future = bytes
        future[4] = 9
        #expect { _ = try MasterRecord.parse(future) } throws: { ($0 as? Nu11Error)?.code == .unsupportedVersion }
    }

    @Test("secret bytes: copies, comparisons and ID parsing")
    func secrets() throws {
        var raw: [UInt8] = [1, 2, 3]
        let s = SecretBytes(consuming: &raw)
        #expect(raw == [0, 0, 0])
        #expect(s.withUnsafeBytes { Array($0) } == [1, 2, 3])
        #expect(!s.constantTimeEquals(SecretBytes(randomCount: 3)))
        let id = ItemID()
        #expect(try ItemID(hex: id.hex) == id)
        #expect(try ItemID(hex: id.hex.uppercased()) == id)
        for bad in ["", "xyz", String(repeating: "g", count: 32), String(repeating: "a", count: 31), id.hex + "0"] {
            #expect(throws: Nu11Error.self) { _ = try ItemID(hex: bad) }
        }
    }
}

/// Slot 0's pepper (FORMAT.md §4.2e): what changes slot 0's KEK without a new PIN.
@Suite("master record pepper")
struct MasterPepperTests {
    @Test("a new pepper: the PIN still opens slot 0, the old slot-0 KEK (a security key's copy) opens nothing; slots 1 and 2 do not use it")
    func pepper() throws {
        var record = MasterRecord(parameters: KDFParameters(iterations: 2, memoryKiB: 19 * 1024))
        var pin = Array("a pin 1234".utf8)
        let pinKEK = try record.deriveKEK(pin: SecretBytes(consuming: &pin), deviceKey: SecretBytes(randomCount: 32))
        let keys = DomainKeys.generate(role: .primary)
        let backup = DomainKeys.generate(role: .backup)
        let otherKEK = SecretBytes(randomCount: 32)
        try record.seal(keys, slot: 0, kek: record.slotKEK(pinKEK, slot: 0))
        try record.seal(backup, slot: 1, kek: record.slotKEK(otherKEK, slot: 1))
        #expect(record.slotKEK(otherKEK, slot: 1).constantTimeEquals(otherKEK))
        let old0 = record.slotKEK(pinKEK, slot: 0)
        #expect(!old0.constantTimeEquals(pinKEK))
        #expect(try record.open(pinKEK: pinKEK).slot == 0)
        #expect(try record.open(kek: old0, slot: 0).sameKeys(as: keys))
        record.newPepper()
        try record.seal(keys, slot: 0, kek: record.slotKEK(pinKEK, slot: 0))
        let parsed = try MasterRecord.parse(record.encoded())
        #expect(try parsed.open(pinKEK: pinKEK).slot == 0)
        #expect(throws: Nu11Error.self) { try parsed.open(kek: old0, slot: 0) }
        #expect(throws: Nu11Error.self) { try parsed.open(kek: pinKEK, slot: 0) }
        #expect(try parsed.open(pinKEK: otherKEK).slot == 1)
        // Cut: the pepper is the file's last 32 bytes; a file cut short of it is damaged, never read as version 1.
        #expect(throws: Nu11Error.self) { try MasterRecord.parse(Array(record.encoded().dropLast(32))) }
    }
}
