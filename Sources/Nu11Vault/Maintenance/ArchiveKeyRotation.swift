// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What a rotation does for the archive key and what hangs off it (issue 29: an old key
/// store copy with the old PIN must open nothing made after): the retired key is kept under
/// the new one for secure archives made before, the audit log moves to the new key's name
/// and key (entries, journal mark and TPM anchor carried over), and a settings file this
/// vault tagged is tagged again. All before the commit point, and idempotent: a rotation
/// resumed after a crash runs it again.
extension Maintenance {
    func rotateArchiveKey(from olds: [DomainKeys], to new: DomainKeys) throws {
        let retiring = olds.filter { !$0.archive.constantTimeEquals(new.archive) }
        guard !retiring.isEmpty else { return }
        try keyStore.retireArchiveKeys(retiring.map(\.archive), under: new.archive)
        try moveLog(from: retiring, to: new)
        if let loaded = try? keyStore.loadSettings().settings,
           retiring.contains(where: { loaded.authenticated(under: Vault.settingsKey($0)) }) {
            try keyStore.saveSettings(loaded, tagKey: Vault.settingsKey(new))
        }
    }

    /// Re-seals this vault's log under the new keys: its entries (with their times) appended
    /// to the new log, which is written before the old one is shredded. A crash between the
    /// two leaves both; the resumed rotation appends the old one's entries again (a repeat,
    /// never a loss).
    private func moveLog(from olds: [DomainKeys], to new: DomainKeys) throws {
        let newName = AuditTrail.name(new)
        for old in olds {
            let oldName = AuditTrail.name(old)
            guard oldName != newName, let bytes = try keyStore.readLog(oldName) else { continue }
            let contents: AuditLogContents
            do {
                contents = try AuditLogFile.parse(bytes).open(key: AuditTrail.key(old))
            } catch {
                // A damaged log stays as it is, as evidence; the new keys start a new log that says so.
                _ = try keyStore.setAsideLog(oldName)
                continue
            }
            // Appending numbers them anew in the new log.
            let entries = contents.entries + [AuditEntry(time: now, event: "log re-keyed", detail: "moved to the rotated keys with \(contents.entries.count) entries")]
            try AuditTrail.append(entries, folded: contents.head.folded, keys: new, keyStore: keyStore,
                                  maxBytes: settings.logMaxKiB << 10, now: now)
            if var marks = state.logMarks, marks[oldName] != nil {
                marks[oldName] = nil
                if let reached = try keyStore.readLog(newName).flatMap({ try? AuditLogFile.parse($0).headSequence(key: AuditTrail.key(new)) }) {
                    marks[newName] = reached
                }
                state.logMarks = marks
                try saveState()
            }
            try keyStore.removeLog(oldName)
        }
    }
}
