// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// A user's delete (and an album's, a faded item's): the intent marker, the key records
/// destroyed (the commit point: an item is reported deleted only once its key is gone), then
/// the files and rows. The files themselves are destroyed by `Shredder` (ItemFiles.swift).
extension Items {
    /// Crypto-shredding: the item's key record is destroyed first (that is what makes the
    /// content unrecoverable), then the file, then the index row; the WAL is truncated.
    ///
    /// Secure mode (`secure: true`, or the `deletion.mode` setting) first overwrites the file
    /// in place with random bytes and fsyncs it, then destroys the key, then unlinks and
    /// checks the file is gone. See docs/THREAT-MODEL.md for what an overwrite cannot promise.
    /// A Live Photo goes whole: deleting a still deletes its motion too (deleting the motion
    /// alone leaves the still, a photo of its own). Returns every item deleted, in order.
    @discardableResult
    public func delete(_ refs: [ItemRef], secure: Bool? = nil) throws -> [ItemID] {
        var seen = Set<ItemID>()
        var rows: [ItemRow] = []
        for row in try refs.map({ try row($0) }) where seen.insert(row.id).inserted {
            rows.append(row)
            guard row.kind == .file, let motion = try? ItemMetadata.open(row, key: metadataKey(row.domain)).motion,
                  !seen.contains(motion), let video = try? self.row(ItemRef(motion)) else { continue }
            seen.insert(motion)
            rows.append(video)
        }
        let mode = secure ?? (settings.deletionMode == .secure)
        try delete(rows: rows, secure: mode)
        audit("delete", count: rows.count, items: rows.map(\.id), detail: mode ? "secure" : "standard")
        return rows.map(\.id)
    }

    func delete(rows: [ItemRow], secure: Bool) throws {
        // The durable intent marker comes first: a crash from here on is finished by the next
        // command. One marker for all of them.
        var marker: String?
        try commitStep("recording the deletion") {
            marker = try keyStore.markPendingBatch(rows.map {
                PendingOperation(.deleting, id: $0.id, kind: $0.kind, domain: $0.domain, album: $0.album, secure: secure)
            })
        }
        let ids = Set(rows.map(\.id))
        for id in ids { forgetCached(id) }
        // The commit point is the key records' destruction: an item is reported deleted only
        // once its key is gone (crypto-shredding), never while its record is still in its pack.
        try destroyKeys(rows: rows, secure: secure, marker: marker)
        let fadeChanged = state.fade.contains { ids.contains($0.id) }
        state.fade.removeAll { ids.contains($0.id) }
        afterCommit("finishing the deletion") { try finishDelete(rows: rows, saveFade: fadeChanged, marker: marker) }
    }

    /// Secure mode's overwrite of the files, then every key record destroyed. An overwrite
    /// that fails does not stop the key's destruction (that is what makes the item
    /// unrecoverable; the notice says the overwrite did not happen). When destroying the keys
    /// fails, each item whose record is still there is not deleted: with nothing destroyed
    /// and no file overwritten the deletion is undone (the marker removed), else it stays
    /// pending for the next command to finish, and the error says which.
    private func destroyKeys(rows: [ItemRow], secure: Bool, marker: String?) throws {
        var overwriteFailed: [String] = []
        if secure {
            for row in rows {
                for path in ItemFiles(location: location).candidates(row) where ProtectedFiles.kind(path) == .file {
                    do { try ProtectedFiles.overwrite(path) } catch { overwriteFailed.append("item \(row.id): \(Vault.describe(error))") }
                }
            }
        }
        // Said once the keys are destroyed (an error below says when they are not).
        func overwriteNotice() {
            guard let first = overwriteFailed.first else { return }
            notice("the overwrite of \(overwriteFailed.count) file(s) failed (\(first)); their keys are destroyed all the same, so they cannot be decrypted, but their bytes may remain on the disk")
        }
        do {
            try keyStore.destroyItemKeys(rows.map(\.id))
        } catch {
            let intact = rows.filter { keyStore.hasItemKey($0.id) }
            guard !intact.isEmpty else {
                // Every record is zeroed; only its sync failed.
                overwriteNotice()
                notice("done, but destroying the key record(s) may not survive a power cut yet (\(Vault.describe(error))); the next time the vault is opened, it is finished")
                return
            }
            let names = intact.prefix(5).map(\.id.hex).joined(separator: ", ") + (intact.count > 5 ? ", …" : "")
            let shredded = rows.count - intact.count
            if intact.count == rows.count && !secure {
                do {
                    if let marker { try keyStore.clearPendingBatch(marker) }
                } catch let undo as Nu11Error where !undo.tookEffect {
                    throw Nu11Error(.io, "item(s) \(names) not deleted yet: their key record could not be destroyed (\(Vault.describe(error))); the deletion is pending and the next command that opens the vault finishes it",
                                    remedy: .check(reason: nil), item: intact[0].id.hex)
                }
                throw Nu11Error(.io, "item(s) \(names) not deleted: their key record could not be destroyed (\(Vault.describe(error))); nothing was changed",
                                remedy: .advice(.checkDisk), item: intact[0].id.hex)
            }
            throw Nu11Error(.io, (shredded > 0 ? "\(shredded) item(s) deleted, but " : "")
                                + "item(s) \(names) not deleted yet: their key record could not be destroyed (\(Vault.describe(error)))"
                                + (secure ? " after their files were overwritten" : "")
                                + "; the deletion is pending and the next command that opens the vault finishes it",
                            remedy: .check(reason: nil), item: intact[0].id.hex)
        }
        overwriteNotice()
    }

    private func finishDelete(rows: [ItemRow], saveFade: Bool, marker: String?) throws {
        // The keys are gone (and secure mode overwrote the files): what is left is the listing
        // cache, the files and the rows.
        let shredder = shredder(secure: false)
        for row in rows { try shredder.shred(row) }
        try index.deleteItems(rows.map(\.id))
        if let marker { try keyStore.clearPendingBatch(marker) }
        if saveFade { try saveState() }
    }
}
