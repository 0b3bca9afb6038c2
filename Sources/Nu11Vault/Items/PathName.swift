// SPDX-License-Identifier: GPL-3.0-or-later

/// The two pieces of path text an import needs for every file, without Foundation's NSString
/// (which bridges and re-normalises the slashes of each path: 6 % of the CPU time of an
/// import of 10,000 small files). Same answers as `NSString` for what an import can be given
/// (`PathNameTests` compares them).
enum PathName {
    /// The last component, as `NSString.lastPathComponent`: trailing slashes ignored, "/" for
    /// a path of slashes only (where NSString answers "" for two or more), "" for "".
    static func last(_ path: String) -> String {
        let bytes = Array(path.utf8)
        var end = bytes.count
        while end > 1 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        if end == 1 && bytes[0] == UInt8(ascii: "/") { return "/" }
        var start = end
        while start > 0 && bytes[start - 1] != UInt8(ascii: "/") { start -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// The path without its extension, and the extension (without the dot), as
    /// `NSString.deletingPathExtension` and `.pathExtension` for a path without trailing
    /// slashes: the extension follows the last "." of the last component, unless that dot
    /// starts the component (".profile", "." and ".." alike); a dot that ends it ("name.") is dropped from the
    /// stem and gives no extension. Repeated slashes in the stem become one, as NSString's do.
    static func splitExtension(_ path: String) -> (stem: String, ext: String) {
        var bytes = Array(path.utf8)
        // (A plain scan: `firstRange(of:)` is generic and was 5 % of a 10,000-file import.)
        let slash = UInt8(ascii: "/")
        if bytes.count > 2, zip(bytes, bytes.dropFirst()).contains(where: { $0 == slash && $1 == slash }) {
            bytes = [bytes[0]] + zip(bytes.dropFirst(), bytes).compactMap { $0 == UInt8(ascii: "/") && $1 == UInt8(ascii: "/") ? nil : $0 }
        }
        let component = bytes[((bytes.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1)...]
        if component.elementsEqual([UInt8(ascii: ".")]) || component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
            return (String(decoding: bytes, as: UTF8.self), "")
        }
        var dot = bytes.count - 1
        while dot > 0 && bytes[dot] != UInt8(ascii: ".") && bytes[dot] != UInt8(ascii: "/") { dot -= 1 }
        guard dot > 0, bytes[dot] == UInt8(ascii: "."), bytes[dot - 1] != UInt8(ascii: "/") else {
            return (String(decoding: bytes, as: UTF8.self), "")
        }
        return (String(decoding: bytes[..<dot], as: UTF8.self), String(decoding: bytes[(dot + 1)...], as: UTF8.self))
    }
}
