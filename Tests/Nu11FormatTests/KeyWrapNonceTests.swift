// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

@Suite("key wrapping never reuses a nonce")
struct KeyWrapNonceTests {
    @Test("two wraps of the same key under the same key never share a nonce (or a ciphertext)")
    func freshNonces() throws {
        var kek = [UInt8](repeating: 7, count: 32)
        let key = SecretBytes(consuming: &kek)
        var secretBytes = [UInt8](repeating: 9, count: 32)
        let secret = SecretBytes(consuming: &secretBytes)
        var nonces = Set<[UInt8]>()
        for _ in 0..<64 {
            let wrapped = try KeyWrap.wrap(secret, under: key, associatedData: [1, 2, 3])
            #expect(nonces.insert(Array(wrapped.prefix(12))).inserted, "a nonce repeated")
            #expect(try KeyWrap.unwrap(wrapped, under: key, associatedData: [1, 2, 3]).constantTimeEquals(secret))
        }
        // The same through the item key records built on it.
        let id = ItemID()
        let a = try ItemKeyRecord.seal(itemKey: secret, domain: .vault, kind: .file, itemID: id, domainKey: key)
        let b = try ItemKeyRecord.seal(itemKey: secret, domain: .vault, kind: .file, itemID: id, domainKey: key)
        #expect(a.wrapped != b.wrapped)
    }
}
