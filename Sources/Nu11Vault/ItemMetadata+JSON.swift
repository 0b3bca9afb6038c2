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
        Self.field("name", &out) { Self.string(name, &$0) }
        Self.field("size", &out) { $0 += Array("\(size)".utf8) }
        Self.field("type", &out) { Self.string(type, &$0) }
        Self.field("created", &out) { $0 += Array("\(created.timeIntervalSince1970)".utf8) }
        if let modified { Self.field("modified", &out) { $0 += Array("\(modified.timeIntervalSince1970)".utf8) } }
        if let width { Self.field("width", &out) { $0 += Array("\(width)".utf8) } }
        if let height { Self.field("height", &out) { $0 += Array("\(height)".utf8) } }
        if let taken { Self.field("taken", &out) { $0 += Array("\(taken.timeIntervalSince1970)".utf8) } }
        if let camera { Self.field("camera", &out) { Self.string(camera, &$0) } }
        if let gps { Self.field("gps", &out) { $0 += Array((gps ? "true" : "false").utf8) } }
        if let thumbnail { Self.field("thumbnail", &out) { $0 += Array((thumbnail ? "true" : "false").utf8) } }
        if let duration { Self.field("duration", &out) { $0 += Array("\(duration)".utf8) } }
        if let motion { Self.field("motion", &out) { Self.string(motion.hex, &$0) } }
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static func field(_ key: String, _ out: inout [UInt8], _ value: (inout [UInt8]) -> Void) {
        if out.count > 1 { out.append(UInt8(ascii: ",")) }
        string(key, &out)
        out.append(UInt8(ascii: ":"))
        value(&out)
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
