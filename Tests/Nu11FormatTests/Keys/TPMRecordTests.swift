// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

/// The TPM record inside a version 2 master record (docs/FORMAT.md §4.2b), the recovery key,
/// and the KEK derivations: mostly what must be refused.
@Suite("TPM record, recovery key, version 2 master record")
struct TPMRecordTests {
    static func sample(pcrMask: UInt32 = 0, skeleton: Bool = false) throws -> TPMRecord {
        let device = SecretBytes(randomCount: 32)
        var record = TPMRecord(pcrMask: pcrMask, nvIndex: 0x0180_1234, primaryName: Array(repeating: 0xAB, count: 34),
                               buckets: [3, 9, 15], recovery: [],
                               pcrValues: Array(repeating: 7, count: 32 * TPMRecord.pcrs(in: pcrMask).count),
                               entries: [[1, 2, 3], [4, 5], [6]], stateObject: [7, 8])
        record.recovery = try TPMRecord.sealRecovery(SecretBytes(randomCount: 32), recoveryKey: RecoveryKey.generate(), deviceKey: device)
        if skeleton {
            record.skeletonDeadline = 123_456
            record.skeletonObject = [9, 9, 9]
            record.skeletonResetLimit = 17
            record.lockoutHeld = true
        }
        return record
    }

    @Test("round trip, with and without PCRs and the Skeleton object")
    func roundTrip() throws {
        for (mask, skeleton) in [(UInt32(0), false), (UInt32(1 << 7 | 1), true)] {
            let record = try Self.sample(pcrMask: mask, skeleton: skeleton)
            #expect(try TPMRecord.parse(record.encoded()) == record)
        }
    }

    @Test("a version 1 record (no trailer) still opens: no reset limit, lockout not held")
    func versionOne() throws {
        var v2 = try Self.sample(skeleton: true)
        var bytes = Array(v2.encoded().dropLast(5))
        bytes[4] = 1
        let v1 = try TPMRecord.parse(bytes)
        #expect(v1.skeletonResetLimit == nil && !v1.lockoutHeld && !v1.lockoutForeign)
        v2.skeletonResetLimit = nil
        v2.lockoutHeld = false
        #expect(v1 == v2)
        v2.lockoutForeign = true
        #expect(try TPMRecord.parse(v2.encoded()) == v2)
    }

    @Test("damaged records are refused: magic, version, buckets, lengths, trailing bytes, half a Skeleton")
    func damaged() throws {
        let good = try Self.sample(skeleton: true).encoded()
        var cases: [(String, [UInt8])] = []
        var b = good; b[0] ^= 1; cases.append(("magic", b))
        b = good; b[59] = b[58]; cases.append(("two entries share a bucket", b))
        b = good; b[60] = 16; cases.append(("bucket out of range", b))
        b = good; b[11] = 0xFF; b[10] = 0xFF; b[9] = 0xFF; b[8] = 0xFF; cases.append(("PCR mask past 23", b))
        cases.append(("truncated", Array(good.dropLast())))
        cases.append(("trailing byte", good + [0]))
        cases.append(("too short", Array(good.prefix(100))))
        b = good; b[50..<58] = [0, 0, 0, 0, 0, 0, 0, 0]; cases.append(("Skeleton object without a deadline", b))
        for (name, bytes) in cases {
            #expect(throws: Nu11Error.self, "\(name)") { try TPMRecord.parse(bytes) }
        }
        b = good; b[b.count - 1] = 8; cases.append(("unknown flag", b))
        b = good; b[4] = 1; cases.append(("version 1 with a trailer", b))
        for (name, bytes) in cases {
            #expect(throws: Nu11Error.self, "\(name)") { try TPMRecord.parse(bytes) }
        }
        b = good; b[4] = 3
        #expect(throws: Nu11Error.self) { try TPMRecord.parse(b) }
        do { _ = try TPMRecord.parse(b) } catch let error as Nu11Error { #expect(error.code == .unsupportedVersion) }
    }

    @Test("the recovery key: text round trip, typing slack, and refusals")
    func recoveryKey() throws {
        let key = RecoveryKey.generate()
        let text = RecoveryKey.text(key)
        #expect(text.count == 39 && text.split(separator: "-").count == 8)
        #expect(text.allSatisfy { "cbdefghijklnrtuv-".contains($0) })
        for typed in [text, text.uppercased(), text.replacingOccurrences(of: "-", with: " "), text.replacingOccurrences(of: "-", with: "") + "\n"] {
            var bytes = Array(typed.utf8)
            #expect(try RecoveryKey.parse(SecretBytes(consuming: &bytes)).constantTimeEquals(key))
        }
        for bad in [String(text.dropLast()), text + "c", text.replacingOccurrences(of: "c", with: "a"), "", "0123-4567"] where bad != text {
            var bytes = Array(bad.utf8)
            #expect(throws: Nu11Error.self, "\(bad)") { try RecoveryKey.parse(SecretBytes(consuming: &bytes)) }
        }
        // The wrap opens with that key and this device key only.
        let device = SecretBytes(randomCount: 32)
        let secret = SecretBytes(randomCount: 32)
        var record = try Self.sample()
        record.recovery = try TPMRecord.sealRecovery(secret, recoveryKey: key, deviceKey: device)
        #expect(try record.recoverSecret(key, deviceKey: device).constantTimeEquals(secret))
        #expect(throws: Nu11Error.self) { try record.recoverSecret(RecoveryKey.generate(), deviceKey: device) }
        #expect(throws: Nu11Error.self) { try record.recoverSecret(key, deviceKey: SecretBytes(randomCount: 32)) }
    }

    @Test("a version 2 master record: round trip; its KEK needs the TPM secret; version 1 readers' bytes differ")
    func masterVersion2() throws {
        let device = SecretBytes(randomCount: 32)
        var master = MasterRecord(parameters: KDFParameters(iterations: 2, memoryKiB: 19 * 1024))
        let stretched = SecretBytes(randomCount: 32)
        let secret = SecretBytes(randomCount: 32)
        let v1KEK = MasterRecord.kek(stretched: stretched, deviceKey: device, tpmSecret: nil)
        let kek = MasterRecord.kek(stretched: stretched, deviceKey: device, tpmSecret: secret)
        #expect(!kek.constantTimeEquals(v1KEK))
        #expect(!kek.constantTimeEquals(MasterRecord.kek(stretched: stretched, deviceKey: device, tpmSecret: SecretBytes(randomCount: 32))))
        master = master.remade(tpm: try Self.sample())
        let keys = DomainKeys.generate(role: .primary)
        try master.seal(keys, slot: 0, kek: kek)
        let bytes = master.encoded()
        #expect(bytes[4] == 4 && bytes.count > MasterRecord.byteCount + 32)  // version 2 + slot 0's pepper (§4.2e)
        let parsed = try MasterRecord.parse(bytes)
        #expect(parsed.tpm == master.tpm)
        #expect(try parsed.open(kek: kek, slot: 0).sameKeys(as: keys))
        #expect(throws: Nu11Error.self) { try parsed.open(kek: v1KEK, slot: 0) }
        // Version 2 without its TPM record, or a version 1 record with one, is damaged; a
        // TPM-bound record never derives a KEK without the TPM.
        #expect(throws: Nu11Error.self) { try MasterRecord.parse(Array(bytes.prefix(MasterRecord.byteCount))) }
        var v1WithTail = Array(bytes)
        v1WithTail[4] = 1
        #expect(throws: Nu11Error.self) { try MasterRecord.parse(v1WithTail) }
        #expect(throws: Nu11Error.self) { try parsed.deriveKEK(pin: SecretBytes(randomCount: 8), deviceKey: device) }
        // The Skeleton KEK needs the Skeleton secret.
        let armed = MasterRecord.skeletonKEK(base: kek, skeletonSecret: SecretBytes(randomCount: 32))
        #expect(!armed.constantTimeEquals(kek))
        #expect(!armed.constantTimeEquals(MasterRecord.skeletonKEK(base: kek, skeletonSecret: SecretBytes(randomCount: 32))))
    }

    @Test("buckets and auth values come from the stretched PIN; filler buckets avoid the others")
    func buckets() throws {
        let a = SecretBytes(randomCount: 32)
        #expect(TPMRecord.bucket(stretched: a) == TPMRecord.bucket(stretched: a))
        #expect(Int(TPMRecord.bucket(stretched: a)) < TPMRecord.bucketCount)
        #expect(TPMRecord.auth(stretched: a).constantTimeEquals(TPMRecord.auth(stretched: a)))
        #expect(!TPMRecord.auth(stretched: a).constantTimeEquals(TPMRecord.auth(stretched: SecretBytes(randomCount: 32))))
        let spread = Set((0..<200).map { _ in TPMRecord.bucket(stretched: SecretBytes(randomCount: 32)) })
        #expect(spread.count == TPMRecord.bucketCount, "200 PINs should reach all 16 buckets")
        let taken: [UInt8] = Array(0..<15)
        for _ in 0..<20 { #expect(TPMRecord.freeBucket(avoiding: taken) == 15) }
    }
}
