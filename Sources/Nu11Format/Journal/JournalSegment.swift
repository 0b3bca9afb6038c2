// SPDX-License-Identifier: GPL-3.0-or-later
// A journal segment file, `Journal/<device>-<first seq>.n11j` (docs/FORMAT.md § 9.1): a clear
// header, then length-prefixed sealed entries, each chained to the one before by its hash.
import Crypto

/// An entry as read (or written): the entry and the hash the next entry of its device chains to.
public struct JournalRecord: Sendable, Hashable {
    public let entry: JournalEntry
    public let hash: [UInt8]
    public init(entry: JournalEntry, hash: [UInt8]) { self.entry = entry; self.hash = hash }
}

/// Why reading a segment stopped before its end. Everything before the stop authenticated and is kept.
public enum JournalDefect: Sendable, Hashable {
    /// Not a segment, or its header does not name the device and first entry its file name does.
    case badHeader
    /// Sealed under a key generation the reader does not hold.
    case unknownGeneration(UInt32)
    /// The entry at `seq` is cut short (a file still arriving, or cut).
    case truncated(seq: UInt64)
    /// The entry at `seq` does not open: altered, or sealed for another place.
    case failedAuthentication(seq: UInt64)
    /// The entry at `seq` opens but names another device or position, or its bytes do not parse.
    case misplaced(seq: UInt64)
    /// The entry at `seq` does not chain to the one before it.
    case brokenChain(seq: UInt64)
}

public struct JournalSegmentContents: Sendable {
    public var generation: UInt32
    public var records: [JournalRecord]
    /// nil: read to its end.
    public var stop: JournalDefect?
    /// Bytes that authenticated (the header and every record kept): where a writer appends.
    public var goodLength: Int
}

public enum JournalSegment {
    public static let magic: [UInt8] = Array("N11J".utf8)
    public static let version: UInt8 = 1
    public static let headerSize = 40
    /// The largest sealed entry (a plaintext is at most 16 KiB: two 4 KiB strings and the fields).
    public static let maxSealed = 16384 + 28
    public static let fileExtension = "n11j"

    /// The journal key of a key generation: `Subkey(main key, "sync journal")`, as the index's
    /// metadata key is `Subkey(main key, "index metadata")`.
    public static func key(main: SecretBytes) -> SecretBytes { Subkey.derive(from: main, purpose: "sync journal") }

    public static func fileName(device: DeviceID, firstSeq: UInt64) -> String {
        "\(device.hex)-\(hex16(firstSeq)).\(fileExtension)"
    }

    /// The device and first sequence number a segment's file name gives; nil for any other name.
    public static func parseFileName(_ name: String) -> (device: DeviceID, firstSeq: UInt64)? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1] == Substring(fileExtension) else { return nil }
        let halves = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard halves.count == 2, halves[0].count == 32, halves[1].count == 16,
              halves.allSatisfy({ half in half.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } }),
              let id = try? ItemID(hex: String(halves[0])), let seq = UInt64(halves[1], radix: 16), seq >= 1 else { return nil }
        return (DeviceID(id), seq)
    }

    public static func header(device: DeviceID, firstSeq: UInt64, generation: UInt32) -> [UInt8] {
        var b = JournalBytes()
        b.bytes = magic; b.u8(version); b.bytes += [0, 0, 0]
        b.id(device.id); b.u64(firstSeq); b.u32(generation); b.u32(0)
        return b.bytes
    }

    static func associatedData(device: DeviceID, seq: UInt64, generation: UInt32) -> [UInt8] {
        var b = JournalBytes()
        b.bytes = Array("nu11vlt journal entry v1".utf8)
        b.id(device.id); b.u64(seq); b.u32(generation)
        return b.bytes
    }

    /// `SHA-256("nu11vlt journal hash v1" || plaintext)`: over the plaintext, not the sealed bytes,
    /// so an entry sealed again (a segment written anew) keeps its place in the chain.
    public static func hash(plain: [UInt8]) -> [UInt8] {
        var h = SHA256()
        h.update(data: Array("nu11vlt journal hash v1".utf8))
        h.update(data: plain)
        return Array(h.finalize())
    }

    /// The record for `entry` as it goes into its device's segment: `length (4) || sealed`, and its hash.
    public static func seal(_ entry: JournalEntry, generation: UInt32, key: SecretBytes) throws -> (bytes: [UInt8], record: JournalRecord) {
        let plain = try entry.encoded()
        let sealed = try SmallSeal.seal(plain, key: key,
                                        associatedData: associatedData(device: entry.device, seq: entry.seq, generation: generation))
        var b = JournalBytes()
        b.u32(UInt32(sealed.count))
        return (b.bytes + sealed, JournalRecord(entry: entry, hash: hash(plain: plain)))
    }

    /// Reads a segment of `device` starting at `firstSeq` (from its file name). Never throws: it
    /// keeps every entry up to the first that does not authenticate, parse, sit in its place or
    /// chain, and says why it stopped.
    public static func read(_ bytes: [UInt8], device: DeviceID, firstSeq: UInt64,
                            key: (UInt32) -> SecretBytes?) -> JournalSegmentContents {
        var out = JournalSegmentContents(generation: 0, records: [], stop: nil, goodLength: 0)
        guard bytes.count >= headerSize, Array(bytes[0..<5]) == magic + [version], bytes[5..<8].allSatisfy({ $0 == 0 }),
              bytes[36..<40].allSatisfy({ $0 == 0 }) else { out.stop = .badHeader; return out }
        let generation = bytes[32..<36].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        out.generation = generation
        guard Array(bytes[0..<headerSize]) == header(device: device, firstSeq: firstSeq, generation: generation) else {
            out.stop = .badHeader; return out
        }
        guard let key = key(generation) else { out.stop = .unknownGeneration(generation); return out }
        var at = headerSize
        var seq = firstSeq
        var previous: [UInt8]? = nil
        out.goodLength = at
        while at < bytes.count {
            guard bytes.count - at >= 4 else { out.stop = .truncated(seq: seq); return out }
            let length = Int(bytes[at..<at + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            guard length >= 28 + 128, length <= maxSealed else { out.stop = .failedAuthentication(seq: seq); return out }
            guard bytes.count - at - 4 >= length else { out.stop = .truncated(seq: seq); return out }
            let sealed = Array(bytes[at + 4..<at + 4 + length])
            guard let plain = try? SmallSeal.open(sealed, key: key, associatedData: associatedData(device: device, seq: seq, generation: generation))
            else { out.stop = .failedAuthentication(seq: seq); return out }
            guard let entry = try? JournalEntry(decoding: plain), entry.device == device, entry.seq == seq else {
                out.stop = .misplaced(seq: seq); return out
            }
            if let previous, entry.previous != previous { out.stop = .brokenChain(seq: seq); return out }
            if seq == 1 && entry.previous != [UInt8](repeating: 0, count: 32) { out.stop = .brokenChain(seq: seq); return out }
            let record = JournalRecord(entry: entry, hash: hash(plain: plain))
            out.records.append(record)
            previous = record.hash
            at += 4 + length
            out.goodLength = at
            seq += 1
        }
        return out
    }

    static func hex16(_ v: UInt64) -> String {
        let digits = String(v, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }
}
