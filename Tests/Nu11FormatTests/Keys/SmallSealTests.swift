// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation
import Testing
@testable import Nu11Format

/// SmallSeal is RFC 8439 ChaCha20-Poly1305 as `nonce(12) || ciphertext || tag(16)`: every
/// 96-bit-nonce vector of Wycheproof's file opens (or is refused) as the vector says and seals
/// to its bytes, and what swift-crypto's ChaChaPoly seals opens here and the other way round.
@Suite("small seals: RFC 8439 ChaCha20-Poly1305")
struct SmallSealTests {
    struct File: Decodable {
        struct Group: Decodable {
            let ivSize: Int
            let tests: [Case]
        }
        struct Case: Decodable {
            let tcId: Int
            let key, iv, aad, msg, ct, tag, result: String
        }
        let testGroups: [Group]
    }

    @Test("Wycheproof chacha20_poly1305: valid vectors open and seal to their bytes; invalid ones are refused")
    func wycheproof() throws {
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: Vectors.url("wycheproof_chacha20_poly1305_test.json")))
        var valid = 0, invalid = 0
        for group in file.testGroups where group.ivSize == 96 {
            for v in group.tests {
                let key = hexBytes(v.key).withUnsafeBytes { SecretBytes(copying: $0) }
                let sealed = hexBytes(v.iv) + hexBytes(v.ct) + hexBytes(v.tag)
                let opened = try? SmallSeal.open(sealed, key: key, associatedData: hexBytes(v.aad))
                if v.result == "invalid" {
                    #expect(opened == nil, "tcId \(v.tcId) opened")
                    invalid += 1
                    continue
                }
                #expect(opened == hexBytes(v.msg), "tcId \(v.tcId) does not open to its message")
                let resealed = try SmallSeal.seal(hexBytes(v.msg), key: key, associatedData: hexBytes(v.aad), nonce: hexBytes(v.iv))
                #expect(resealed == sealed, "tcId \(v.tcId) seals to other bytes")
                valid += 1
            }
        }
        #expect(valid > 200 && invalid > 50, "only \(valid) valid and \(invalid) invalid 96-bit-nonce vectors")
    }

    @Test("the same bytes as swift-crypto's ChaChaPoly, both ways; a flipped bit, a wrong key or associated data, or a short input is refused")
    func sameAsChaChaPoly() throws {
        for size in [0, 1, 63, 64, 65, 4096, (1 << 20) - 300] {
            let key = SecretBytes(randomCount: 32)
            let plain = SecureRandom.bytes(size)
            let ad = SecureRandom.bytes(size % 40)
            let ours = try SmallSeal.seal(plain, key: key, associatedData: ad)
            #expect(ours.count == 12 + size + 16)
            let theirs = try ChaChaPoly.open(ChaChaPoly.SealedBox(combined: ours), using: SymmetricKey(data: key), authenticating: ad)
            #expect(Array(theirs) == plain)
            let box = try ChaChaPoly.seal(plain, using: SymmetricKey(data: key), authenticating: ad)
            #expect(try SmallSeal.open(Array(box.combined), key: key, associatedData: ad) == plain)
            var flipped = ours
            flipped[(size * 7) % flipped.count] ^= 0x01
            #expect(throws: Nu11Error.self) { try SmallSeal.open(flipped, key: key, associatedData: ad) }
            #expect(throws: Nu11Error.self) { try SmallSeal.open(ours, key: SecretBytes(randomCount: 32), associatedData: ad) }
            #expect(throws: Nu11Error.self) { try SmallSeal.open(ours, key: key, associatedData: ad + [0]) }
        }
        for short in 0..<28 {
            #expect(throws: Nu11Error.self) { try SmallSeal.open([UInt8](repeating: 0, count: short), key: SecretBytes(randomCount: 32), associatedData: []) }
        }
    }
}
