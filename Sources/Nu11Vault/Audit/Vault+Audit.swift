// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// The audit log as the vault writes and reads it (docs/FORMAT.md §7, docs/THREAT-MODEL.md).
extension Vault {
    /// Records one event in this vault's log: item IDs and counts, never names or content.
    /// A log that cannot be written never fails the command; it is reported.
    public func audit(_ event: String, count: Int? = nil, items: [ItemID] = [], detail: String? = nil) {
        appendAudit([AuditEntry(time: now, event: event, count: count, items: items.isEmpty ? nil : items.map(\.hex), detail: detail)])
    }

    /// The same, for one item as the user named it.
    public func audit(_ event: String, ref: ItemRef, detail: String? = nil) {
        guard let id = try? items.row(ref).id else { return }
        audit(event, count: 1, items: [id], detail: detail)
    }

    /// The same, for the items given (their count is the entry's count).
    func audit(_ event: String, ids: [ItemID], detail: String? = nil) {
        audit(event, count: ids.count, items: ids, detail: detail)
    }

    /// `current`: the log's bytes when the caller read them already (nil inside: there is none).
    func appendAudit(_ entries: [AuditEntry], folded: UInt64? = nil, current: [UInt8]?? = .none,
                     opened: (file: AuditLogFile, head: AuditHead)? = nil) {
        guard !isLocked else { return }  // a commit that may not be durable locked the session (it said so)
        do {
            try AuditTrail.append(entries, folded: folded, keys: keys, keyStore: keyStore,
                                  maxBytes: settings.logMaxKiB << 10, now: now, current: current, opened: opened)
        } catch {
            notice("the audit log could not be written (\(Self.describe(error)))")
        }
    }

    /// At unlock: the primary vault folds in the device journal (what happened before the
    /// PIN), then records the unlock (and the Skeleton check-in it makes).
    func auditUnlock() {
        var entries: [AuditEntry] = []
        var folded: UInt64?
        // The log is read, parsed and its head opened once, for its mark and its append (a
        // vault's log is 1 MiB, padded, and the head is most of it).
        var current: [UInt8]?? = .none
        var opened: (file: AuditLogFile, head: AuditHead)?
        if role == .primary, let keys = try? keys {
            do { current = .some(try keyStore.readLog(AuditTrail.name(keys))) } catch {}
            if let bytes = current.flatMap({ $0 }), let file = try? AuditLogFile.parse(bytes),
               let head = file.head(key: AuditTrail.key(keys)) {
                opened = (file, head)
            }
            let mark = opened?.head.folded ?? 0
            let journal = DeviceJournal.unfolded(keyStore, after: mark)
            entries += journal.entries.map { entry in
                var copy = entry
                copy.detail = "before unlock" + (entry.detail.map { ": " + $0 } ?? "")
                return copy
            }
            if let problem = journal.problem {
                entries.append(AuditEntry(time: now, event: "device journal damaged", detail: problem))
            }
            folded = journal.last
        }
        entries.append(AuditEntry(time: now, event: "unlock"))
        if role == .primary && state.skeleton != nil { entries.append(AuditEntry(time: now, event: "skeleton check-in")) }
        appendAudit(entries, folded: folded, current: current, opened: opened)
    }

    /// With a TPM, the device state (anchored by the TPM's counter) records how far this
    /// vault's log reached at its last unlock; a log that ends before that was put back to an
    /// older copy. Said at once (a notice, and an entry in the log as evidence), then the
    /// mark moves to the log as it is. Without a TPM the state can be put back with the log,
    /// so nothing is recorded (docs/THREAT-MODEL.md, "The audit log").
    func anchorLog() {
        guard !index.isReadOnly, (try? keyStore.readMaster().tpmBound) == true, let keys = try? keys else { return }
        let name = AuditTrail.name(keys)
        let key = AuditTrail.key(keys)
        func last() -> UInt64? {
            guard let bytes = try? keyStore.readLog(name), let file = try? AuditLogFile.parse(bytes) else { return nil }
            return file.headSequence(key: key)
        }
        guard var reached = last() else { return }
        let seen = state.logMarks?[name] ?? 0
        if reached < seen {
            let what = "the audit log ends at entry #\(reached), but this vault's log had reached #\(seen) (recorded under the TPM's counter): an older copy of the log was put back"
            logRollback = what
            notice(what)
            appendAudit([AuditEntry(time: now, event: "log rolled back", detail: what)])
            reached = last() ?? reached
        }
        var marks = state.logMarks ?? [:]
        marks[name] = reached
        state.logMarks = marks
        do { try saveState() } catch {
            notice("how far the audit log reached could not be recorded (\(Self.describe(error))); a rollback of the log before the next unlock would go unnoticed")
        }
    }

    /// This vault's log, authenticated end to end; throws, naming the first entry that was
    /// edited, removed, reordered or cut off. `setAside`: earlier logs of this vault that
    /// failed and were kept as evidence, with what is wrong with each.
    public func auditLog() throws -> (contents: AuditLogContents, setAside: [(name: String, problem: String)]) {
        let keys = try keys
        let name = AuditTrail.name(keys)
        guard let bytes = try keyStore.readLog(name) else {
            throw Nu11Error(.notFound, "this vault has no audit log yet", remedy: .advice(.logStartsAtUnlock))
        }
        let contents = try AuditLogFile.parse(bytes).open(key: AuditTrail.key(keys))
        var setAside: [(String, String)] = []
        for aside in try keyStore.setAsideLogs(of: name) {
            do {
                _ = try AuditLogFile.parse(keyStore.readLog(aside) ?? []).open(key: AuditTrail.key(keys))
                setAside.append((aside, "set aside after a failure to append"))
            } catch {
                setAside.append((aside, Self.describe(error)))
            }
        }
        return (contents, setAside)
    }
}
