// SPDX-License-Identifier: GPL-3.0-or-later

/// Where the vault folder was last found after it moved (docs/FORMAT.md §4.4c): a hint kept in
/// the key store, in the clear. It only says where to look: a folder it names is used only
/// when its index carries the vault ID this key store is paired with, so a record that was
/// edited (or points at a stranger's folder) is worth nothing more than a wrong guess.
public enum VaultFolderRecord {
    public static let magic: [UInt8] = Array("N11L".utf8)
    public static let version: UInt8 = 1
    /// PATH_MAX: no longer path is recorded or read.
    public static let maxPathBytes = 4096

    public static func encode(_ path: String) throws -> [UInt8] {
        let bytes = Array(path.utf8)
        guard isAcceptable(bytes) else {
            throw Nu11Error(.invalidArgument, "the vault folder's path cannot be recorded (not an absolute path of at most \(maxPathBytes) bytes without control characters)",
                            remedy: .advice(.checkPath), item: path)
        }
        return magic + [version, UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)] + bytes
    }

    /// The recorded path, or nil for anything that is not a version-1 record of an absolute
    /// path without control characters (a damaged or foreign file is ignored, never trusted).
    public static func decode(_ bytes: [UInt8]) -> String? {
        guard bytes.count >= 7, bytes.count <= 7 + maxPathBytes, Array(bytes[0..<4]) == magic, bytes[4] == version else { return nil }
        let length = Int(bytes[5]) << 8 | Int(bytes[6])
        guard length == bytes.count - 7 else { return nil }
        let path = Array(bytes[7...])
        guard isAcceptable(path) else { return nil }
        return String(validating: path, as: UTF8.self)
    }

    static func isAcceptable(_ path: [UInt8]) -> Bool {
        guard path.first == UInt8(ascii: "/"), path.count <= maxPathBytes else { return false }
        guard !path.contains(where: { $0 < 0x20 || $0 == 0x7f }) else { return false }
        return String(validating: path, as: UTF8.self) != nil
    }
}
