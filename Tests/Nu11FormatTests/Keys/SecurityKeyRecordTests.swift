// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation
import Testing
@testable import Nu11Format

/// `security-keys.n11u` (FORMAT.md §4.2d): one size always; nothing opens without the right
/// device key, hmac-secret and KEK; every tampered byte reads as "no keys".
@Suite("security-key record")
struct SecurityKeyRecordTests {
    let device = SecretBytes(randomCount: 32)
    let base = SecretBytes(randomCount: 32)

    func w(_ secret: [UInt8]) -> SecretBytes {
        var copy = secret
        return SecurityKeyRecord.entryKey(hmacSecret: SecretBytes(consuming: &copy), deviceKey: device)
    }

    func twoKeys() throws -> SecurityKeyRecord {
        var record = SecurityKeyRecord.empty
        try record.add(label: "blue", policy: .touch, credentialID: [UInt8](repeating: 7, count: 64), salt: SecureRandom.bytes(32),
                       entryKey: w([1]), f: nil, baseKEK: base)
        let f = try #require(record.f(baseKEK: base))
        try record.add(label: "spare ✓", policy: .touchAndKeyPIN, credentialID: [UInt8](repeating: 9, count: 256),
                       salt: SecureRandom.bytes(32), entryKey: w([2]), f: f, baseKEK: base)
        return record
    }

    @Test("round trip: each entry's W gives the base KEK back; the other entry's W, another device key or another KEK give nothing")
    func roundTrip() throws {
        let bytes = try twoKeys().encoded(deviceKey: device)
        #expect(bytes.count == SecurityKeyRecord.fileSize)
        let parsed = SecurityKeyRecord.parse(bytes, deviceKey: device)
        #expect(parsed.entries.map(\.label) == ["blue", "spare ✓"])
        #expect(parsed.entries.map(\.policy) == [.touch, .touchAndKeyPIN])
        #expect(parsed.entries[1].credentialID.count == 256)
        let opened = try #require(parsed.baseKEK(entry: parsed.entries[0], entryKey: w([1])))
        #expect(opened.constantTimeEquals(base))
        #expect(parsed.baseKEK(entry: parsed.entries[1], entryKey: w([2]))?.constantTimeEquals(base) == true)
        #expect(parsed.baseKEK(entry: parsed.entries[0], entryKey: w([2])) == nil, "one key's secret opens another's entry")
        #expect(parsed.f(baseKEK: SecretBytes(randomCount: 32)) == nil)
        #expect(SecurityKeyRecord.parse(bytes, deviceKey: SecretBytes(randomCount: 32)).entries.isEmpty)
    }

    @Test("the decoy and the emptied file have the real file's size and read as no keys; any flipped byte reads as no keys")
    func decoyAndTamper() throws {
        #expect(SecurityKeyRecord.decoy().count == SecurityKeyRecord.fileSize)
        #expect(SecurityKeyRecord.parse(SecurityKeyRecord.decoy(), deviceKey: device).entries.isEmpty)
        var record = try twoKeys()
        record.remove(at: 0)
        record.remove(at: 0)
        let emptied = try record.encoded(deviceKey: device)
        #expect(emptied.count == SecurityKeyRecord.fileSize && SecurityKeyRecord.parse(emptied, deviceKey: device).entries.isEmpty)
        let bytes = try twoKeys().encoded(deviceKey: device)
        for index in [0, 4, 8, 20, 100, 500, bytes.count - 1] {
            var bad = bytes
            bad[index] ^= 0x01
            #expect(SecurityKeyRecord.parse(bad, deviceKey: device).entries.isEmpty, "byte \(index) flipped still parses")
        }
        #expect(SecurityKeyRecord.parse(Array(bytes.dropLast()), deviceKey: device).entries.isEmpty)
    }

    @Test("a fifth key and an over-long credential ID are refused; a rewrap follows a new KEK and drops the old")
    func limitsAndRewrap() throws {
        var record = try twoKeys()
        let f = try #require(record.f(baseKEK: base))
        for n in 3...4 {
            try record.add(label: "k\(n)", policy: .touch, credentialID: [UInt8(n)], salt: SecureRandom.bytes(32), entryKey: w([UInt8(n)]), f: f, baseKEK: base)
        }
        #expect(throws: Nu11Error.self) {
            try record.add(label: "five", policy: .touch, credentialID: [5], salt: SecureRandom.bytes(32), entryKey: w([5]), f: f, baseKEK: base)
        }
        var fresh = SecurityKeyRecord.empty
        #expect(throws: Nu11Error.self) {
            try fresh.add(label: "long", policy: .touch, credentialID: [UInt8](repeating: 1, count: 257), salt: SecureRandom.bytes(32),
                          entryKey: w([1]), f: nil, baseKEK: base)
        }
        let newBase = SecretBytes(randomCount: 32)
        try record.rewrap(f: f, baseKEK: newBase)
        let parsed = SecurityKeyRecord.parse(try record.encoded(deviceKey: device), deviceKey: device)
        #expect(parsed.entries.count == 4)
        #expect(parsed.baseKEK(entry: parsed.entries[2], entryKey: w([3]))?.constantTimeEquals(newBase) == true)
        #expect(parsed.f(baseKEK: base) == nil && parsed.f(baseKEK: newBase) != nil)
        // A label is cut to 32 bytes on a character boundary.
        #expect(SecurityKeyRecord.trimmed(String(repeating: "é", count: 20)).utf8.count == 32)
    }
}
