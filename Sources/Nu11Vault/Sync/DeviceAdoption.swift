// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What an unlock of a shared vault took in from the other devices (docs/FORMAT.md § 9.6).
public struct DeviceAdoption: Sendable, Equatable {
    /// Items another device added, now listed here.
    public var adopted = 0
    /// Items whose key file is wrapped under another generation's key (another device made new keys).
    public var otherGeneration = 0
    /// Key files that do not open with this vault's shared key (forged or altered): left as they are.
    public var refused: [String] = []
    /// Items this device destroyed whose files (key file included) are there again: an old copy
    /// put back by a sync peer or a restore; not taken in.
    public var putBack: [String] = []
    /// Rows this device listed whose key record was missing (an index kept from before this device
    /// joined again), given it from their key files.
    public var keysRestored = 0
    /// Items another device deleted: every file of theirs gone from the folder, key file included;
    /// their key records and rows here went too.
    public var deletedElsewhere = 0
    /// Album moves, new albums, album renames and deletions another device made, followed here.
    public var albumChanges = 0
    /// Syncthing's partial copies of deleted or abandoned items' files, removed (`SyncthingTemps`).
    public var partialCopiesRemoved = 0
}

extension Devices {
    /// The primary vault's content files the index lacks and this key store has no record for,
    /// whose key file in `Keys/` opens with the shared key and whose clear header names the same
    /// item and kind: their key records are written, then their rows come back from their
    /// sidecars as a repair adopts them — without writing the sidecars, which are the other
    /// device's files. A content file whose key file has not arrived waits for it.
    public func adoptFromOtherDevices() throws -> DeviceAdoption {
        var result = DeviceAdoption()
        guard !index.isReadOnly, let shared = try context(),
              ProtectedFiles.kind(location.sharedKeysFolder) == .directory else { return result }
        let files = try vault.maintenance.contentFiles()
        let rows = try index.allRows()  // read once: the steps below change only their own rows
        let known = Set(rows.map(\.id))
        let recorded = Set(try keyStore.itemKeyIDs())
        let main = try keys.main
        var records: [ItemKeyRecord] = []
        var seen = Set<ItemID>()
        // An item whose key record is here but whose row is not: an adoption cut short after the
        // records were written (they are durable first); the rows are what is left to do.
        var recordedOnly = false
        for path in files where path.hasPrefix(location.vaultRoot + "/Vault/") || path.hasPrefix(location.notesFolder + "/vault_") {
            let name = (path as NSString).lastPathComponent
            guard !name.hasPrefix(ProtectedFiles.tempPrefix), name.hasSuffix(".n11") || name.hasSuffix(".n11note"),
                  let id = try? ItemID(hex: Maintenance.stem(name)), !seen.contains(id) else { continue }
            seen.insert(id)
            // A row with its record: nothing to do. A row without one (an index this device had
            // before it joined again with a new key store) gets its record from the key file.
            if recorded.contains(id) {
                if !known.contains(id) { recordedOnly = true }
                continue
            }
            guard let bytes = try? ProtectedFiles.read(location.sharedKeyPath(id), limit: 256) else { continue }
            if keyStore.sharedDeletionRecorded(id) {
                result.putBack.append(id.hex)
                continue
            }
            guard let head = try? SharedItemKey.head(bytes, id: id) else {
                result.refused.append(id.hex)
                continue
            }
            guard head.generation == shared.generation else {
                result.otherGeneration += 1
                continue
            }
            guard let opened = try? SharedItemKey.open(bytes, id: id, vaultID: shared.vaultID, key: shared.key),
                  let header = try? N11Header.parse(ProtectedFiles.readPrefix(path, count: N11Header.byteCount)),
                  header.itemID == id, header.kind == opened.kind, header.domain == .vault else {
                result.refused.append(id.hex)
                continue
            }
            records.append(try ItemKeyRecord.seal(itemKey: opened.itemKey, domain: .vault, kind: opened.kind, itemID: id, domainKey: main))
            if known.contains(id) { result.keysRestored += 1 }
        }
        let gone = try dropDeletedElsewhere(files: files, rows: rows)
        result.deletedElsewhere = gone.count
        if !records.isEmpty || recordedOnly { try takeIn(records, files: files, known: known, into: &result) }
        // Albums last: the items just taken in are in their albums already.
        // (Rows taken in just now are in the album their folder says already.)
        result.albumChanges = try followAlbums(files: files, rows: rows.filter { !gone.contains($0.id) })
        if result.albumChanges > 0 { vault.listingCache.removeAll() }
        result.partialCopiesRemoved = removeAbandonedPartialCopies(listed: known.subtracting(gone).union(records.map(\.itemID)))
        return result
    }

    private func takeIn(_ records: [ItemKeyRecord], files: [String], known: Set<ItemID>, into result: inout DeviceAdoption) throws {
        try keyStore.writeItemKeys(records, durable: true)
        let adoption = try vault.maintenance.adoptOrphans(files, known: known, write: true, writeSidecars: false)
        result.adopted = adoption.rows.count
        if result.adopted > 0 || result.keysRestored > 0 {
            vault.listingCache.removeAll()
            audit("device adopt", count: result.adopted, detail: "items another device added")
        }
    }

    /// Rows of the primary vault none of whose files is in the folder any more — no content file
    /// (in any album), sidecar, thumbnail or key file — are items another device deleted (the
    /// synchronizer removed their files here): deleted here too, as a delete does (marker, key
    /// record, row). Without their key file nothing of them could open again anyway, and a
    /// restored copy of the folder brings them back through their key files. Only when the
    /// folders themselves are there (a folder not mounted is not a deletion).
    private func dropDeletedElsewhere(files: [String], rows: [ItemRow]) throws -> Set<ItemID> {
        for folder in [location.photosFolder, location.albumsFolder, location.metaFolder, location.sharedKeysFolder] {
            guard ProtectedFiles.kind(folder) == .directory else { return [] }
        }
        var present = Set<ItemID>()
        for path in files {
            if let id = try? ItemID(hex: Maintenance.stem((path as NSString).lastPathComponent)) { present.insert(id) }
        }
        // Key files, and files a repair set aside (Quarantine/): not deleted.
        for folder in [location.sharedKeysFolder, vault.maintenance.quarantineFolder] {
            for name in (try? ProtectedFiles.list(folder)) ?? [] {
                if let id = try? ItemID(hex: Maintenance.stem(name)) { present.insert(id) }
            }
        }
        let quarantined = try index.quarantinedIDs()
        let gone = rows.filter { $0.domain == .vault && !present.contains($0.id) && !quarantined.contains($0.id) }
        guard !gone.isEmpty else { return [] }
        try vault.items.delete(rows: gone, secure: false)
        vault.listingCache.removeAll()
        audit("deleted on another device", count: gone.count, items: gone.map(\.id))
        return Set(gone.map(\.id))
    }

    /// At unlock: what the other devices added comes in; a failure is a notice, never a refusal
    /// to open (the next unlock tries again).
    func adoptAtUnlock() {
        // This device's record, when it is gone from the folder (deleted, or a join cut short
        // after the commit point): written again, under a name made from its ID.
        if !index.isReadOnly, let shared = try? context(), ProtectedFiles.kind(location.deviceRecordPath(shared.device)) == nil,
           let main = try? keys.main {
            let record = DeviceRecord(id: shared.device, name: "device \(shared.device.hex.prefix(8))", added: Int64(now))
            try? ProtectedFiles.makeDirectory(location.devicesFolder)
            if let bytes = try? record.sealed(vaultID: shared.vaultID, main: main) {
                try? ProtectedFiles.writeAtomically(bytes, to: location.deviceRecordPath(shared.device))
            }
        }
        do {
            let result = try adoptFromOtherDevices()
            if result.otherGeneration > 0 {
                notice("\(result.otherGeneration) item(s) another device added are sealed under keys this device does not hold",
                       remedy: .advice(.pairAgain))
            }
            if let first = result.putBack.first {
                notice("\(result.putBack.count) item(s) this device deleted are in the vault folder again (e.g. item \(first): an old copy put back by a sync peer or a restore); they stay deleted and are not listed",
                       remedy: .advice(.untrusted))
            }
            if let first = result.refused.first {
                notice("\(result.refused.count) key file(s) in \(location.sharedKeysFolder) do not open with this vault's shared key (e.g. item \(first): made by someone without the vault's keys, or altered); those items were not taken in",
                       remedy: .advice(.untrusted))
            }
        } catch {
            notice("the items other devices added could not be taken in (\(Vault.describe(error))); the next unlock tries again")
        }
    }
}
