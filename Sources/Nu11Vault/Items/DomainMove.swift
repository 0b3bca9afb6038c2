// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// An item moving between domains with its ID (`fade set` and its cancel, issue 58; FORMAT.md
/// §4.6): re-encrypted under a new key into the other domain, beside the old copy, then
/// swapped at one commit point — the index row changing its domain in place. The two copies
/// never share a name until then: the content files are in different folders, the key records
/// are told apart by their domain (FORMAT.md §4.3), and the new thumbnail and sidecar wait
/// under fixed temp names (`staged`) until the commit point, then replace the old ones.
/// A crash at any step leaves exactly one readable item with the ID: before the commit point
/// the old one (the next command removes the new copy), after it the new one (the next
/// command finishes the swap and shreds the old copy), from the journal marker (`moving`).
enum DomainMove {
    /// Where the new thumbnail and sidecar wait for the commit point. Temp names (the leftover
    /// sweep removes them, but only after the marker that names the move was settled), fixed
    /// by the ID so that the settling finds them.
    static func staged(_ location: VaultLocation, _ id: ItemID) -> (thumbnail: String, sidecar: String) {
        (location.thumbnailsFolder + "/" + ProtectedFiles.tempPrefix + "moving-" + id.hex + ".n11thumb",
         location.metaFolder + "/" + ProtectedFiles.tempPrefix + "moving-" + id.hex + ".n11m")
    }

    /// After the commit point: the new thumbnail and sidecar renamed over the old ones (in
    /// secure mode the old ones overwritten first), then the copy in `from` shredded — its key
    /// record of that domain, its content files, and a thumbnail or sidecar still naming that
    /// domain (the new copy had none). Repeatable: a crash part-way is finished by running it again.
    static func finish(_ location: VaultLocation, keyStore: KeyStore, secure: Bool, id: ItemID, kind: ItemKind,
                       from: Domain, album: ItemID?) throws {
        let staged = staged(location, id)
        for (waiting, final) in [(staged.thumbnail, location.thumbnailPath(id)), (staged.sidecar, location.sidecarPath(id))]
        where ProtectedFiles.kind(waiting) == .file {
            if secure && Shredder.domain(of: final) == from { try ProtectedFiles.overwrite(final) }
            try ProtectedFiles.move(waiting, to: final)
        }
        try Shredder(location, keyStore: keyStore, secure: secure).shred(id: id, kind: kind, onlyIn: from, album: album)
    }

    /// Before the commit point: the new copy in `to` removed (its key record of that domain,
    /// its content file, its waiting thumbnail and sidecar); the old copy is untouched.
    static func undo(_ location: VaultLocation, keyStore: KeyStore, id: ItemID, kind: ItemKind, to: Domain) throws {
        let staged = staged(location, id)
        try ProtectedFiles.remove(staged.thumbnail)
        try ProtectedFiles.remove(staged.sidecar)
        try Shredder(location, keyStore: keyStore, secure: false).shred(id: id, kind: kind, onlyIn: to, album: nil)
    }

    /// Settles a move a crash interrupted (the gate, before the leftover sweep): finished when
    /// the marker says the commit point passed (`committed`, written right after it), or the
    /// index row is in the new domain, or the old copy's key record is already gone (the
    /// shredding after the commit had begun: undoing would leave no copy); undone otherwise.
    /// With no row (an index lost or damaged meanwhile) the sidecar decides: it names the new
    /// domain only once the commit point passed. The deadline follows the copy that stays.
    static func settle(_ op: PendingOperation, location: VaultLocation, keyStore: KeyStore, index: VaultIndex,
                       state: inout DeviceState) throws {
        guard let kind = ItemKind(rawValue: op.kind), let from = Domain(rawValue: op.domain),
              let to = op.to.flatMap(Domain.init(rawValue:)) else { return }
        let row = try index.item(op.id)
        let committed = op.committed == true
            || (row.map { $0.domain == to } ?? (Shredder.domain(of: location.sidecarPath(op.id)) == to))
            || (!keyStore.hasItemKey(op.id, domain: from) && keyStore.hasItemKey(op.id, domain: to))
        if committed {
            try finish(location, keyStore: keyStore, secure: op.secure ?? Shredder.secureMode(keyStore), id: op.id, kind: kind,
                       from: from, album: op.album)
            // A row still in the old domain is an index older than the commit (lost and rebuilt,
            // or put back): it names the copy just shredded. It goes, and the new copy is
            // adopted from its sidecar as any row-less item is (`check --repair`).
            if let row, row.domain == from { try index.deleteItems([op.id]) }
        } else {
            try undo(location, keyStore: keyStore, id: op.id, kind: kind, to: to)
        }
        // The deadline goes with the Fade copy: written before the commit point of a move into
        // Fade, removed after the commit point of a move out of it.
        if (committed ? to : from) != .fade { state.fade.removeAll { $0.id == op.id } }
    }
}

extension Items {
    /// Moves `row` into `domain` keeping its ID (see `DomainMove`): a fresh item key (the domain
    /// is part of the envelope's identity, and the old key's recovery seal must not open the
    /// new copy), new thumbnails and sidecar under it, its name, dates, rotation and Live Photo
    /// link kept; out of any album. The old copy is shredded after the commit point.
    func moveDomain(_ row: ItemRow, into domain: Domain, fadeDeadline: Double?) throws {
        let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
        let (source, fd) = try plaintextSource(row)
        defer { close(fd) }
        var staged = try stage(source, name: meta.name, kind: row.kind, domain: domain, album: nil,
                               fadeDeadline: fadeDeadline, id: row.id, created: meta.created, type: meta.type,
                               modified: meta.modified, motion: meta.motion, turns: meta.turns)
        vault.recoverySealer = nil  // its seal is sealed: the next write gets an ephemeral key of its own (FORMAT.md §5.2)
        try commitMove(&staged, from: row)
    }

    /// The move's commit, in the order the fault tests prove: journal marker (`moving`) →
    /// the deadline (into Fade) → the new key record beside the old one → one sync → the new
    /// content file into place, the new thumbnail and sidecar to their waiting names → one
    /// sync → the index row's domain changed in place: the commit point. Then `DomainMove.finish`,
    /// the deadline dropped (out of Fade), the marker removed.
    private func commitMove(_ staged: inout StagedItem, from old: ItemRow) throws {
        let id = old.id, to = staged.row.domain
        let secure = settings.deletionMode == .secure
        let marker: String
        do {
            marker = try keyStore.markPendingBatch([PendingOperation(.moving, id: id, kind: old.kind, domain: old.domain,
                                                                     album: old.album, secure: secure, to: to)])
        } catch {
            staged.abortFiles()
            throw error
        }
        let waiting = DomainMove.staged(location, id)
        var deadlineAdded = false
        func undo() {
            staged.abortFiles()
            do {
                try DomainMove.undo(location, keyStore: keyStore, id: id, kind: old.kind, to: to)
                if deadlineAdded {
                    state.fade.removeAll { $0.id == id }
                    try saveState()
                }
                try keyStore.clearPendingBatch(marker)
            } catch {}  // the marker stays: the next command undoes the rest
        }
        do {
            if let deadline = staged.fadeDeadline {
                state.fade.removeAll { $0.id == id }
                state.fade.append(DeviceState.FadeEntry(id: id, domain: .fade, kind: old.kind, deadline: deadline))
                deadlineAdded = true
                try saveState()
            }
            try keyStore.writeItemKeys([staged.record], durable: false)
            let roots = [location.vaultRoot, keyStore.root]
            try ProtectedFiles.syncFileSystems(roots)
            try staged.writer.publish()
            try staged.thumbnailWriter?.publishStaged(at: waiting.thumbnail)
            try staged.sidecarWriter?.publishStaged(at: waiting.sidecar)
            try staged.sharedKeyWriter?.publish()
            try ProtectedFiles.syncFileSystems(roots)
        } catch {
            undo()
            throw error
        }
        // The commit point passed: said in the marker at once (before the index's checkpoint),
        // so that a crash from there on is finished by the next command even if the index is
        // lost or an older one is put back before it. (Failing, the index row still tells.)
        var done = PendingOperation(.moving, id: id, kind: old.kind, domain: old.domain, album: old.album, secure: secure, to: to)
        done.committed = true
        func markCommitted() { try? keyStore.rewritePendingBatch(marker, [done]) }
        do {
            try index.moveItem(staged.row, committed: markCommitted)  // the commit point
        } catch let error as Nu11Error where error.tookEffect {
            // Committed; only the checkpoint after it failed (the next delete truncates the WAL).
            notice("done, but the index could not be checkpointed (\(error.message))")
        } catch var error as Nu11Error {
            if error.undecided { throw error }  // the next command settles it from the marker
            // The index settled a failed write (`VaultIndex.write`): the row tells.
            switch Result(catching: { try index.item(id)?.domain }) {
            case .success(let domain) where domain == to: break  // committed after all
            case .success:
                undo()
                throw error
            case .failure:
                error.undecided = true
                throw error
            }
        } catch {
            undo()
            throw error
        }
        markCommitted()  // again, if the index's own call did not get to it (a checkpoint that failed)
        forgetCached(id)
        afterCommit("shredding the item's previous copy") {
            try DomainMove.finish(location, keyStore: keyStore, secure: secure, id: id, kind: old.kind, from: old.domain,
                                  album: old.album)
            if old.domain == .fade, state.fade.contains(where: { $0.id == id }) {
                state.fade.removeAll { $0.id == id }
                try saveState()
            }
            try keyStore.clearPendingBatch(marker)
        }
    }
}
