// SPDX-License-Identifier: GPL-3.0-or-later
/// The key domains of the first seed. Each has its own domain key; an item's key is wrapped
/// by the key of the domain it lives in, so moving an item between domains is a re-wrap.
public enum Domain: UInt8, Sendable, CaseIterable, Codable, CustomStringConvertible {
    case vault = 1
    case fade = 2
    case backup = 3
    case archive = 4

    public var description: String {
        switch self {
        case .vault: "vault"
        case .fade: "fade"
        case .backup: "backup"
        case .archive: "archive"
        }
    }
}

/// What an envelope holds: a photo/file (`.n11`) or a note (`.n11note`).
public enum ItemKind: UInt8, Sendable, CaseIterable, Codable {
    case file = 1
    case note = 2

    public var fileExtension: String { self == .file ? "n11" : "n11note" }
}

/// An opaque 128-bit random identifier, written as 32 lowercase hex digits. IDs are what
/// appears in file names and the clear part of the index; they carry no information.
///
/// Held as two 64-bit words (big-endian: their order is the bytes' order), not an array: a
/// gallery's listing makes, hashes, sorts and copies 100,000 of them, and an array would be a
/// heap allocation and reference counting for each.
public struct ItemID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    private let high: UInt64
    private let low: UInt64

    public static let byteCount = 16

    public init() { self.init(words: SecureRandom.bytes(Self.byteCount)[...]) }

    /// A random ID whose first byte — its key pack (`KeyPack.shard`) — is `firstByte`: a
    /// folder import gives the items of one commit group one pack to write, not one each.
    public init(firstByte: UInt8) {
        var bytes = SecureRandom.bytes(Self.byteCount)
        bytes[0] = firstByte
        self.init(words: bytes[...])
    }

    public init(bytes: [UInt8]) throws { try self.init(bytes: bytes[...]) }

    /// (Concrete types, not a generic collection: a listing makes 100,000 IDs, and a generic
    /// call across modules goes through the runtime for each.)
    public init(bytes: ArraySlice<UInt8>) throws {
        guard bytes.count == Self.byteCount else {
            throw Nu11Error(.invalidArgument, "an ID is \(Self.byteCount) bytes, not \(bytes.count)")
        }
        self.init(words: bytes)
    }

    /// Sixteen bytes (the caller has checked the count).
    private init(words bytes: ArraySlice<UInt8>) {
        (high, low) = bytes.withUnsafeBytes { raw in
            (UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
             UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }

    /// Parses 32 hex digits (either case).
    public init(hex: String) throws {
        var text = hex
        guard let id = text.withUTF8({ ItemID(hexDigits: UnsafeRawBufferPointer($0)) }) else {
            throw Nu11Error(.invalidArgument, "'\(hex.prefix(40))' is not an ID (32 hex digits)",
                            remedy: .listIDs)
        }
        self = id
    }

    /// 32 hex digits (either case) as ASCII bytes; nil for anything else.
    public init?(hexDigits digits: UnsafeRawBufferPointer) {
        guard digits.count == 2 * Self.byteCount else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        for i in 0..<16 {
            guard let a = Hex.nibble(digits[i]), let b = Hex.nibble(digits[16 + i]) else { return nil }
            high = high << 4 | UInt64(a)
            low = low << 4 | UInt64(b)
        }
        self.high = high
        self.low = low
    }

    /// The sixteen bytes.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Array($0) }
    }

    public var hex: String {
        String(unsafeUninitializedCapacity: 2 * Self.byteCount) { out in
            for i in 0..<16 {
                out[i] = Hex.digit(UInt8(truncatingIfNeeded: high >> UInt64(4 * (15 - i)) & 0xf))
                out[16 + i] = Hex.digit(UInt8(truncatingIfNeeded: low >> UInt64(4 * (15 - i)) & 0xf))
            }
            return 2 * Self.byteCount
        }
    }

    public var description: String { hex }

    public static func < (a: ItemID, b: ItemID) -> Bool { (a.high, a.low) < (b.high, b.low) }

    public init(from decoder: any Decoder) throws {
        try self.init(hex: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

/// An item as a user names it: its whole ID, or a prefix of at least `minimumDigits` hex
/// digits that the vault resolves when it is unique (like git and restic). Parsed once,
/// where the text comes in.
public struct ItemRef: Sendable, Hashable, CustomStringConvertible {
    public static let minimumDigits = 4
    /// Lowercase hex digits, `minimumDigits` to 32 of them.
    public let digits: String

    public init(_ text: String) throws {
        let lower = text.lowercased()
        guard (Self.minimumDigits...(2 * ItemID.byteCount)).contains(lower.utf8.count),
              lower.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }) else {
            throw Nu11Error(.invalidArgument, "'\(text.prefix(40))' is not an ID or ID prefix (\(Self.minimumDigits) to 32 hex digits)",
                            remedy: .listIDs, item: String(text.prefix(40)))
        }
        digits = lower
    }

    public init(_ id: ItemID) { digits = id.hex }

    /// The ID, when all 32 digits were given.
    public var exactID: ItemID? { digits.utf8.count == 2 * ItemID.byteCount ? try? ItemID(hex: digits) : nil }

    public var description: String { digits }
}

public enum Hex {
    /// Hex digits (either case) to bytes; nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let hi = nibble(digits[i]), let lo = nibble(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// The lowercase hex digit of a value from 0 to 15.
    static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Big-endian integer helpers for the byte formats.
enum BigEndian {
    static func append(_ value: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    static func append(_ value: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    static func uint32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func uint64(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
