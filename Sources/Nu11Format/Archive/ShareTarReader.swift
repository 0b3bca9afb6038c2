// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Reads the tar a share carries, as it streams out of the age decryption: regular files
/// with their names (the last path component) and modification times. Directories, pax
/// global headers and links are skipped; anything malformed is refused. A class: the entry
/// sources it hands out read from the one stream.
public final class ShareTarReader<Source: ByteSource> {
    public struct Entry {
        public let name: String
        public let size: UInt64
        public let modified: Date?
    }

    private var source: Source
    private var remaining: UInt64 = 0
    private var pad = 0
    private var entries = 0
    /// Entries that were not regular files (skipped).
    public private(set) var skipped = 0

    /// The first block, read by `isTar()` and handed out again before the rest.
    private var head: [UInt8] = []

    public init(_ source: Source) { self.source = source }

    /// Reads from the peeked first block, then from the source.
    private func pull(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard head.isEmpty else {
            let n = min(buffer.count, head.count)
            head.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            head.removeFirst(n)
            return n
        }
        return try source.read(into: buffer)
    }

    private func pullFully(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let n = try pull(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if n == 0 { break }
            filled += n
        }
        return filled
    }

    /// Whether the stream starts with a tar header (magic and checksum); nothing is consumed.
    public func isTar() throws -> Bool {
        var block = [UInt8](repeating: 0, count: ShareTar.block)
        let n = try block.withUnsafeMutableBytes { try source.readFully(into: $0) }
        head = Array(block[..<n])
        guard n == ShareTar.block, block[257..<262].elementsEqual("ustar".utf8) else { return false }
        return Self.checksumMatches(block)
    }

    static func checksumMatches(_ header: [UInt8]) -> Bool {
        var sum: UInt64 = 0
        for (i, b) in header.enumerated() { sum += (148..<156).contains(i) ? 0x20 : UInt64(b) }
        return number(header[148..<156]) == sum
    }

    /// Everything (the peeked block included) as one source, when it is not a tar.
    public func rest() -> RestSource { RestSource(reader: self) }

    public struct RestSource: ByteSource {
        let reader: ShareTarReader
        public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try reader.pull(into: buffer) }
    }

    static func refuse(_ what: String) -> Nu11Error {
        Nu11Error(.corrupted, "the shared tar is not valid: \(what)", remedy: .advice(.ageDamaged))
    }

    private func readBlock() throws -> [UInt8]? {
        var block = [UInt8](repeating: 0, count: ShareTar.block)
        let n = try block.withUnsafeMutableBytes { try pullFully(into: $0) }
        if n == 0 { return nil }
        guard n == ShareTar.block else { throw Self.refuse("it ends inside a block") }
        return block
    }

    private func skip(_ count: UInt64) throws {
        var left = count
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        while left > 0 {
            let want = Int(min(left, UInt64(scratch.count)))
            let n = try scratch.withUnsafeMutableBytes { try pullFully(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want])) }
            guard n == want else { throw Self.refuse("it ends inside an entry") }
            left -= UInt64(n)
        }
    }

    private static func number(_ field: ArraySlice<UInt8>) -> UInt64? {
        if let first = field.first, first & 0x80 != 0 {
            // Base-256 (GNU): big-endian, the top bit set.
            var value: UInt64 = UInt64(first & 0x7F)
            for b in field.dropFirst() {
                guard value >> 56 == 0 else { return nil }
                value = value << 8 | UInt64(b)
            }
            return value
        }
        let digits = field.drop { $0 == 0x20 }.prefix { $0 != 0 && $0 != 0x20 }
        if digits.isEmpty { return 0 }
        return UInt64(String(decoding: digits, as: UTF8.self), radix: 8)
    }

    private static func string(_ field: ArraySlice<UInt8>) -> [UInt8] { Array(field.prefix { $0 != 0 }) }

    /// The next regular file, or nil after the end blocks. The previous entry must have been
    /// read to its end.
    public func next() throws -> Entry? {
        guard remaining == 0 else { throw Self.refuse("an entry was not read to its end") }
        try skip(UInt64(pad))
        pad = 0
        var pax: [String: [UInt8]] = [:]
        while true {
            guard let header = try readBlock() else { throw Self.refuse("it ends without its end blocks") }
            if header.allSatisfy({ $0 == 0 }) {
                // The end: a second zero block, then only zero blocks (tar's record padding).
                while let more = try readBlock() {
                    guard more.allSatisfy({ $0 == 0 }) else { throw Self.refuse("data follows its end") }
                }
                return nil
            }
            guard Self.checksumMatches(header) else { throw Self.refuse("a header checksum does not match") }
            guard header[257..<262].elementsEqual("ustar".utf8) else { throw Self.refuse("an entry is not ustar") }
            entries += 1
            guard entries <= ShareTar.maxEntries else { throw Self.refuse("it has more than \(ShareTar.maxEntries) entries") }
            guard var size = Self.number(header[124..<136]) else { throw Self.refuse("an entry size is not a number") }
            if let paxSize = pax["size"] {
                guard let value = UInt64(String(decoding: paxSize, as: UTF8.self)) else { throw Self.refuse("a pax size is not a number") }
                size = value
            }
            let type = header[156]
            switch type {
            case UInt8(ascii: "x"):
                guard size <= 1 << 20 else { throw Self.refuse("a pax header is too large") }
                pax = try readPax(Int(size))
                continue
            case UInt8(ascii: "0"), 0:
                var name = pax["path"] ?? {
                    let prefix = Self.string(header[345..<500])
                    let base = Self.string(header[0..<100])
                    return prefix.isEmpty ? base : prefix + [UInt8(ascii: "/")] + base
                }()
                if let slash = name.lastIndex(of: UInt8(ascii: "/")) { name = Array(name[(slash + 1)...]) }
                guard let text = String(validating: name, as: UTF8.self), !text.isEmpty, text != ".", text != ".." else {
                    throw Self.refuse("an entry name is empty or not UTF-8")
                }
                var modified = Self.number(header[136..<148]).map { Date(timeIntervalSince1970: Double($0)) }
                if let paxTime = pax["mtime"], let seconds = Double(String(decoding: paxTime, as: UTF8.self)) {
                    modified = Date(timeIntervalSince1970: seconds)
                }
                remaining = size
                pad = ShareTar.padding(size).count
                return Entry(name: text, size: size, modified: modified)
            default:
                // Directories, links, devices, global headers: nothing to import.
                if type != UInt8(ascii: "5"), type != UInt8(ascii: "g") { skipped += 1 }
                try skip(size + UInt64(ShareTar.padding(size).count))
                pax = [:]
            }
        }
    }

    private func readPax(_ size: Int) throws -> [String: [UInt8]] {
        var bytes = [UInt8](repeating: 0, count: size)
        guard try bytes.withUnsafeMutableBytes({ try pullFully(into: $0) }) == size else { throw Self.refuse("a pax header is cut") }
        try skip(UInt64(ShareTar.padding(UInt64(size)).count))
        var out: [String: [UInt8]] = [:]
        var index = 0
        while index < bytes.count {
            guard let space = bytes[index...].firstIndex(of: 0x20),
                  let length = Int(String(decoding: bytes[index..<space], as: UTF8.self)), length > 0, index + length <= bytes.count,
                  bytes[index + length - 1] == 0x0A,
                  let equals = bytes[(space + 1)..<(index + length)].firstIndex(of: UInt8(ascii: "=")) else {
                throw Self.refuse("a pax record is malformed")
            }
            out[String(decoding: bytes[(space + 1)..<equals], as: UTF8.self)] = Array(bytes[(equals + 1)..<(index + length - 1)])
            index += length
        }
        return out
    }

    /// Reads the current entry's content.
    fileprivate func readContent(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard remaining > 0 else { return 0 }
        let want = Int(min(UInt64(buffer.count), remaining))
        let n = try pull(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want]))
        guard n > 0 else { throw Self.refuse("it ends inside an entry") }
        remaining -= UInt64(n)
        return n
    }

    /// The current entry's content as a source (it shares this reader's stream).
    public func content() -> EntrySource { EntrySource(reader: self) }

    public struct EntrySource: ByteSource {
        let reader: ShareTarReader
        public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try reader.readContent(into: buffer) }
    }
}
