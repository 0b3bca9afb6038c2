// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation
import Testing
@testable import Nu11Format

/// The chunked scheme's key derivation runs on libsodium's HMAC-SHA-512: it must give
/// swift-crypto's HKDF<SHA512>.expand bytes for every length, key and info (the scheme's
/// vectors hold the lengths it uses; this holds the rest).
@Suite("HKDF-SHA-512 expand")
struct HKDFTests {
    @Test("the same bytes as swift-crypto's, at every block boundary, for empty and long info and keys of any size")
    func sameAsSwiftCrypto() throws {
        for keySize in [16, 32, 64, 200] {
            for infoSize in [0, 1, 63, 64, 65, 300] {
                for count in [1, 32, 63, 64, 65, 76, 128, 129, 1000] {
                    let prk = SecureRandom.bytes(keySize), info = SecureRandom.bytes(infoSize)
                    let reference = HKDF<SHA512>.expand(pseudoRandomKey: SymmetricKey(data: prk), info: info, outputByteCount: count)
                    var out = [UInt8](repeating: 0, count: count)
                    try prk.withUnsafeBytes { k in
                        try info.withUnsafeBytes { i in try out.withUnsafeMutableBytes { try Sodium.hkdfSHA512Expand(prk: k, info: i, into: $0) } }
                    }
                    #expect(out == reference.withUnsafeBytes { Array($0) }, "key \(keySize), info \(infoSize), \(count) bytes")
                }
            }
        }
    }

    @Test("more than 255 blocks is refused (RFC 5869's limit), not wrapped around")
    func tooLong() {
        let prk = [UInt8](repeating: 1, count: 32)
        var out = [UInt8](repeating: 0, count: 255 * 64 + 1)
        #expect(throws: Nu11Error.self) {
            try prk.withUnsafeBytes { k in try out.withUnsafeMutableBytes { try Sodium.hkdfSHA512Expand(prk: k, info: UnsafeRawBufferPointer(start: nil, count: 0), into: $0) } }
        }
    }
}
