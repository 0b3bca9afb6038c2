// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// A group of staged items between the first and the last step of its commit
/// (`Items.beginCommit`, `publish`, `Items.finishCommit`): its journal marker is durable and
/// its key records are written.
struct CommitGroup {
    var staged: [StagedItem]
    let old: [ItemRow]
    let albums: [AlbumRow]
    let marker: String
    let fades: [DeviceState.FadeEntry]
    /// The folders whose file systems the group syncs (the vault's and the key store's).
    let roots: [String]
    let index: VaultIndex

    /// The middle step, which touches only the group's own files and the index: one sync
    /// (content, thumbnails and key records durable) → every file renamed into place → one
    /// sync (the renames durable) → the index transaction, the commit point. A failure
    /// leaves `published` saying which files moved, for the undo.
    mutating func publish() throws {
        try ProtectedFiles.syncFileSystems(roots)
        for i in staged.indices {
            staged[i].published = true
            try staged[i].thumbnailWriter?.publish()
            try staged[i].sidecarWriter?.publish()
            try staged[i].sharedKeyWriter?.publish()
            try staged[i].writer.publish()
        }
        try ProtectedFiles.syncFileSystems(roots)
        do {
            try index.commit(albums: albums, items: staged.map(\.row), removing: old.map(\.id))  // the commit point
        } catch var error as Nu11Error where !error.undecided && !staged.isEmpty {
            // The index settled a failed commit (`VaultIndex.write`): what it holds now is what
            // every later command sees. Rows there mean the transaction reached the file (and the
            // checkpoint that settled it made it durable): committed after all. A read that
            // fails leaves it undecided, for the next command.
            switch Result(catching: { try index.containsAll(staged.map(\.row.id)) }) {
            case .success(true): return
            case .success(false): throw error
            case .failure:
                error.undecided = true
                throw error
            }
        }
    }
}

/// A group whose middle step runs on a thread of its own while the importing thread stages
/// the next group, so that encryption never waits for the disk (the overlapped group
/// commit). At most one group is in flight: the next one begins (marker, key records) only
/// once this one is joined, so markers never overlap and the order of every group's own
/// file-system calls is the one the crash and power-loss tests prove.
final class GroupInFlight: @unchecked Sendable {
    // @unchecked Sendable, and why it is sound: the group is handed over whole — the
    // importing thread touches neither `group` nor `failure` between `init` and `join`, the
    // commit thread touches nothing else of the vault (the index is Sendable), and the
    // semaphore orders its writes before the importing thread's reads.
    private var group: CommitGroup
    private var failure: (any Error)?
    private let done = DispatchSemaphore(value: 0)

    init(_ group: CommitGroup) {
        self.group = group
        // The job (and the index it holds) is let go before `join` returns (`Worker`).
        Worker.start(signalling: done, blocking: true) { [self] in
            do { try self.group.publish() } catch { self.failure = error }
        }
    }

    /// Waits for the middle step; the group, and its failure if it failed (then not undone yet).
    func join() -> (group: CommitGroup, failure: (any Error)?) {
        done.wait()
        return (group, failure)
    }
}

extension Items {
    /// Commits `staged` with its middle step on another thread: returns at once, with the
    /// group in flight. `landGroup` finishes it.
    func commitInBackground(_ staged: [StagedItem]) throws -> GroupInFlight {
        GroupInFlight(try beginCommit(staged))
    }

    /// Joins a group in flight and finishes it (the marker removed), or undoes it and throws
    /// what failed. Its items, as `staged` (all published after a success).
    func landGroup(_ flight: GroupInFlight) throws -> [StagedItem] {
        let (group, failure) = flight.join()
        if let failure {
            undoUnlessUndecided(group, failure)
            throw failure
        }
        finishCommit(group)
        return group.staged
    }
}
