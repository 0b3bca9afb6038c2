// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension ItemMetadata {
    /// The metadata as JSON, written by hand: `JSONEncoder` spent about 5 µs an item in its
    /// generic machinery, an eighth of what a folder import of small files does on its
    /// sealing thread. The same keys and values as the encoder's (`Codable`, dates in
    /// seconds since 1970), which is what every reader decodes (ItemMetadataJSONTests holds
    /// them equal over hostile names). A number JSON cannot hold (not finite) goes to the
    /// encoder, which refuses it as before.
    func json() throws -> [UInt8] {
        let numbers = [created.timeIntervalSince1970, modified?.timeIntervalSince1970, taken?.timeIntervalSince1970, duration]
        guard numbers.allSatisfy({ $0?.isFinite ?? true }) else {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .secondsSince1970
            return [UInt8](try encoder.encode(self))
        }
        var out: [UInt8] = []
        out.reserveCapacity(160 + name.utf8.count + type.utf8.count + (camera?.utf8.count ?? 0))
        out.append(UInt8(ascii: "{"))
        Self.text("name", name, &out)
        Self.number("size", "\(size)", &out)
        Self.text("type", type, &out)
        Self.number("created", "\(created.timeIntervalSince1970)", &out)
        if let modified { Self.number("modified", "\(modified.timeIntervalSince1970)", &out) }
        if let width { Self.number("width", "\(width)", &out) }
        if let height { Self.number("height", "\(height)", &out) }
        if let taken { Self.number("taken", "\(taken.timeIntervalSince1970)", &out) }
        if let camera { Self.text("camera", camera, &out) }
        if let gps { Self.number("gps", "\(gps)", &out) }
        if let thumbnail { Self.number("thumbnail", "\(thumbnail)", &out) }
        if let duration { Self.number("duration", "\(duration)", &out) }
        if let motion { Self.text("motion", motion.hex, &out) }
        if let rotate { Self.number("rotate", "\(rotate)", &out) }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `"key":` after a comma unless it is the first field.
    private static func key(_ key: String, _ out: inout [UInt8]) {
        if out.count > 1 { out.append(UInt8(ascii: ",")) }
        string(key, &out)
        out.append(UInt8(ascii: ":"))
    }

    /// A field whose value is written as it is: a number or a flag (`true`, `false`).
    private static func number(_ name: String, _ value: String, _ out: inout [UInt8]) {
        key(name, &out)
        out += value.utf8
    }

    private static func text(_ name: String, _ value: String, _ out: inout [UInt8]) {
        key(name, &out)
        string(value, &out)
    }

    /// A JSON string: the quote, the backslash and the control characters escaped, anything
    /// else as its UTF-8 bytes.
    static func string(_ text: String, _ out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0..<0x20: out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xf)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
