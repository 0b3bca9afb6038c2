// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format
import Testing

/// Issue 57, as a class: every MAC, binding and commitment the formats compare is refused with
/// any one of its bytes flipped and when cut short — so a comparison that looks at a prefix
/// only (the first 4 bytes, say) fails here, whichever check it is. The list: the recovery
/// record's binding (`isBound`, `mentions`), its commitment (`matches(commitment:)`), the
/// settings file's tag (`authenticated(under:)`), and the constant-time comparison of
/// secrets (`constantTimeEquals`) that the key store's checks use.
@Suite("MACs and bindings: every byte flipped, every length cut")
struct MACFlipTests {
    static let bindingOffset = 56 + 188  // the first set's binding (docs/FORMAT.md §5.2)

    @Test("recovery.n11r: this vault's ID with an attacker's key (own public key, or ours) is not bound; any flipped or cut binding byte is refused")
    func recoveryBinding() throws {
        let vaultID = ItemID()
        let keys = DomainKeys.generate(role: .primary)
        let publicKey = try RecoverySeal.publicKey(phrase: RecoveryKey.generate(), vaultID: vaultID)
        let record = try RecoveryRecord.make(vaultID: vaultID, publicKey: publicKey, keys: [keys])
        #expect(record.isBound(to: keys) && record.mentions(keys))
        // The attacker knows the vault ID (it is in the clear) and seals a set of its own keys,
        // to its own public key or to ours: neither is bound to the vault's keys.
        let attacker = DomainKeys.generate(role: .primary)
        let theirs = try RecoverySeal.publicKey(phrase: RecoveryKey.generate(), vaultID: vaultID)
        for forged in [try RecoveryRecord.make(vaultID: vaultID, publicKey: theirs, keys: [attacker]),
                       try RecoveryRecord.make(vaultID: vaultID, publicKey: publicKey, keys: [attacker])] {
            let parsed = try RecoveryRecord.parse(forged.encoded())
            #expect(parsed.vaultID == vaultID)
            #expect(!parsed.isBound(to: keys) && !parsed.mentions(keys), "a set the vault's keys did not make passes as theirs")
        }
        #expect(!(try RecoveryRecord.make(vaultID: vaultID, publicKey: theirs, keys: [attacker])).matches(commitment: record.commitment))
        let bytes = record.encoded()
        for i in Self.bindingOffset..<(Self.bindingOffset + 32) {
            var flipped = bytes
            flipped[i] ^= 0x01
            let parsed = try RecoveryRecord.parse(flipped)
            #expect(!parsed.isBound(to: keys), "binding byte \(i - Self.bindingOffset) flipped, still bound")
            #expect(!parsed.mentions(keys), "binding byte \(i - Self.bindingOffset) flipped, still mentioned")
        }
        for cut in [1, 4, 16, 28, 31, 32] {
            #expect(throws: Nu11Error.self, "cut \(cut) bytes short, still parsed") { _ = try RecoveryRecord.parse(Array(bytes.dropLast(cut))) }
        }
    }

    @Test("the recovery commitment: any flipped byte, any shorter prefix, refused")
    func recoveryCommitment() throws {
        let vaultID = ItemID()
        let publicKey = try RecoverySeal.publicKey(phrase: RecoveryKey.generate(), vaultID: vaultID)
        let record = try RecoveryRecord.make(vaultID: vaultID, publicKey: publicKey, keys: [DomainKeys.generate(role: .primary)])
        let commitment = record.commitment
        #expect(record.matches(commitment: commitment))
        for i in commitment.indices {
            var flipped = commitment
            flipped[i] ^= 0x80
            #expect(!record.matches(commitment: flipped), "commitment byte \(i) flipped, still matches")
        }
        for n in 0..<commitment.count {
            #expect(!record.matches(commitment: Array(commitment.prefix(n))), "a \(n)-byte prefix matches")
        }
    }

    @Test("the settings tag: any flipped byte, any cut, refused")
    func settingsTag() throws {
        let deviceKey = SecretBytes(randomCount: 32)
        let tagKey = SecretBytes(randomCount: 32)
        var settings = Settings()
        try settings.set("fade.default", "2h")
        let (opened, _) = try Settings.open(try settings.sealed(deviceKey: deviceKey, tagKey: tagKey), deviceKey: deviceKey)
        #expect(opened.authenticated(under: tagKey))
        let tag = try #require(opened.authTag)
        for i in tag.indices {
            var copy = opened
            copy.authTag?[i] ^= 0x04
            #expect(!copy.authenticated(under: tagKey), "tag byte \(i) flipped, still authenticated")
        }
        for n in 0..<tag.count {
            var copy = opened
            copy.authTag = Array(tag.prefix(n))
            #expect(!copy.authenticated(under: tagKey), "a \(n)-byte tag authenticated")
        }
        #expect(!opened.authenticated(under: SecretBytes(randomCount: 32)))
    }

    func secret(_ bytes: [UInt8]) -> SecretBytes {
        var copy = bytes
        return SecretBytes(consuming: &copy)
    }

    @Test("secrets compared in constant time: a difference at any byte, or in length, is seen")
    func secretComparison() {
        let a = SecretBytes(randomCount: 32)
        let bytes = a.withUnsafeBytes { Array($0) }
        #expect(a.constantTimeEquals(secret(bytes)))
        for i in bytes.indices {
            var other = bytes
            other[i] ^= 0x10
            #expect(!a.constantTimeEquals(secret(other)), "byte \(i) differs, still equal")
        }
        #expect(!a.constantTimeEquals(secret(Array(bytes.prefix(31)))))
    }
}
