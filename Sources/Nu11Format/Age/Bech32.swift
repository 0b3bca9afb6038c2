// SPDX-License-Identifier: GPL-3.0-or-later

/// Bech32 (BIP 173) as age uses it for recipients and identities: no length limit (a
/// post-quantum recipient is nearly 2,000 characters), all lower case or all upper case.
enum Bech32 {
    private static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        var chk: UInt32 = 1
        for v in values {
            let top = chk >> 25
            chk = (chk & 0x1ff_ffff) << 5 ^ UInt32(v)
            for i in 0..<5 where (top >> UInt32(i)) & 1 == 1 { chk ^= generator[i] }
        }
        return chk
    }

    private static func expand(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    /// Regroups bits (8 → 5 when encoding, 5 → 8 when decoding, which refuses non-zero padding).
    private static func convert(_ data: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var acc = 0, bits = 0
        var out = [UInt8]()
        let maxv = (1 << to) - 1
        for v in data {
            acc = acc << from | Int(v)
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8((acc >> bits) & maxv))
            }
            acc &= (1 << bits) - 1
        }
        if pad {
            if bits > 0 { out.append(UInt8((acc << (to - bits)) & maxv)) }
        } else if bits >= from || acc != 0 {
            return nil
        }
        return out
    }

    /// The lower-case encoding of `data` under `hrp` (lower case).
    static func encode(hrp: String, data: [UInt8]) -> String {
        let h = Array(hrp.utf8)
        let values = convert(data, from: 8, to: 5, pad: true) ?? []
        let checksum = polymod(expand(h) + values + [0, 0, 0, 0, 0, 0]) ^ 1
        var out = h + [UInt8(ascii: "1")]
        out += values.map { charset[Int($0)] }
        out += (0..<6).map { charset[Int((checksum >> UInt32(5 * (5 - $0))) & 31)] }
        return String(decoding: out, as: UTF8.self)
    }

    /// The HRP (lower case) and data of a Bech32 string, or nil (mixed case, bad checksum,
    /// characters outside the charset, non-zero padding).
    static func decode(_ string: String) -> (hrp: String, data: [UInt8])? {
        let bytes = Array(string.utf8)
        guard bytes.allSatisfy({ $0 >= 33 && $0 <= 126 }) else { return nil }
        let hasLower = bytes.contains { $0 >= 97 && $0 <= 122 }
        let hasUpper = bytes.contains { $0 >= 65 && $0 <= 90 }
        guard !(hasLower && hasUpper) else { return nil }
        let lower = bytes.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
        guard let separator = lower.lastIndex(of: UInt8(ascii: "1")), separator >= 1,
              lower.count - separator - 1 >= 6 else { return nil }
        let hrp = Array(lower[..<separator])
        var values = [UInt8]()
        for c in lower[(separator + 1)...] {
            guard let v = charset.firstIndex(of: c) else { return nil }
            values.append(UInt8(v))
        }
        guard polymod(expand(hrp) + values) == 1,
              let data = convert(Array(values.dropLast(6)), from: 5, to: 8, pad: false) else { return nil }
        return (String(decoding: hrp, as: UTF8.self), data)
    }
}
