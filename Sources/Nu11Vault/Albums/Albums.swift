// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

extension Albums {
    /// What happens to an album's items when it is deleted.
    public enum AlbumDeletion: Sendable {
        case moveItemsToPhotos
        case deleteItems
    }

    static func albumAAD(_ id: ItemID) -> [UInt8] { Array("nu11vlt album name v1".utf8) + id.bytes }

    /// An album name, sealed and padded with NUL bytes to 64, 128, 256, … bytes (a name
    /// never contains NUL), so the sealed size says nothing about the name's length.
    func sealAlbumName(_ name: String, id: ItemID, domain: Domain? = nil) throws -> [UInt8] {
        var plain = Array(name.utf8)
        var bucket = 64
        while bucket < plain.count { bucket *= 2 }
        plain += [UInt8](repeating: 0, count: bucket - plain.count)
        return try SmallSeal.seal(plain, key: metadataKey(domain ?? mainDomain), associatedData: Self.albumAAD(id))
    }

    static func unpadAlbumName(_ plain: [UInt8]) -> String {
        var bytes = plain
        while bytes.last == 0 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Album names by ID, decrypted.
    func albumNames() throws -> [ItemID: String] {
        var names: [ItemID: String] = [:]
        for row in try index.albums(domains: visibleDomains) {
            let key = try metadataKey(row.domain)
            guard let plain = try? SmallSeal.open(row.name, key: key, associatedData: Self.albumAAD(row.id)) else {
                // Damaged, or an old copy of the index put back: the repairing check re-seals it.
                throw Nu11Error(.corrupted, "album \(row.id): its name in the index failed authentication (damaged, or from an old copy of the index)",
                                remedy: .repair, item: row.id.hex)
            }
            names[row.id] = Self.unpadAlbumName(plain)
        }
        return names
    }

    func albumID(named name: String) throws -> ItemID {
        guard let match = try albumNames().first(where: { $0.value == name }) else {
            throw Nu11Error(.notFound, "no album named '\(name)'",
                            remedy: .listAlbums, item: name)
        }
        return match.key
    }

    static func validateAlbumName(_ name: String) throws {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed == name, name.utf8.count <= 255,
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw Nu11Error(.invalidArgument, "'\(name.prefix(40))' is not a valid album name",
                            remedy: .advice(.validAlbumName))
        }
    }

    @discardableResult
    public func createAlbum(_ name: String) throws -> AlbumSummary {
        try Self.validateAlbumName(name)
        guard try !albumNames().values.contains(name) else {
            throw Nu11Error(.alreadyExists, "an album named '\(name)' already exists", remedy: .advice(.otherName), item: name)
        }
        let id = ItemID()
        let sealed = try sealAlbumName(name, id: id)
        try ProtectedFiles.makeDirectory(location.albumFolder(id))
        let row = AlbumRow(id: id, domain: mainDomain, name: sealed)
        try index.insertAlbum(row)
        afterCommit("writing the album's name file") { try writeAlbumNameFile(row) }
        return AlbumSummary(id: id.hex, name: name, items: 0)
    }

    public func renameAlbum(_ name: String, to newName: String) throws {
        try Self.validateAlbumName(newName)
        let id = try albumID(named: name)
        guard try !albumNames().values.contains(newName) else {
            throw Nu11Error(.alreadyExists, "an album named '\(newName)' already exists", remedy: .advice(.otherName), item: newName)
        }
        let sealed = try sealAlbumName(newName, id: id)
        try index.renameAlbum(id, name: sealed)
        afterCommit("writing the album's name file") { try writeAlbumNameFile(AlbumRow(id: id, domain: mainDomain, name: sealed)) }
    }

    public func list() throws -> [AlbumSummary] {
        let names = try albumNames()
        let counts = try index.albumItemCounts(domains: visibleDomains)
        return try index.albums(domains: visibleDomains).compactMap { row in
            names[row.id].map { AlbumSummary(id: row.id.hex, name: $0, items: counts[row.id] ?? 0) }
        }
    }

    /// Deletes an album; its items go back to Photos or are crypto-shredded, as chosen.
    public func deleteAlbum(_ name: String, items disposition: AlbumDeletion) throws {
        let id = try albumID(named: name)
        var members: [ItemRow] = []
        var after: Int64 = 0
        while true {
            let rows = try index.items(domains: visibleDomains, album: .some(id), afterSeq: after, limit: 10_000)
            members += rows
            guard let last = rows.last else { break }
            after = last.seq
        }
        switch disposition {
        case .moveItemsToPhotos:
            for row in members { try move(row, to: nil) }
        case .deleteItems:
            try vault.items.delete(rows: members, secure: settings.deletionMode == .secure)
        }
        try commitStep("deleting the album") { try index.deleteAlbum(id) }  // the commit point
        let folder = location.albumFolder(id)
        afterCommit("removing the album's name file") { try ProtectedFiles.remove(location.albumNamePath(id)) }
        afterCommit("removing the album's empty folder") {
            if ProtectedFiles.kind(folder) == .directory, try ProtectedFiles.list(folder).isEmpty { try ProtectedFiles.removeDirectory(folder) }
        }
    }

    /// Moves an item into an album (or back to Photos with nil). The file is renamed; its
    /// ciphertext does not change (the album is not part of the envelope's identity).
    public func moveItem(_ ref: ItemRef, toAlbum album: String?) throws {
        let row = try vault.items.row(ref)
        guard row.kind == .file, row.domain == mainDomain else {
            throw Nu11Error(.invalidArgument, "item \(ref) cannot go into an album (only photos/files of the vault can)",
                            item: ref.digits)
        }
        try move(row, to: try album.map { try albumID(named: $0) })
    }

    private func move(_ row: ItemRow, to album: ItemID?) throws {
        let from = try vault.items.locate(row)
        let to = location.path(id: row.id, kind: row.kind, domain: row.domain, album: album)
        if let album { try ProtectedFiles.makeDirectory(location.albumFolder(album)) }
        // The metadata is sealed to the album too: re-sealed with the move, in the same row update.
        let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
        if from != to { try ProtectedFiles.move(from, to: to) }
        var moved = row
        moved.album = album
        moved.meta = try meta.seal(id: row.id, album: album, key: metadataKey(row.domain))
        try index.updateItem(moved)
        afterCommit("updating item \(row.id)'s metadata file") { try rewriteSidecar(row: moved, meta: meta) }
    }
}
