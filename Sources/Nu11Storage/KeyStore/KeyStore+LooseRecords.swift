// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// Key records as loose files — `items/<ID>.key`, the layout before key packs, and
/// `quarantine/<ID>.key`, where `check --repair` sets a doubtful record aside. A key store
/// made before packs migrates on the next command (`adoptLooseItemKeys`, run by the gate);
/// a record moved back into `items/` by hand is adopted the same way.
extension KeyStore {
    /// Moves every `items/<ID>.key` into its pack, crash-safe and idempotent: the records go
    /// into the packs, one syncfs, then each file is overwritten, one syncfs, unlinked, one
    /// syncfs, and the emptied folder removed. A cut at any point leaves every record in a
    /// pack or in its file (or both, which the next run resolves the same way). A file that
    /// is not a record of the ID it is named after, or not a plain file, stays where it is
    /// and is returned, for a warning. Returns how many records were adopted.
    @discardableResult
    public func adoptLooseItemKeys() throws -> (adopted: Int, refused: [String]) {
        let folder = layout.items
        guard ProtectedFiles.kind(folder) == .directory else { return (0, []) }
        var records: [ItemKeyRecord] = []
        var paths: [String] = []
        var refused: [String] = []
        for name in try ProtectedFiles.list(folder).sorted() where !name.hasPrefix(ProtectedFiles.tempPrefix) {
            let path = POSIX.join(folder, name)
            guard name.hasSuffix(".key"), ProtectedFiles.kind(path) == .file,
                  let id = try? ItemID(hex: String(name.dropLast(4))),
                  let bytes = try? ProtectedFiles.read(path, limit: 4096),
                  let record = try? ItemKeyRecord.parse(bytes), record.itemID == id else {
                refused.append(path)
                continue
            }
            records.append(record)
            paths.append(path)
        }
        if !records.isEmpty {
            try createMissingPacks()
            try writeIntoPacks(records, durable: false)
            try syncFileSystem()
            for path in paths { try ProtectedFiles.overwrite(path, sync: false) }
            try syncFileSystem()
            for path in paths { try ProtectedFiles.unlinkOnly(path) }
            try syncFileSystem()
        }
        if refused.isEmpty, (try? ProtectedFiles.list(folder))?.allSatisfy({ $0.hasPrefix(ProtectedFiles.tempPrefix) }) == true {
            for name in try ProtectedFiles.list(folder) { try ProtectedFiles.unlinkOnly(POSIX.join(folder, name)) }
            try ProtectedFiles.removeDirectory(folder)
        }
        return (records.count, refused)
    }

    /// Loose records are read where they are until they are adopted: where the key store
    /// cannot be written (a read-only mount, a full disk) the gate's adoption fails, and a key
    /// store from before packs still opens for reading. Nothing writes a record while loose
    /// ones remain: writes adopt them first (`adoptBeforeWriting`), and a deletion destroys
    /// the loose file too.
    func looseRecord(_ id: ItemID) throws -> ItemKeyRecord? {
        let path = POSIX.join(layout.items, id.hex + ".key")
        guard ProtectedFiles.kind(path) == .file else { return nil }
        let record = try ItemKeyRecord.parse(try ProtectedFiles.read(path, limit: 4096))
        guard record.itemID == id else {
            throw Nu11Error(.corrupted, "\(path) holds the key record of another item", remedy: .check(reason: nil), item: id.hex)
        }
        return record
    }

    /// IDs of the loose records that name their item rightly (the ones adoption would take).
    func looseRecordIDs() throws -> [ItemID] {
        guard ProtectedFiles.kind(layout.items) == .directory else { return [] }
        return try ProtectedFiles.list(layout.items).compactMap { name -> ItemID? in
            guard name.hasSuffix(".key"), let id = try? ItemID(hex: String(name.dropLast(4))) else { return nil }
            return (try? looseRecord(id)) == nil ? nil : id
        }
    }

    /// Adopts loose records before a write, so that a pack and a loose file never hold two
    /// versions of one record (adoption would let the loose one win).
    func adoptBeforeWriting() throws {
        guard ProtectedFiles.kind(layout.items) == .directory else { return }
        try adoptLooseItemKeys()
    }

    /// Overwrites and removes the loose records of `ids`, if any (crypto-shredding covers them).
    func destroyLooseRecords(_ ids: [ItemID]) throws {
        guard ProtectedFiles.kind(layout.items) == .directory else { return }
        for id in ids {
            let path = POSIX.join(layout.items, id.hex + ".key")
            if ProtectedFiles.kind(path) == .file { try ProtectedFiles.overwriteAndRemove(path) }
        }
    }

    /// Sets an item's key record aside in `quarantine/<ID>.key` (durably), then removes it from
    /// its pack. It stays restorable: moved back into `items/`, the next command adopts it.
    /// A record already gone is not an error; a pack that cannot be read is (nothing is
    /// destroyed on a read that failed).
    /// With `domain`, only the item's record of that domain (a copy a move between domains left).
    public func quarantineItemKey(_ id: ItemID, domain: Domain? = nil) throws {
        let record: ItemKeyRecord
        do {
            record = try itemKeyRecord(id, domain: domain)
        } catch let error as Nu11Error where error.code == .notFound {
            return
        }
        if let domain, record.domain != domain { return }
        try ProtectedFiles.makeDirectory(quarantinePath)
        try ProtectedFiles.writeAtomically(record.encoded(), to: POSIX.join(quarantinePath, id.hex + ".key"))
        try destroyItemKeys([id], domain: domain)
    }

    /// Sets a damaged slot's bytes aside in `quarantine/` (durably), then zeroes the slot, so
    /// it is free again. Returns where the bytes went.
    public func quarantineDamagedSlot(pack path: String, slot: Int) throws -> String {
        guard let pack = try KeyPackFile(path, exclusive: true) else { return "" }
        defer { pack.release() }
        guard slot < (try pack.slots()).count, try pack.slots()[slot] == .damaged else { return "" }
        try ProtectedFiles.makeDirectory(quarantinePath)
        let aside = POSIX.join(quarantinePath, "\(pack.name)-slot-\(slot).damaged")
        try ProtectedFiles.writeAtomically(Array(pack.raw(slot)), to: aside)
        try pack.zero(slot)
        try pack.sync()
        return aside
    }

    /// Names of quarantined key records.
    public func quarantinedKeyIDs() throws -> [String] {
        guard POSIX.exists(quarantinePath) else { return [] }
        return try ProtectedFiles.list(quarantinePath).filter { $0.hasSuffix(".key") }
    }
}
