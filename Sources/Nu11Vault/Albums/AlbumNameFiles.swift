// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// `Meta/<AlbumID>.n11a` (FORMAT.md §2.3): an album of the primary vault and its sealed name,
/// the same bytes as its index row, so that a rebuilt index has its albums (even empty ones)
/// with their names. Albums of the backup vault have none (the file would tell a backup vault
/// is in use): a rebuild names them by their ID.
///
///     0   4   magic "N11A"
///     4   1   version 1
///     5   3   zero
///     8   16  album ID
///     24  …   the index's `album.name`: SmallSeal(name, Subkey(vault key, "index metadata"),
///             ad = "nu11vlt album name v1" || album ID)
enum AlbumNameFile {
    static let magic = Array("N11A".utf8)
    static let maxBytes = 64 << 10

    static func encode(_ row: AlbumRow) -> [UInt8] { magic + [1, 0, 0, 0] + row.id.bytes + row.name }

    static func decode(_ bytes: [UInt8]) -> AlbumRow? {
        guard bytes.count > 24 + 28, bytes.count <= maxBytes, Array(bytes[0..<4]) == magic, bytes[4] == 1,
              bytes[5..<8].allSatisfy({ $0 == 0 }), let id = try? ItemID(bytes: bytes[8..<24]) else { return nil }
        return AlbumRow(id: id, domain: .vault, name: Array(bytes[24...]))
    }
}

extension Albums {
    /// Writes an album's name file (albums of the primary vault only).
    func writeAlbumNameFile(_ row: AlbumRow) throws {
        guard row.domain == .vault else { return }
        try ProtectedFiles.makeDirectory(location.metaFolder)
        try ProtectedFiles.writeAtomically(AlbumNameFile.encode(row), to: location.albumNamePath(row.id))
    }
}

extension VaultLocation {
    /// Every album name file of the folder (unverified: the caller opens each name).
    func albumNameFiles() -> [AlbumRow] {
        guard let names = try? ProtectedFiles.list(metaFolder) else { return [] }
        return names.filter { $0.hasSuffix(".n11a") }.compactMap { name in
            (try? ProtectedFiles.read(metaFolder + "/" + name, limit: AlbumNameFile.maxBytes)).flatMap(AlbumNameFile.decode)
        }
    }
}
