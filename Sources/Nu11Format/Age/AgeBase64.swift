// SPDX-License-Identifier: GPL-3.0-or-later

/// Base64 (RFC 4648 §4, standard alphabet) as age uses it: without padding and canonical in
/// the header; with padding (and canonical) in the ASCII armor. Decoding refuses anything
/// that is not the one encoding of its bytes (stray characters, padding where none belongs,
/// non-zero trailing bits), so no two encodings name the same header.
enum AgeBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = Int8(i) }
        return table
    }()

    static func isAlphabet(_ c: UInt8) -> Bool { values[Int(c)] >= 0 }

    /// Unpadded encoding.
    static func encode(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let a = iterator.next() {
            let b = iterator.next()
            let c = iterator.next()
            out.append(alphabet[Int(a >> 2)])
            out.append(alphabet[Int((a & 0x03) << 4 | (b ?? 0) >> 4)])
            guard let b else { break }
            out.append(alphabet[Int((b & 0x0F) << 2 | (c ?? 0) >> 6)])
            guard let c else { break }
            out.append(alphabet[Int(c & 0x3F)])
        }
        return out
    }

    static func encodeString(_ bytes: some Collection<UInt8>) -> String { String(decoding: encode(bytes), as: UTF8.self) }

    /// Padded encoding (the armor).
    static func encodePadded(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out = encode(bytes)
        while out.count % 4 != 0 { out.append(UInt8(ascii: "=")) }
        return out
    }

    /// Decodes canonical unpadded base64, or nil.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for c in text {
            let v = values[Int(c)]
            guard v >= 0 else { return nil }
            accumulator = accumulator << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Left-over bits must be zero: the canonical encoding.
        guard accumulator == 0 else { return nil }
        return out
    }

    /// Decodes one canonical padded group sequence (length a multiple of 4, `=` only at the end).
    static func decodePadded(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var body = text[...]
        var padding = 0
        while padding < 2, body.last == UInt8(ascii: "=") {
            body = body.dropLast()
            padding += 1
        }
        // With padding, the unpadded length must be what the padding says.
        if padding > 0, (body.count + padding) % 4 != 0 || body.count % 4 == 0 { return nil }
        return decode(body)
    }
}
