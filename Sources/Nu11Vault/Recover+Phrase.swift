// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What the recovery phrase gives `recover` for one vault ID (FORMAT.md §5.2): its key pair,
/// used directly on the items' seals, and what `recovery.n11r` adds — nothing it needs. The
/// file is untrusted and optional: when it is there, belongs to this vault and names this
/// phrase's public key, its key sets are opened to *read* (entries without a sidecar, album
/// names), never kept; missing, damaged, another vault's or another phrase's, it is named and left.
struct RecoveryPhraseKeys {
    let vaultID: ItemID
    /// The phrase's public key: the rebuilt key store's new recovery data is sealed to it.
    let publicKey: [UInt8]
    /// Opens a seal made to the phrase's public key.
    let open: ([UInt8], [UInt8]) throws -> SecretBytes
    /// The key sets of `recovery.n11r`, when it is this phrase's (read only, never kept).
    private(set) var sets: [DomainKeys] = []
    /// `recovery.n11r` names this phrase's public key: the phrase is known right, whatever the seals say.
    private(set) var recordIsThePhrases = false
    /// Why `recovery.n11r` was not used, when it was not.
    private(set) var recordProblem: String?
    /// The group of a one-letter slip (or two neighbours swapped) that makes the phrase the one
    /// `recovery.n11r` names, when one does.
    private(set) var typoGroup: Int?

    /// The wrong-phrase error, with the group of a likely typo when one was found.
    var wrongPhrase: Nu11Error {
        guard let typoGroup else { return RecoverySeal.wrongPhrase }
        return Nu11Error(.authenticationFailed,
                         "the recovery phrase does not open this vault's recovery data: probably a typo in group \(typoGroup) (one letter, or two swapped)",
                         remedy: .advice(.typeRecoveryPhrase))
    }

    init(phrase: SecretBytes, vaultID: ItemID, record: RecoveryRecord?, recordPresent: Bool) throws {
        self.vaultID = vaultID
        let privateKey = try RecoverySeal.privateKey(phrase: phrase, vaultID: vaultID)
        publicKey = Array(privateKey.publicKey.rawRepresentation)
        open = { sealed, ad in try RecoverySeal.open(sealed, with: privateKey, associatedData: ad) }
        guard let record else {
            recordProblem = recordPresent ? "is damaged" : "is missing"
            return
        }
        guard record.vaultID == vaultID else {
            recordProblem = "belongs to another vault"
            return
        }
        guard record.publicKey == publicKey else {
            recordProblem = "was made for another phrase (an old copy put back, or a stranger's)"
            typoGroup = RecoveryKey.typoGroup(phrase) { candidate in
                (try? RecoverySeal.publicKey(phrase: candidate, vaultID: vaultID)) == record.publicKey
            }
            return
        }
        recordIsThePhrases = true
        sets = (try? record.open(phrase: phrase)) ?? []
        if sets.isEmpty { recordProblem = "names this phrase, but its key sets do not open (damaged or altered)" }
    }

    /// The vault IDs `recover` can try when the index cannot give one: a damaged index's own
    /// record of it, then `recovery.n11r`'s clear header (bytes 8..<24) even when the rest of
    /// the file is damaged. Item files and sidecars do not carry it (FORMAT.md §2, §2.2).
    static func candidateVaultIDs(index: VaultIndex?, recoveryBytes: [UInt8]?) -> [ItemID] {
        var out: [ItemID] = []
        if let id = (try? index?.vaultID()) ?? nil { out.append(id) }
        if let bytes = recoveryBytes, bytes.count >= 24, Array(bytes[0..<4]) == RecoveryRecord.magic,
           let id = try? ItemID(bytes: Array(bytes[8..<24])), !out.contains(id) {
            out.append(id)
        }
        return out
    }
}

extension LockedVault {
    /// The error when no item came back (nothing was written): a wrong phrase (3) only when the
    /// phrase opens nothing at all; the right phrase with seals that do not open is damaged
    /// data (5); no seal anywhere is no recovery data (4).
    static func nothingRecovered(_ report: RecoveryReport, phraseKnownRight: Bool) -> Nu11Error {
        if let first = report.unrecovered.first {
            let tried = "\(report.unrecovered.count) tried; e.g. item \(first.id): \(first.reason)"
            if phraseKnownRight {
                return Nu11Error(.corrupted,
                                 "the recovery phrase opens the vault folder's recovery data (recovery.n11r) but no item's recovery seal (\(tried)): the seals were altered, or that file is an old copy and the items are sealed to a newer phrase; nothing was written",
                                 remedy: .pointAtRestoredVault)
            }
            return Nu11Error(.authenticationFailed, "the recovery phrase opens nothing in this vault: no item's recovery seal opens with it (\(tried)); nothing was written",
                             remedy: .advice(.typeRecoveryPhrase))
        }
        return Nu11Error(.notFound,
                         report.notCovered == 0
                            ? "the vault folder has no recovery data (no item, and no recovery.n11r made for this phrase); nothing was written"
                            : "the vault folder has no recovery data: none of its \(report.notCovered) item(s) has a recovery seal (made before the phrase, or the recovery data was destroyed); nothing was written",
                         remedy: .noRecoveryData)
    }

    /// Whether a rebuild that brought no item back may go on: only an empty vault whose
    /// recovery.n11r is this phrase's (nothing else could tell the phrase right). Throws the
    /// failure otherwise.
    static func checkSomethingRecovered(_ report: RecoveryReport, keys: RecoveryPhraseKeys, recordParsed: Bool) throws {
        guard report.recovered == 0 else { return }
        if report.unrecovered.isEmpty && report.notCovered == 0 {
            if keys.recordIsThePhrases { return }
            // recovery.n11r of this vault, for another phrase: the phrase opens nothing at all.
            if recordParsed && keys.recordProblem?.hasPrefix("was made for another phrase") == true { throw keys.wrongPhrase }
        }
        if keys.typoGroup != nil && !report.unrecovered.isEmpty { throw keys.wrongPhrase }
        throw nothingRecovered(report, phraseKnownRight: keys.recordIsThePhrases)
    }
}
