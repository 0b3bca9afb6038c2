// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Where a vault's audit log lives and what seals it: both derived from the vault's archive
/// key (the one domain key a rotation keeps), so a rotation does not orphan the log, the
/// backup PIN (and the duress PIN, which holds the same keys) finds only the backup vault's
/// log, and the file's name tells nothing about which vault it belongs to.
enum AuditTrail {
    static func logID(_ keys: DomainKeys) -> [UInt8] {
        Subkey.derive(from: keys.archive, purpose: "audit log id").withUnsafeBytes { Array($0.prefix(16)) }
    }

    static func key(_ keys: DomainKeys) -> SecretBytes { Subkey.derive(from: keys.archive, purpose: "audit log") }

    static func name(_ keys: DomainKeys) -> String { Hex.encode(logID(keys)) + ".n11l" }

    /// Appends to a log, creating it (or, when it cannot be parsed, setting the damaged one
    /// aside as evidence and starting a new one that says so).
    /// `padded`: a vault's log (and a decoy) is always `maxBytes` long, so its size does not
    /// tell how much the vault was used, or whether it is a decoy.
    /// `opened`: `current` parsed, with its head opened, when the caller did that already.
    static func append(_ entries: [AuditEntry], folded: UInt64? = nil, name: String, logID: [UInt8], key: SecretBytes,
                       keyStore: KeyStore, maxBytes: Int, padded: Bool = true, now: Double, current: [UInt8]?? = .none,
                       opened: (file: AuditLogFile, head: AuditHead)? = nil) throws {
        let next: AuditLogFile
        if let bytes = try current ?? keyStore.readLog(name) {
            do {
                next = try (opened?.file ?? AuditLogFile.parse(bytes))
                    .appending(entries, folded: folded, key: key, maxBytes: maxBytes, padded: padded, head: opened?.head)
            } catch {
                // Kept as evidence (`log --verify` keeps failing on it until it is removed).
                let aside = try keyStore.setAsideLog(name)
                let restart = AuditEntry(time: now, event: "log restarted",
                                         detail: "the previous log failed (\(Vault.describe(error))); kept as \(aside)")
                next = try AuditLogFile.create(logID: logID, key: key).appending([restart] + entries, folded: folded, key: key,
                                                                                 maxBytes: maxBytes, padded: padded)
            }
        } else {
            next = try AuditLogFile.create(logID: logID, key: key).appending(entries, folded: folded, key: key, maxBytes: maxBytes,
                                                                             padded: padded)
        }
        try keyStore.writeLog(name, next.encoded())
    }

    /// A log under a random key and ID with one entry: what a backup vault's fresh log looks
    /// like, kept while there is none, so the log folder does not tell whether a backup PIN
    /// exists (written at `init`, and again when the duress PIN shreds the primary's log).
    static func writeDecoy(keyStore: KeyStore, maxBytes: Int = Settings().logMaxKiB << 10, now: Double) throws {
        let id = SecureRandom.bytes(16)
        let key = SecretBytes(randomCount: 32)
        try append([AuditEntry(time: now, event: "init")], name: Hex.encode(id) + ".n11l", logID: id, key: key,
                   keyStore: keyStore, maxBytes: maxBytes, now: now)
    }

    /// `current`: the log's bytes as the caller read them (`.some(nil)`: there is none); read here when left out.
    static func append(_ entries: [AuditEntry], folded: UInt64? = nil, keys: DomainKeys, keyStore: KeyStore,
                       maxBytes: Int, now: Double, current: [UInt8]?? = .none, opened: (file: AuditLogFile, head: AuditHead)? = nil) throws {
        try append(entries, folded: folded, name: name(keys), logID: logID(keys), key: key(keys), keyStore: keyStore,
                   maxBytes: maxBytes, now: now, current: current, opened: opened)
    }
}

/// What happens before a PIN is typed (wrong PINs, fade expiries, a tampered state or
/// settings file) is kept in the device journal, sealed under a subkey of the device key,
/// and folded into the primary vault's log at its next unlock. Best effort: a journal that
/// cannot be written never stops a command (the wrong-PIN count itself is in the state).
enum DeviceJournal {
    static let logID = [UInt8](repeating: 0, count: 16)
    static let maxBytes = 64 << 10

    static func key(_ keyStore: KeyStore) throws -> SecretBytes {
        Subkey.derive(from: try keyStore.deviceKey(), purpose: "audit journal")
    }

    static func record(_ keyStore: KeyStore, _ entries: [AuditEntry], now: Double) {
        guard !entries.isEmpty, let key = try? key(keyStore) else { return }
        try? AuditTrail.append(entries, name: KeyStore.deviceJournalName, logID: logID, key: key, keyStore: keyStore,
                               maxBytes: maxBytes, padded: false, now: now)
    }

    /// The journal's entries after `mark`, its last sequence number, or the reason it does
    /// not open.
    static func unfolded(_ keyStore: KeyStore, after mark: UInt64) -> (entries: [AuditEntry], last: UInt64, problem: String?) {
        guard let bytes = try? keyStore.readLog(KeyStore.deviceJournalName) else { return ([], mark, nil) }
        do {
            let contents = try AuditLogFile.parse(bytes).open(key: key(keyStore))
            // A journal that started over (its last entry is below the mark) is folded whole.
            let from = contents.head.last < mark ? 0 : mark
            return (contents.entries.filter { $0.seq > from }, contents.head.last, nil)
        } catch {
            return ([], mark, Vault.describe(error))
        }
    }
}
