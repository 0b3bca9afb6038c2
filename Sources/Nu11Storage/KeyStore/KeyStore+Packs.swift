// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif
import Nu11Format

/// Item key records in 256 packs (`keys/<hh>.n11p`, `KeyPack`): writing, reading, destroying,
/// listing. One record per item (and domain: two while it moves between domains); destroying it (its slot zeroed in place, synced)
/// crypto-shreds the item.
extension KeyStore {
    var packsPath: String { layout.keys }

    func packPath(_ shard: String) -> String { POSIX.join(packsPath, shard + KeyPack.suffix) }

    func packPath(_ id: ItemID) -> String { packPath(KeyPack.shard(of: id)) }

    /// The shards that have a pack, from the folder's names (anything else there is ignored).
    func packShards() throws -> [String] {
        guard POSIX.exists(packsPath) else { return [] }
        let hex = Set("0123456789abcdef")
        return try ProtectedFiles.list(packsPath).compactMap { name -> String? in
            guard name.hasSuffix(KeyPack.suffix) else { return nil }
            let shard = String(name.dropLast(KeyPack.suffix.count))
            return shard.count == 2 && shard.allSatisfy(hex.contains) ? shard : nil
        }.sorted()
    }

    /// Creates every one of the 256 packs that is missing (empty: its header only), then one
    /// syncfs. A key store has them all from the start, so which packs exist says nothing
    /// about the IDs in it, and a write never has to create one (a missing pack is still made
    /// when a record goes into it).
    public func createMissingPacks() throws {
        try ProtectedFiles.makeDirectory(packsPath)
        var made = false
        for byte in 0...255 {
            // Created exclusively (one that exists is left as it is), its header only: no
            // lock is needed, since no reader takes a file without its header for a record.
            let path = packPath(Hex.encode([UInt8(byte)]))
            let fd = SystemIO.retrying { open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
            if fd < 0 {
                if errno == EEXIST { continue }
                throw POSIX.error("create", path)
            }
            made = true
            let written = KeyPack.header.withUnsafeBytes { buffer in SystemIO.retrying { Glibc.write(fd, buffer.baseAddress, buffer.count) } }
            // Made 0600, it is 0600 unless the umask (or a default ACL) took bits away: only
            // then is the mode set — 256 calls fewer at every init and recovery.
            var st = stat()
            let exact = fstat(fd, &st) == 0 && st.st_mode & 0o7777 == 0o600
            let failure = !exact && fchmod(fd, 0o600) != 0 ? POSIX.error("chmod", path)
                : written != KeyPack.header.count ? POSIX.error("write", path) : nil
            close(fd)
            if let failure { throw failure }
        }
        if made { try syncFileSystem() }
    }

    /// Writes `records` into their packs (a record replaces the one of the same item). With
    /// `durable`, each pack touched (and a new pack's name) is synced; without, the caller
    /// makes the lot durable with one syncfs before anything depends on it (the commit).
    public func writeItemKeys(_ records: [ItemKeyRecord], durable: Bool) throws {
        guard !records.isEmpty else { return }
        try adoptBeforeWriting()
        try writeIntoPacks(records, durable: durable)
    }

    /// `writeItemKeys` without adopting loose records first (adoption itself uses it).
    func writeIntoPacks(_ records: [ItemKeyRecord], durable: Bool) throws {
        try ProtectedFiles.makeDirectory(packsPath)
        var created = false
        for (shard, group) in Dictionary(grouping: records, by: { KeyPack.shard(of: $0.itemID) }).sorted(by: { $0.key < $1.key }) {
            guard let pack = try KeyPackFile(packPath(shard), exclusive: true, create: true) else { continue }
            defer { pack.release() }
            var free = pack.freeSlots()
            for record in group { try pack.put(record, free: &free) }
            created = created || pack.created
            if durable { try pack.sync() }
        }
        if durable && created { try POSIX.syncDirectory(packsPath) }
    }

    public func storeItemKey(_ record: ItemKeyRecord) throws { try writeItemKeys([record], durable: true) }

    /// The item's key record. With `domain`, the record of that domain when the item has one
    /// (an item has two records only while it moves between domains, FORMAT.md §4.3), else
    /// its other record, which then fails to open under that domain's key as before.
    public func itemKeyRecord(_ id: ItemID, domain: Domain? = nil) throws -> ItemKeyRecord {
        do {
            if let pack = try KeyPackFile(packPath(id), exclusive: false) {
                defer { pack.release() }
                var first: ItemKeyRecord?
                for case .record(let record) in try pack.slots() where record.itemID == id {
                    if domain == nil || record.domain == domain { return record }
                    if first == nil { first = record }
                }
                if let first { return first }
            }
            if let loose = try looseRecord(id) { return loose }
        } catch let error as Nu11Error {
            throw error.about(id.hex)
        }
        throw Nu11Error(.notFound, "item \(id) has no key record (it was deleted or shredded)",
                        remedy: .check(reason: nil), item: id.hex)
    }

    public func hasItemKey(_ id: ItemID) -> Bool { (try? itemKeyRecord(id)) != nil }

    /// Whether the item has a key record of `domain`.
    public func hasItemKey(_ id: ItemID, domain: Domain) -> Bool { (try? itemKeyRecord(id, domain: domain))?.domain == domain }

    /// Crypto-shredding: zeroes the item's slot in its pack, in place, and syncs the pack.
    public func destroyItemKey(_ id: ItemID) throws { try destroyItemKeys([id]) }

    /// The same for many items, one sync per pack. With `domain`, only their records of that
    /// domain (and slots naming them that are not records): the move of an item between
    /// domains keeps the record of the other (`fade set`, FORMAT.md §4.3). Without, every
    /// record of each item.
    public func destroyItemKeys(_ ids: [ItemID], domain: Domain? = nil) throws {
        if let domain {
            try destroyLooseRecords(ids.filter { (try? looseRecord($0))?.domain == domain })
        } else {
            try destroyLooseRecords(ids)
        }
        for (shard, group) in Dictionary(grouping: ids, by: KeyPack.shard(of:)) {
            guard let pack = try KeyPackFile(packPath(shard), exclusive: true) else { continue }
            defer { pack.release() }
            var zeroed = false
            for id in group {
                for index in domain.map({ pack.slots(naming: id, domain: $0) }) ?? pack.slots(naming: id) {
                    try pack.zero(index)
                    zeroed = true
                }
            }
            if zeroed { try pack.sync() }
        }
    }

    /// IDs of every item key record.
    /// A pack whose header or layout is damaged is left out (`damagedPacks` names it).
    public func itemKeyIDs() throws -> [ItemID] {
        var out: [ItemID] = []
        try eachReadablePack { pack in
            for case .record(let record) in try pack.slots() { out.append(record.itemID) }
        }
        let inPacks = Set(out)
        return out + (try looseRecordIDs()).filter { !inPacks.contains($0) }
    }

    /// Every item key record in the packs (an item has two while it moves between domains).
    public func itemKeyRecords() throws -> [ItemKeyRecord] {
        var out: [ItemKeyRecord] = []
        try eachReadablePack { pack in
            for case .record(let record) in try pack.slots() { out.append(record) }
        }
        return out
    }

    /// Slots that are neither a record nor free (a write cut short, or damage), per pack name.
    public func damagedKeySlots() throws -> [(pack: String, slot: Int)] {
        var out: [(String, Int)] = []
        try eachReadablePack { pack in
            for (index, slot) in try pack.slots().enumerated() where slot == .damaged { out.append((pack.path, index)) }
        }
        return out
    }

    /// Packs that cannot be read at all (header or layout damaged), with why: every key record
    /// in one is lost to this key store (the recovery phrase brings them back).
    public func damagedPacks() throws -> [(pack: String, problem: String)] {
        var out: [(String, String)] = []
        try eachReadablePack({ _ = try $0.slots() }, damaged: { out.append(($0, $1.message)) })
        return out
    }

    /// Runs `body` on each pack (shared lock); a pack whose header or layout is damaged goes
    /// to `damaged` instead, and the others are still read.
    private func eachReadablePack(_ body: (KeyPackFile) throws -> Void, damaged: (String, Nu11Error) -> Void = { _, _ in }) throws {
        for shard in try packShards() {
            do {
                guard let pack = try KeyPackFile(packPath(shard), exclusive: false) else { continue }
                defer { pack.release() }
                try body(pack)
            } catch let error as Nu11Error where error.code == .corrupted {
                damaged(packPath(shard), error)
            }
        }
    }
}
