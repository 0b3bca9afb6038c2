// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Nu11Format

/// One key pack (`KeyPack`), opened and locked (flock: shared to read, exclusive to change;
/// a rotation that replaces the file holds the old one exclusively until it is shredded, and
/// an opener that finds the name moved to another file opens again). Slots change in place
/// (`pwrite`), so the file keeps its inode for as long as it exists: a hard link made to it
/// sees every deletion.
final class KeyPackFile {
    let path: String
    let name: String
    private(set) var fd: Int32
    private(set) var bytes: [UInt8]
    /// Whether this open created the file (its name is not durable until its folder is synced).
    private(set) var created = false

    /// Opens `path`; nil when it does not exist and `create` is false.
    init?(_ path: String, exclusive: Bool, create: Bool = false) throws {
        self.path = path
        name = String(path.split(separator: "/").last ?? "")
        fd = -1
        bytes = []
        var mode: mode_t = 0
        while true {
            let existed = POSIX.exists(path)
            if !existed && !create { return nil }
            let flags = exclusive || create ? O_RDWR | O_NOFOLLOW | (create ? O_CREAT : 0) : O_RDONLY | O_NOFOLLOW
            let opened = SystemIO.retrying { open(path, flags | O_CLOEXEC, 0o600) }
            if opened < 0 {
                if errno == ENOENT && !create { return nil }
                throw POSIX.error("open", path)
            }
            if SystemIO.retrying({ flock(opened, exclusive || create ? LOCK_EX : LOCK_SH) }) != 0 {
                let error = POSIX.error("lock", path)
                close(opened)
                throw error
            }
            // The name may have moved to a new file (a rotation) while this waited for the lock.
            var held = stat(), named = stat()
            guard fstat(opened, &held) == 0 else {
                let error = POSIX.error("stat", path)
                close(opened)
                throw error
            }
            if lstat(path, &named) == 0 && named.st_ino == held.st_ino && named.st_dev == held.st_dev {
                fd = opened
                created = !existed
                mode = held.st_mode & 0o7777
                break
            }
            close(opened)
        }
        do {
            // Created with 0600, it is 0600 unless the umask (or a default ACL) took bits away:
            // only then is the mode set (the key store's 256 packs are made at every init and
            // recovery, and a call fewer each is 256 fewer).
            if created, mode != 0o600, fchmod(fd, 0o600) != 0 { throw POSIX.error("chmod", path) }
            bytes = try readAll()
            try KeyPack.validate(bytes, name: name)
            if bytes.isEmpty && (exclusive || create) {
                try write(KeyPack.header, at: 0)
            }
        } catch {
            release()
            throw error
        }
    }

    deinit { release() }

    /// Unlocks and closes (also done when the object goes).
    func release() {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
        fd = -1
    }

    private func readAll() throws -> [UInt8] {
        let size = try POSIX.fileSize(fd, path)
        guard size <= 64 << 20 else {
            throw Nu11Error(.corrupted, "key pack \(name) is larger than any vault needs (\(size) bytes)",
                            remedy: .check(reason: "a key pack was altered"), item: path)
        }
        var out = [UInt8](repeating: 0, count: Int(size))
        var filled = 0
        while filled < out.count {
            let got = out.withUnsafeMutableBytes { buffer in
                SystemIO.retrying { pread(fd, buffer.baseAddress.map { $0 + filled }, buffer.count - filled, off_t(filled)) }
            }
            if got < 0 { throw POSIX.error("read", path) }
            if got == 0 { break }
            filled += got
        }
        return Array(out.prefix(filled))
    }

    func write(_ data: [UInt8], at offset: Int) throws {
        var done = 0
        while done < data.count {
            let n = data.withUnsafeBytes { buffer in
                SystemIO.retrying { pwrite(fd, buffer.baseAddress.map { $0 + done }, buffer.count - done, off_t(offset + done)) }
            }
            if n <= 0 { throw POSIX.error("write", path) }
            done += n
        }
        if bytes.count < offset + data.count { bytes += [UInt8](repeating: 0, count: offset + data.count - bytes.count) }
        bytes.replaceSubrange(offset..<(offset + data.count), with: data)
        firstSlotNaming = nil
    }

    func slots() throws -> [KeyPack.Slot] { try KeyPack.slots(bytes, name: name) }

    /// The raw bytes of slot `index` (a partial last slot is shorter).
    func raw(_ index: Int) -> ArraySlice<UInt8> {
        let start = KeyPack.offset(ofSlot: index)
        return bytes[start..<min(start + KeyPack.slotCount, bytes.count)]
    }

    /// Slots whose ID field is `id` — records, and damaged slots that still name it (a torn
    /// write), so that destroying an item leaves no part of its record.
    func slots(naming id: ItemID) -> [Int] {
        var out: [Int] = []
        var index = 0
        while KeyPack.offset(ofSlot: index) + 24 <= bytes.count {
            let start = KeyPack.offset(ofSlot: index)
            if bytes[(start + 8)..<(start + 24)].elementsEqual(id.bytes) { out.append(index) }
            index += 1
        }
        return out
    }

    /// Puts `record` in its item's slot for its domain (the one already naming the item with
    /// that domain), else the first free slot, else a new one at the end. An item holds one
    /// record per domain: two only while it moves between domains (`fade set`), so that the
    /// record of the domain it leaves stays until the move's commit point. Not synced: the
    /// caller does.
    func put(_ record: ItemKeyRecord, free: inout [Int]) throws {
        var named = namedSlots()
        let key = SlotKey(id: record.itemID, domain: record.domain.rawValue)
        let index: Int
        if let existing = named[key] {
            index = existing
        } else if !free.isEmpty {
            index = free.removeFirst()
        } else {
            index = max(0, (bytes.count - KeyPack.headerCount + KeyPack.slotCount - 1) / KeyPack.slotCount)
        }
        try write(record.encoded(), at: KeyPack.offset(ofSlot: index))
        // The slot was the item's, free (an all-zero ID, never mapped) or new: only this
        // item's entry can change.
        if named[key] == nil { named[key] = index }
        firstSlotNaming = named
    }

    /// An item in one domain: what a slot is found by (its ID field and its domain byte).
    struct SlotKey: Hashable {
        let id: ItemID
        let domain: UInt8
    }

    /// The first slot naming each item and domain, built once per open and kept by `put`: a
    /// group's records go into one pack, and a scan per record made that quadratic. Any other
    /// write forgets it.
    private var firstSlotNaming: [SlotKey: Int]?

    private func namedSlots() -> [SlotKey: Int] {
        if let firstSlotNaming { return firstSlotNaming }
        var named: [SlotKey: Int] = [:]
        let free = [UInt8](repeating: 0, count: ItemID.byteCount)
        var index = 0
        while KeyPack.offset(ofSlot: index) + 24 <= bytes.count {
            let start = KeyPack.offset(ofSlot: index)
            let field = bytes[(start + 8)..<(start + 24)]
            if !field.elementsEqual(free), let id = try? ItemID(bytes: field) {
                let key = SlotKey(id: id, domain: bytes[start + 5])
                if named[key] == nil { named[key] = index }
            }
            index += 1
        }
        firstSlotNaming = named
        return named
    }

    /// Slots naming `id` that `destroyItemKeys(_:domain:)` zeroes: a record of `domain`, or a
    /// slot that names the item but is not a record (a write of it cut short), never a sound
    /// record of another domain.
    func slots(naming id: ItemID, domain: Domain) -> [Int] {
        slots(naming: id).filter { index in
            guard let record = try? ItemKeyRecord.parse(Array(raw(index))) else { return true }
            return record.domain == domain
        }
    }

    /// Indices of the free slots.
    func freeSlots() -> [Int] {
        var out: [Int] = []
        var index = 0
        while KeyPack.offset(ofSlot: index) + KeyPack.slotCount <= bytes.count {
            let start = KeyPack.offset(ofSlot: index)
            if bytes[start..<(start + KeyPack.slotCount)].allSatisfy({ $0 == 0 }) { out.append(index) }
            index += 1
        }
        return out
    }

    /// Zeroes slot `index` in place (a partial last slot is completed, so it is free).
    func zero(_ index: Int) throws {
        try write(KeyPack.freeSlot, at: KeyPack.offset(ofSlot: index))
    }

    /// Zeroes every byte of the file in place (a pack a rotation replaced: its records are
    /// the previous keys' wraps, and no copy of a record outlives the pack that holds it).
    func shred() throws {
        try write([UInt8](repeating: 0, count: bytes.count), at: 0)
    }

    func sync() throws {
        guard fdatasync(fd) == 0 else { throw POSIX.error("fsync", path) }
    }
}
