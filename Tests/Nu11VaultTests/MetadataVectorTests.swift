// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage
import Testing
@testable import Nu11Vault

/// Sealed index metadata from an independent Python implementation
/// (tools/gen_keystore_vectors.py, written from docs/FORMAT.md § 5.1).
@Suite("index metadata vectors (independent generator)")
struct MetadataVectorTests {
    struct Case: Decodable {
        let comment: String
        let domainKey: String
        let id: String
        let album: String?
        let sealed: String
        let result: String
        let name: String?
        let size: UInt64?
        let legacy: Bool
    }

    struct File: Decodable { let tests: [Case] }

    static func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex) ?? [] }

    @Test("bound to item ID and album; padded; version 1 still opens")
    func vectors() throws {
        let url = try #require(Bundle.module.url(forResource: "Vectors/nu11vlt_index_metadata_test.json", withExtension: nil))
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
        #expect(file.tests.count == 9)
        for v in file.tests {
            var keyBytes = Self.bytes(v.domainKey)
            let key = Subkey.derive(from: SecretBytes(consuming: &keyBytes), purpose: "index metadata")
            let row = ItemRow(id: try ItemID(hex: v.id), kind: .file, domain: .vault, album: try v.album.map { try ItemID(hex: $0) },
                              meta: Self.bytes(v.sealed))
            let outcome = Result { try ItemMetadata.openReportingLegacy(row, key: key) }
            if v.result == "valid" {
                let (meta, legacy) = try outcome.get()
                #expect(meta.name == v.name && meta.size == v.size && legacy == v.legacy, "\(v.comment)")
            } else {
                #expect(throws: Nu11Error.self, "\(v.comment): opened") { try outcome.get() }
            }
        }
    }
}
