// SPDX-License-Identifier: GPL-3.0-or-later
// An entry's plaintext, byte by byte (docs/FORMAT.md § 9.2). Decoding refuses anything that does
// not add up exactly: an unknown version or operation, a length past the end, non-zero padding.

extension JournalEntry {
    public static let version: UInt8 = 1
    /// Longest name or setting, in UTF-8 bytes.
    public static let maxString = 4096

    /// The plaintext, padded with zero bytes to 128, 256, 512, … (a sealed size tells no name's length).
    public func encoded() throws -> [UInt8] {
        var body = JournalBytes()
        switch operation {
        case .importItem(let i):
            body.id(i.item); body.u8(i.kind.rawValue); body.u8(i.domain.rawValue); body.optionalID(i.album)
            body.u64(i.size); body.u64(UInt64(bitPattern: i.created))
            body.u8(i.taken == nil ? 0 : 1); body.u64(UInt64(bitPattern: i.taken ?? 0))
            try body.string(i.name)
        case .delete(let item), .clearFade(let item):
            body.id(item)
        case .moveToAlbum(let item, let album):
            body.id(item); body.optionalID(album)
        case .renameAlbum(let id, let name), .renameItem(let id, let name):
            body.id(id); try body.string(name)
        case .editNote(let note, let version, let base):
            body.id(note); body.id(version); body.optionalID(base)
        case .setFade(let item, let deadline):
            body.id(item); body.u64(UInt64(bitPattern: deadline))
        case .setting(let key, let value):
            try body.string(key); try body.string(value)
        }
        var out = JournalBytes()
        out.u8(Self.version); out.id(device.id); out.u64(seq)
        guard previous.count == 32 else { throw Nu11Error(.internalError, "a journal entry's previous hash is not 32 bytes") }
        out.bytes += previous
        out.u64(clock.wall); out.u32(clock.counter); out.u8(operation.code)
        out.u16(UInt16(body.bytes.count)); out.bytes += body.bytes
        var padded = 128
        while padded < out.bytes.count { padded *= 2 }
        out.bytes += [UInt8](repeating: 0, count: padded - out.bytes.count)
        return out.bytes
    }

    /// Parses a plaintext made by `encoded()`.
    public init(decoding plain: [UInt8]) throws {
        var r = JournalReader(plain)
        guard try r.u8() == Self.version else {
            throw Nu11Error(.unsupportedVersion, "a journal entry has an unsupported version", remedy: .upgrade)
        }
        let device = DeviceID(try r.id())
        let seq = try r.u64()
        let previous = try r.take(32)
        let clock = JournalClock(wall: try r.u64(), counter: try r.u32())
        let code = try r.u8()
        let length = Int(try r.u16())
        var b = JournalReader(try r.take(length))
        let operation: JournalOperation
        switch code {
        case 1:
            let item = try b.id()
            guard let kind = ItemKind(rawValue: try b.u8()), let domain = Domain(rawValue: try b.u8()) else { throw JournalReader.bad }
            let album = try b.optionalID()
            let size = try b.u64()
            let created = Int64(bitPattern: try b.u64())
            let hasTaken = try b.flag()
            let taken = Int64(bitPattern: try b.u64())
            operation = .importItem(JournalImport(item: item, kind: kind, domain: domain, album: album, name: try b.string(),
                                                  size: size, created: created, taken: hasTaken ? taken : nil))
        case 2: operation = .delete(item: try b.id())
        case 3: operation = .moveToAlbum(item: try b.id(), album: try b.optionalID())
        case 4: operation = .renameAlbum(album: try b.id(), name: try b.string())
        case 5: operation = .renameItem(item: try b.id(), name: try b.string())
        case 6: operation = .editNote(note: try b.id(), version: try b.id(), base: try b.optionalID())
        case 7: operation = .setFade(item: try b.id(), deadline: Int64(bitPattern: try b.u64()))
        case 8: operation = .clearFade(item: try b.id())
        case 9: operation = .setting(key: try b.string(), value: try b.string())
        default: throw Nu11Error(.unsupportedVersion, "a journal entry holds an unknown operation", remedy: .upgrade)
        }
        guard b.atEnd, r.restIsZero else { throw JournalReader.bad }
        self.init(device: device, seq: seq, previous: previous, clock: clock, operation: operation)
    }
}

/// Big-endian building of a plaintext.
struct JournalBytes {
    var bytes: [UInt8] = []
    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { bytes += [UInt8(v >> 8), UInt8(v & 0xff)] }
    mutating func u32(_ v: UInt32) { for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((v >> UInt32(s)) & 0xff)) } }
    mutating func u64(_ v: UInt64) { for s in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((v >> UInt64(s)) & 0xff)) } }
    mutating func id(_ id: ItemID) { bytes += id.bytes }
    mutating func optionalID(_ id: ItemID?) {
        u8(id == nil ? 0 : 1)
        bytes += id?.bytes ?? [UInt8](repeating: 0, count: ItemID.byteCount)
    }
    mutating func string(_ s: String) throws {
        let utf8 = Array(s.utf8)
        guard utf8.count <= JournalEntry.maxString else {
            throw Nu11Error(.invalidArgument, "a name of \(utf8.count) bytes is too long for the journal (at most \(JournalEntry.maxString))")
        }
        u16(UInt16(utf8.count)); bytes += utf8
    }
}

/// Big-endian reading of a plaintext; every shortfall is the same "damaged entry".
struct JournalReader {
    static let bad = Nu11Error(.corrupted, "a journal entry is damaged", remedy: .check(reason: nil))
    private let bytes: [UInt8]
    private var at = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var atEnd: Bool { at == bytes.count }
    var restIsZero: Bool { bytes[at...].allSatisfy { $0 == 0 } }
    mutating func take(_ n: Int) throws -> [UInt8] {
        guard n >= 0, bytes.count - at >= n else { throw Self.bad }
        defer { at += n }
        return Array(bytes[at..<at + n])
    }
    mutating func u8() throws -> UInt8 { try take(1)[0] }
    mutating func u16() throws -> UInt16 { try take(2).reduce(0) { $0 << 8 | UInt16($1) } }
    mutating func u32() throws -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func u64() throws -> UInt64 { try take(8).reduce(0) { $0 << 8 | UInt64($1) } }
    mutating func flag() throws -> Bool {
        switch try u8() { case 0: return false; case 1: return true; default: throw Self.bad }
    }
    mutating func id() throws -> ItemID { try ItemID(bytes: try take(ItemID.byteCount)) }
    mutating func optionalID() throws -> ItemID? {
        let present = try flag()
        let raw = try take(ItemID.byteCount)
        if !present { guard raw.allSatisfy({ $0 == 0 }) else { throw Self.bad }; return nil }
        return try ItemID(bytes: raw)
    }
    mutating func string() throws -> String {
        let n = Int(try u16())
        guard n <= JournalEntry.maxString else { throw Self.bad }
        let raw = try take(n)
        guard let s = String(validating: raw, as: UTF8.self) else { throw Self.bad }
        return s
    }
}
