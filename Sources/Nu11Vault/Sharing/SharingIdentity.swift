// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// The vault's own age identities (docs/FORMAT.md §4.9): a post-quantum (mlkem768x25519)
/// and a classical (X25519) one, each a subkey of the vault's archive key, which the key
/// store seals under the PIN like the other domain keys. Nothing new is stored: a key store
/// made before sharing existed has them already, a rotation (`rekey`) gives new ones with
/// the new archive key, and the archive keys a rotation retired (kept under the new one)
/// give the old ones back, so shares sent to an old recipient still import here.
extension Sharing {
    static let postQuantumPurpose = "age identity mlkem768x25519"
    static let classicalPurpose = "age identity x25519"

    static func identities(archiveKey: SecretBytes) throws -> [AgeIdentity] {
        [try AgeIdentity(kind: .postQuantum, secret: Subkey.derive(from: archiveKey, purpose: postQuantumPurpose)),
         try AgeIdentity(kind: .x25519, secret: Subkey.derive(from: archiveKey, purpose: classicalPurpose))]
    }

    /// The recipients others encrypt to: post-quantum first, then classical.
    public func recipients() throws -> (postQuantum: AgeRecipient, classical: AgeRecipient) {
        let identities = try Self.identities(archiveKey: domainKey(.archive))
        guard let pq = identities[0].recipient, let classical = identities[1].recipient else {
            throw Nu11Error(.internalError, "the vault's age identity gives no recipient")
        }
        return (pq, classical)
    }

    /// Every identity that opens a share sent here: the current ones, then those of the
    /// archive keys earlier rotations retired.
    func allIdentities() throws -> [AgeIdentity] {
        let current = try domainKey(.archive)
        let retired = (try? keyStore.retiredArchiveKeys(under: current)) ?? []
        return try ([current] + retired).flatMap { try Self.identities(archiveKey: $0) }
    }
}
