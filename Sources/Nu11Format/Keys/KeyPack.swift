// SPDX-License-Identifier: GPL-3.0-or-later

/// A pack of item key records (`keys/<hh>.n11p` in the key store, docs/FORMAT.md §4.3): the
/// records of every item whose ID starts with the byte `hh`, in fixed slots, so that a
/// rotation rewrites 256 files rather than one per item and a lookup reads one small file.
///
///     0   4   magic "N11P"
///     4   1   version = 1
///     5   3   reserved, 0
///     8   …   slots of 84 bytes: an `ItemKeyRecord` (magic "N11R"), or 84 zero bytes (free)
///
/// Deleting an item overwrites its slot with zeros in place (the file keeps its inode), which
/// is what crypto-shreds it; a free slot is reused by the next record of the shard.
public enum KeyPack {
    public static let magic: [UInt8] = Array("N11P".utf8)
    public static let version: UInt8 = 1
    public static let headerCount = 8
    public static let slotCount = ItemKeyRecord.byteCount
    public static let header: [UInt8] = magic + [version, 0, 0, 0]
    public static let freeSlot = [UInt8](repeating: 0, count: slotCount)
    /// File name suffix.
    public static let suffix = ".n11p"

    /// What one slot holds.
    public enum Slot: Equatable, Sendable {
        case free
        case record(ItemKeyRecord)
        /// Neither a record nor free: a write cut short by a crash, or damage. Never reused,
        /// never guessed at: `check` reports it.
        case damaged
    }

    /// The pack an item's record lives in: the first byte of its ID, two lowercase hex digits.
    public static func shard(of id: ItemID) -> String { String(id.hex.prefix(2)) }

    /// Byte offset of slot `index`.
    public static func offset(ofSlot index: Int) -> Int { headerCount + index * slotCount }

    /// Checks a pack's header. An empty file (a pack whose creation was cut short before its
    /// header) has no slots.
    public static func validate(_ bytes: [UInt8], name: String) throws {
        guard !bytes.isEmpty else { return }
        guard bytes.count >= headerCount, Array(bytes[0..<4]) == magic else {
            throw Nu11Error(.corrupted, "key pack \(name) is damaged (no N11P header)",
                            remedy: .check(reason: "a key pack was altered"), item: name)
        }
        guard bytes[4] == version else {
            throw Nu11Error(.unsupportedVersion, "key pack \(name) has version \(bytes[4]), which this release cannot read",
                            remedy: .upgrade, item: name)
        }
    }

    /// Every slot of a pack, in order; a trailing partial slot (an append cut short) counts
    /// as damaged.
    public static func slots(_ bytes: [UInt8], name: String) throws -> [Slot] {
        try validate(bytes, name: name)
        guard bytes.count > headerCount else { return [] }
        var out: [Slot] = []
        out.reserveCapacity((bytes.count - headerCount) / slotCount + 1)
        var start = headerCount
        while start < bytes.count {
            let end = min(start + slotCount, bytes.count)
            out.append(slot(bytes[start..<end]))
            start = end
        }
        return out
    }

    static func slot(_ bytes: ArraySlice<UInt8>) -> Slot {
        if bytes.allSatisfy({ $0 == 0 }) { return bytes.count == slotCount ? .free : .damaged }
        guard bytes.count == slotCount, let record = try? ItemKeyRecord.parse(Array(bytes)) else { return .damaged }
        return .record(record)
    }

    /// A whole pack holding `records` (a rotation's or a migration's rewrite; no free slots).
    public static func encode(_ records: [ItemKeyRecord]) -> [UInt8] {
        var out = header
        out.reserveCapacity(headerCount + records.count * slotCount)
        for record in records { out += record.encoded() }
        return out
    }
}
