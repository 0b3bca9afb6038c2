// SPDX-License-Identifier: GPL-3.0-or-later

/// The ASCII armor of age: strict PEM (RFC 7468 §3) with the label "AGE ENCRYPTED FILE",
/// padded canonical base64 in lines of exactly 64 columns but the last, LF or CRLF line
/// ends, and nothing but whitespace before and after the block.
enum AgeArmor {
    static let begin = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    static let end = Array("-----END AGE ENCRYPTED FILE-----".utf8)
    static let columns = 64

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
}

/// Decodes an armored file as it is read, one line (48 bytes) at a time.
struct AgeArmorDecoder<Base: ByteSource>: ByteSource {
    private var reader: AgeReader<Base>
    private var decoded = [UInt8]()
    private var position = 0
    private var sawShortLine = false
    private var finished = false

    /// Reads up to the BEGIN line (whitespace before it is allowed).
    init(_ reader: AgeReader<Base>) throws {
        self.reader = reader
        while let c = try self.reader.peek(), AgeArmor.isSpace(c) { self.reader.skipByte() }
        guard let first = try nextLine(), first == AgeArmor.begin else {
            throw AgeError.armor("the file does not start with -----BEGIN AGE ENCRYPTED FILE-----")
        }
    }

    /// The next line without LF or CRLF; nil at the end of the input.
    private mutating func nextLine() throws -> [UInt8]? {
        guard var (line, _) = try reader.readLine(limit: AgeArmor.columns + 2, tooLong: AgeError.armor("a line is longer than 64 columns")) else {
            return nil
        }
        if line.last == 0x0D { line.removeLast() }
        return line
    }

    private mutating func advance() throws {
        guard let line = try nextLine() else { throw AgeError.armor("the END line is missing") }
        if line == AgeArmor.end {
            // After the block only whitespace, to the end.
            while let c = try reader.peek() {
                guard AgeArmor.isSpace(c) else { throw AgeError.armor("data follows the END line") }
                reader.skipByte()
            }
            finished = true
            return
        }
        guard !sawShortLine else { throw AgeError.armor("a short line is not the last line") }
        guard !line.isEmpty, line.count <= AgeArmor.columns else { throw AgeError.armor("a line is empty or longer than 64 columns") }
        guard let bytes = AgeBase64.decodePadded(line) else { throw AgeError.armor("a line is not canonical base64") }
        if line.count < AgeArmor.columns || line.last == UInt8(ascii: "=") { sawShortLine = true }
        decoded = bytes
        position = 0
    }

    mutating func read(into out: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while filled < out.count {
            if position == decoded.count {
                if finished { break }
                try advance()
                continue
            }
            let n = min(out.count - filled, decoded.count - position)
            decoded.withUnsafeBytes { src in
                UnsafeMutableRawBufferPointer(rebasing: out[filled..<(filled + n)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: src[position..<(position + n)]))
            }
            position += n
            filled += n
        }
        return filled
    }
}

/// Armors what is written through it; `finish()` writes the last line and the END line.
public struct AgeArmorEncoder<Base: ByteSink>: ByteSink {
    public private(set) var base: Base
    private var pending = [UInt8]()

    public init(_ base: Base) throws {
        self.base = base
        try self.base.write(AgeArmor.begin + [0x0A])
    }

    public mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        pending.append(contentsOf: bytes)
        let whole = pending.count / 48 * 48
        guard whole > 0 else { return }
        var out = [UInt8]()
        out.reserveCapacity(whole / 48 * 65)
        var index = 0
        while index < whole {
            out += AgeBase64.encodePadded(pending[index..<(index + 48)]) + [0x0A]
            index += 48
        }
        pending.removeFirst(whole)
        try base.write(out)
    }

    public mutating func finish() throws {
        var out = [UInt8]()
        if !pending.isEmpty { out += AgeBase64.encodePadded(pending) + [0x0A] }
        pending.removeAll()
        try base.write(out + AgeArmor.end + [0x0A])
    }
}
