// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// The commit of staged items (`ItemStaging.swift`): one commit point for a group; before it a
/// failure undoes everything, after it nothing rolls back.
extension Items {
    /// Makes `staged` visible, in the one order the crash and power-loss tests prove:
    /// journal marker → fade deadlines → key records written into free slots of their packs →
    /// one sync → files renamed into place → one sync → the index transaction (new albums, new rows,
    /// removal of the `replacing` rows): the commit point. Then the replaced items are
    /// shredded and the marker removed. A failure before the commit point undoes the lot;
    /// a crash is undone (before) or finished (after) from the marker by the next command.
    /// (A folder import runs the same three steps with the middle one on another thread,
    /// while it stages the next group: `GroupCommit`.)
    func commit(_ staged: inout [StagedItem], replacing old: [ItemRow] = [], albums: [AlbumRow] = []) throws {
        guard !staged.isEmpty || !albums.isEmpty else { return }
        var group = try beginCommit(staged, replacing: old, albums: albums)
        do {
            try group.publish()
        } catch {
            staged = group.staged
            undoUnlessUndecided(group, error)
            throw error
        }
        staged = group.staged
        finishCommit(group)
    }

    /// The first step, on the importing thread: the journal marker, the fade deadlines and the
    /// key records written (not yet durable). A failure undoes it. The group's rows carry their
    /// recovery seals already, so the next group gets an ephemeral key of its own
    /// (FORMAT.md §5.2) from here on.
    func beginCommit(_ staged: [StagedItem], replacing old: [ItemRow] = [], albums: [AlbumRow] = []) throws -> CommitGroup {
        let marker = try keyStore.markPendingBatch(
            staged.map { PendingOperation(.importing, id: $0.row.id, kind: $0.row.kind, domain: $0.row.domain, album: $0.row.album) }
            + old.map { PendingOperation(.replacing, id: $0.id, kind: $0.kind, domain: $0.domain, album: $0.album,
                                        secure: settings.deletionMode == .secure) })
        var group = CommitGroup(staged: staged, old: old, albums: albums, marker: marker,
                                fades: staged.compactMap { s in
                                    s.fadeDeadline.map { DeviceState.FadeEntry(id: s.row.id, domain: .fade, kind: s.row.kind, deadline: $0) }
                                },
                                roots: [location.vaultRoot, keyStore.root], index: index)
        do {
            if !group.fades.isEmpty {
                // A crash from here leaves a deadline for nothing (dropped by the next sweep),
                // never a fade item without a deadline.
                state.fade += group.fades
                try saveState()
            }
            for i in group.staged.indices { group.staged[i].keyWritten = true }
            try keyStore.writeItemKeys(group.staged.map(\.record), durable: false)
        } catch {
            undo(group)
            throw error
        }
        vault.recoverySealer = nil
        return group
    }

    /// The last step, after the commit point: the replaced items shredded, the marker removed
    /// (failures here are notices; the journal lets the next command finish).
    func finishCommit(_ group: CommitGroup) {
        for row in group.old { forgetCached(row.id) }
        afterCommit("shredding what the change replaced") {
            for row in group.old { try shredder().shred(row) }
            let replaced = Set(group.old.map(\.id))
            if state.fade.contains(where: { replaced.contains($0.id) }) {
                state.fade.removeAll { replaced.contains($0.id) }
                try saveState()
            }
            try keyStore.clearPendingBatch(group.marker)
        }
    }

    /// Undoes a group whose commit failed, unless the index could not say whether it committed
    /// (`Nu11Error.undecided`): then everything stays as it is, marker included, and the next
    /// command keeps the items whose rows it finds and shreds the others (`Gate.recoverPending`).
    func undoUnlessUndecided(_ group: CommitGroup, _ error: any Error) {
        guard (error as? Nu11Error)?.undecided != true else { return }
        undo(group)
    }

    /// Undoes an uncommitted group. If the undo fails too, the marker stays and the next
    /// command finishes it.
    func undo(_ group: CommitGroup) {
        do {
            for s in group.staged {
                if s.published { try shredder().shred(s.row) }
                s.abortFiles()
            }
            // Written (or perhaps written: a failure partway) and not shredded above.
            try keyStore.destroyItemKeys(group.staged.filter { $0.keyWritten && !$0.published }.map(\.row.id))
            if !group.fades.isEmpty {
                let ids = Set(group.fades.map(\.id))
                state.fade.removeAll { ids.contains($0.id) }
                try saveState()
            }
            try keyStore.clearPendingBatch(group.marker)
        } catch {}
    }
}
