// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

/// Master records and item key records from an independent Python implementation
/// (tools/gen_keystore_vectors.py, written from docs/FORMAT.md).
@Suite("key store vectors (independent generator)")
struct KeyStoreVectorTests {
    struct MasterCase: Decodable {
        let comment: String
        let deviceKey: String
        let record: String
        let pin: String
        let result: String
        let slot: Int?
        let role: UInt8?
        let keys: [String]?
    }

    struct ItemCase: Decodable {
        let comment: String
        let domainKey: String
        let record: String
        let result: String
        let itemKey: String?
    }

    struct File: Decodable {
        let master: [MasterCase]
        let itemKeyRecords: [ItemCase]
    }

    static func secret(_ hex: String) -> SecretBytes {
        var bytes = hexBytes(hex)
        return SecretBytes(consuming: &bytes)
    }

    static func text(_ s: String) -> SecretBytes {
        var bytes = Array(s.utf8)
        return SecretBytes(consuming: &bytes)
    }

    static let file: File? = try? JSONDecoder().decode(File.self, from: Data(contentsOf: Vectors.url("nu11vlt_keystore_test.json")))

    @Test("master records: KEK derivation, slots, the Skeleton flag, NFC")
    func masterRecords() throws {
        let file = try #require(Self.file, "nu11vlt_keystore_test.json did not load")
        #expect(file.master.count == 11 && file.master.contains { $0.result == "invalid" })
        for v in file.master {
            let record = try MasterRecord.parse(hexBytes(v.record))
            #expect(record.encoded() == hexBytes(v.record), "\(v.comment): round trip")
            let outcome = Result { try record.open(pin: Self.text(v.pin), deviceKey: Self.secret(v.deviceKey)) }
            if v.result == "valid" {
                let opened = try outcome.get()
                #expect(opened.slot == v.slot && opened.keys.role.rawValue == v.role, "\(v.comment)")
                let expected = (v.keys ?? []).map(Self.secret)
                #expect(expected.count == 3 && opened.keys.main.constantTimeEquals(expected[0])
                        && opened.keys.fade.constantTimeEquals(expected[1]) && opened.keys.archive.constantTimeEquals(expected[2]),
                        "\(v.comment): keys")
            } else {
                #expect(throws: Nu11Error.self, "\(v.comment): opened") { try outcome.get() }
            }
        }
    }

    @Test("item key records: bound to domain, kind and item ID")
    func itemKeyRecords() throws {
        let file = try #require(Self.file, "nu11vlt_keystore_test.json did not load")
        #expect(file.itemKeyRecords.count == 7)
        for v in file.itemKeyRecords {
            let outcome = Result { try ItemKeyRecord.parse(hexBytes(v.record)).open(domainKey: Self.secret(v.domainKey)) }
            if v.result == "valid", let expected = v.itemKey {
                #expect(try outcome.get().constantTimeEquals(Self.secret(expected)), "\(v.comment)")
            } else {
                #expect(throws: Nu11Error.self, "\(v.comment): opened") { try outcome.get() }
            }
        }
    }
}
