// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format
import Testing

/// The recovery seal (docs/FORMAT.md §5.2): a group sealer writes the bytes `open` reads, each
/// seal bound to its own associated data, and a seal opens for the phrase alone.
@Suite("recovery seals")
struct RecoverySealTests {
    @Test("a group's seals share one ephemeral key, each opens only with its own ad, a wrong phrase opens none")
    func groupSealer() throws {
        let vaultID = ItemID()
        let phrase = RecoveryKey.generate()
        let publicKey = try RecoverySeal.publicKey(phrase: phrase, vaultID: vaultID)
        let privateKey = try RecoverySeal.privateKey(phrase: phrase, vaultID: vaultID)
        let sealer = try RecoverySeal.Sealer(to: publicKey)
        let ids = (0..<3).map { _ in ItemID() }
        let secrets = ids.map { _ in SecretBytes(randomCount: 32) }
        let seals = try zip(ids, secrets).map { id, secret in
            try sealer.seal(secret, associatedData: RecoverySeal.itemAAD(vaultID: vaultID, itemID: id, kind: .file))
        }
        #expect(Set(seals.map { Array($0.prefix(32)) }).count == 1, "one ephemeral key per group")
        #expect(Set(seals.map { Array($0[32..<44]) }).count == 3, "a nonce repeated")
        for (n, seal) in seals.enumerated() {
            let ad = RecoverySeal.itemAAD(vaultID: vaultID, itemID: ids[n], kind: .file)
            #expect(try RecoverySeal.open(seal, with: privateKey, associatedData: ad).constantTimeEquals(secrets[n]))
            let other = RecoverySeal.itemAAD(vaultID: vaultID, itemID: ids[(n + 1) % 3], kind: .file)
            #expect(throws: Nu11Error.self) { _ = try RecoverySeal.open(seal, with: privateKey, associatedData: other) }
        }
        let wrong = try RecoverySeal.privateKey(phrase: RecoveryKey.generate(), vaultID: vaultID)
        #expect(throws: Nu11Error.self) {
            _ = try RecoverySeal.open(seals[0], with: wrong, associatedData: RecoverySeal.itemAAD(vaultID: vaultID, itemID: ids[0], kind: .file))
        }
        // A new sealer (the next group) has an ephemeral key of its own.
        let next = try RecoverySeal.Sealer(to: publicKey).seal(secrets[0], associatedData: [1])
        #expect(Array(next.prefix(32)) != Array(seals[0].prefix(32)))
    }
}
