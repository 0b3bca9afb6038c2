// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The plaintext of a share: a POSIX tar (ustar, with a pax extended header for names that
/// are not short ASCII and for sizes ustar cannot hold), regular files only, so that
/// `age -d -i key.txt share.age | tar x` gives the items with their names and dates.
public enum ShareTar {
    static let block = 512
    /// Entries read from an untrusted share, at most.
    public static let maxEntries = 100_000

    /// One entry's header (and its pax header before it when needed).
    public static func header(name: String, size: UInt64, modified: Date) -> [UInt8] {
        let seconds = max(0, Int64(modified.timeIntervalSince1970.rounded(.down)))
        let nameBytes = Array(name.utf8)
        let shortASCII = nameBytes.count < 100 && nameBytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        let bigSize = size >= 0o77777777777
        var out = [UInt8]()
        if !shortASCII || bigSize {
            var records = [UInt8]()
            if !shortASCII { records += paxRecord("path", nameBytes) }
            if bigSize { records += paxRecord("size", Array(String(size).utf8)) }
            out += ustar(name: Array("PaxHeader".utf8), size: UInt64(records.count), mtime: seconds, type: UInt8(ascii: "x"))
            out += records + padding(UInt64(records.count))
        }
        let fallbackName = shortASCII ? nameBytes : Array(asciiFallback(name).utf8)
        out += ustar(name: fallbackName, size: bigSize ? 0 : size, mtime: seconds, type: UInt8(ascii: "0"))
        return out
    }

    /// The two zero blocks that end an archive.
    public static let end = [UInt8](repeating: 0, count: 1024)

    /// Zero bytes after `size` bytes of content, up to the next block.
    public static func padding(_ size: UInt64) -> [UInt8] {
        [UInt8](repeating: 0, count: Int((UInt64(block) - size % UInt64(block)) % UInt64(block)))
    }

    private static func asciiFallback(_ name: String) -> String {
        let kept = String(name.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }.map(Character.init))
        return String((kept.isEmpty ? "item" : kept).suffix(99))
    }

    private static func paxRecord(_ key: String, _ value: [UInt8]) -> [UInt8] {
        // "<len> <key>=<value>\n", where <len> counts itself.
        let body = Array(" \(key)=".utf8) + value + [0x0A]
        var length = body.count + 1
        while String(length).utf8.count + body.count != length { length = String(length).utf8.count + body.count }
        return Array(String(length).utf8) + body
    }

    private static func octal(_ value: UInt64, width: Int) -> [UInt8] {
        let digits = Array(String(value, radix: 8).utf8)
        return [UInt8](repeating: UInt8(ascii: "0"), count: max(0, width - 1 - digits.count)) + digits + [0]
    }

    private static func ustar(name: [UInt8], size: UInt64, mtime: Int64, type: UInt8) -> [UInt8] {
        var h = [UInt8](repeating: 0, count: block)
        func put(_ bytes: [UInt8], at offset: Int) { for (i, b) in bytes.enumerated() { h[offset + i] = b } }
        put(Array(name.prefix(99)), at: 0)
        put(octal(0o600, width: 8), at: 100)
        put(octal(0, width: 8), at: 108)
        put(octal(0, width: 8), at: 116)
        put(octal(size, width: 12), at: 124)
        put(octal(UInt64(mtime), width: 12), at: 136)
        put([UInt8](repeating: 0x20, count: 8), at: 148)
        h[156] = type
        put(Array("ustar".utf8) + [0] + Array("00".utf8), at: 257)
        let sum = h.reduce(0) { $0 + UInt64($1) }
        put(octal(sum, width: 7) + [0x20], at: 148)
        return h
    }
}
