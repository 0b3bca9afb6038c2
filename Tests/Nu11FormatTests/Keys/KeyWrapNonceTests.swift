// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
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

    @Test("a wrap is swift-crypto's ChaChaPoly.seal with that nonce, byte for byte (libsodium seals it now), and a wrong key cannot wrap")
    func sameAsSwiftCrypto() throws {
        for size in [16, 32, 64] {
            var kekBytes = SecureRandom.bytes(32), secretBytes = SecureRandom.bytes(size)
            let kekCopy = kekBytes, secretCopy = secretBytes
            let kek = SecretBytes(consuming: &kekBytes), secret = SecretBytes(consuming: &secretBytes)
            let nonce = SecureRandom.bytes(12), ad = SecureRandom.bytes(size / 2)
            let reference = try ChaChaPoly.seal(secretCopy, using: SymmetricKey(data: kekCopy), nonce: ChaChaPoly.Nonce(data: nonce),
                                                authenticating: ad)
            #expect(try KeyWrap.wrap(secret, under: kek, associatedData: ad, nonce: nonce) == Array(reference.combined))
            #expect(try KeyWrap.unwrap(try KeyWrap.wrap(secret, under: kek, associatedData: ad), under: kek, associatedData: ad)
                .constantTimeEquals(secret))
        }
        var short = [UInt8](repeating: 1, count: 16), item = [UInt8](repeating: 2, count: 32)
        let shortKey = SecretBytes(consuming: &short), itemKey = SecretBytes(consuming: &item)
        #expect(throws: Nu11Error.self) { _ = try KeyWrap.wrap(itemKey, under: shortKey, associatedData: []) }
    }

    @Test("a rotation's re-wrap takes a fresh nonce each time: never the old record's, never another re-wrap's")
    func rewrapNonces() throws {
        var oldBytes = [UInt8](repeating: 3, count: 32), newBytes = [UInt8](repeating: 4, count: 32), itemBytes = [UInt8](repeating: 5, count: 32)
        let old = SecretBytes(consuming: &oldBytes), new = SecretBytes(consuming: &newBytes), item = SecretBytes(consuming: &itemBytes)
        let record = try ItemKeyRecord.seal(itemKey: item, domain: .vault, kind: .file, itemID: ItemID(), domainKey: old)
        var nonces: Set<[UInt8]> = [Array(record.wrapped.prefix(12))]
        for _ in 0..<32 {
            let rewrapped = try #require(record.rewrapped(from: old, to: new))
            #expect(nonces.insert(Array(rewrapped.wrapped.prefix(12))).inserted, "a re-wrap repeated a nonce")
            #expect(try rewrapped.open(domainKey: new).constantTimeEquals(item))
        }
        #expect(record.rewrapped(from: new, to: old) == nil, "the wrong old key re-wrapped a record")
    }

    @Test("the small seals (index metadata, album names, settings, state, the audit log) never repeat a nonce under one key")
    func smallSealNonces() throws {
        var keyBytes = [UInt8](repeating: 8, count: 32)
        let key = SecretBytes(consuming: &keyBytes)
        var nonces = Set<[UInt8]>()
        var sealed = Set<[UInt8]>()
        for _ in 0..<64 {
            let box = try SmallSeal.seal(Array("the same name".utf8), key: key, associatedData: [9])
            #expect(nonces.insert(Array(box.prefix(12))).inserted, "a small seal repeated a nonce")
            #expect(sealed.insert(box).inserted, "two seals of one value under one key are equal")
            #expect(try SmallSeal.open(box, key: key, associatedData: [9]) == Array("the same name".utf8))
        }
    }
}
