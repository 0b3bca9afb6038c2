// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

extension Archives {
    /// Imports a `.nu11vlt` archive, all or nothing. The container is checked entry by entry
    /// (names, types, duplicates, sizes, zip bombs) before anything is decrypted; the header's
    /// KDF cost is capped before the password is even asked; every item is authenticated
    /// while it is staged into temp files; only when all of them passed are albums, keys,
    /// files and index rows committed (the rows in one transaction). On any error, nothing
    /// stays behind.
    @discardableResult
    public func importArchive(from path: String, into target: Domain? = nil, password: () throws -> SecretBytes,
                              progress: (Int, Int) throws -> Void = { _, _ in }) throws -> [ItemSummary] {
        if let target, target != mainDomain {
            throw Nu11Error(.invalidArgument, "the target \(target) does not match the vault this PIN opens",
                            remedy: target == .backup ? .advice(.unlockWithBackupPIN) : .primaryPINOnly)
        }
        let zip = try ZipReader(path: path)
        let header = try ArchiveFormat.Header.parse(zip.read(ArchiveFormat.headerName, limit: ArchiveFormat.maxHeaderBytes))
        let key: SecretBytes
        switch header.kind {
        case .portable:
            guard let kdf = header.kdf, let salt = Hex.decode(kdf.salt) else {
                throw Nu11Error(.corrupted, "the archive's KDF parameters are not valid")
            }
            key = try Argon2id.deriveKey(passphrase: Passphrase.normalized(password()), salt: salt, parameters: kdf.parameters)
        case .secure:
            // The current archive key, or one a key rotation retired (archives made before it).
            let current = try domainKey(.archive)
            let candidates = [current] + ((try? keyStore.retiredArchiveKeys(under: current)) ?? [])
            guard let match = candidates.first(where: { header.keyID == ArchiveFormat.keyID($0) }) else {
                throw Nu11Error(.otherKeyStore,
                                "this secure archive was made with another key store; it can only be imported where it was exported",
                                remedy: .portableArchive)
            }
            key = match
        }
        let manifest = try readManifest(zip, key: key, portable: header.kind == .portable)
        guard manifest.items.count == header.items, zip.entries.count == manifest.items.count + 2 else {
            throw ZipReader.reject(path, "its manifest and its entries do not match")
        }
        // Stage every item; nothing is visible until the commit below.
        var staged: [StagedItem] = []
        var albumIDs: [String: ItemID] = try Dictionary(vault.albums.albumNames().map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        var newAlbums: [String: ItemID] = [:]
        for name in manifest.albums where albumIDs[name] == nil {
            try Albums.validateAlbumName(name)
            let id = ItemID()
            albumIDs[name] = id
            newAlbums[name] = id
        }
        // Album folders must exist for staging; new ones are removed again on failure.
        var madeFolders: [String] = []
        var succeeded = false
        defer {
            for s in staged where !s.published { s.abortFiles() }
            if !succeeded { for folder in madeFolders { _ = rmdir(folder) } }
        }
        for id in newAlbums.values {
            let folder = location.albumFolder(id)
            if !FileManager.default.fileExists(atPath: folder) {
                try ProtectedFiles.makeDirectory(folder)
                madeFolders.append(folder)
            }
        }
        for (n, item) in manifest.items.enumerated() {
            try progress(n, manifest.items.count)
            guard let entry = zip.entries[item.entry] else { throw ZipReader.reject(path, "entry \(item.entry) is missing") }
            if let deadline = item.fadeDeadline, deadline <= now { continue }  // faded in the meantime
            let payload = try stage(item, entry: entry.uncompressedSize, zip: zip, key: key, secure: header.kind == .secure,
                                    albums: albumIDs)
            if let payload { staged.append(payload) }
        }
        try progress(manifest.items.count, manifest.items.count)
        let albumRows = try newAlbums.map { name, id in AlbumRow(id: id, domain: mainDomain, name: try vault.albums.sealAlbumName(name, id: id)) }
        try vault.items.commit(&staged, albums: albumRows)
        succeeded = true
        afterCommit("writing the new albums' name files") { for row in albumRows { try vault.albums.writeAlbumNameFile(row) } }
        if header.kind == .secure {
            // A secure archive carries sealed content only: its photos' thumbnails are made
            // now (each decrypted in memory once), after the commit point.
            let rows = staged.map(\.row)
            afterCommit("making the imported photos' thumbnails") { _ = try vault.photos.makeMissingThumbnails(rows: rows) }
        }
        audit("archive import", count: staged.count, items: staged.map(\.row.id))
        let names = try vault.albums.albumNames()
        return staged.map { vault.items.summary(row: $0.row, meta: $0.meta, albumName: $0.row.album.flatMap { names[$0] }) }
    }

    private func readManifest(_ zip: ZipReader, key: SecretBytes, portable: Bool) throws -> ArchiveFormat.Manifest {
        guard let entry = zip.entries[ArchiveFormat.manifestName], entry.uncompressedSize <= UInt64(ArchiveFormat.maxManifestBytes) else {
            throw ZipReader.reject(zip.path, "its manifest is missing or too large")
        }
        let decryptor = try ChunkedPushDecryptor<AES256GCMChunks>(key: key, context: ArchiveFormat.manifestContext)
        var plain = [UInt8]()
        defer { secureZero(&plain) }
        do {
            try zip.stream(ArchiveFormat.manifestName) { data in try decryptor.feed(data) { plain += $0 } }
            try decryptor.finish { plain += $0 }
        } catch let error as Nu11Error where error.message.contains("commitment") && portable {
            throw Nu11Error(.authenticationFailed, "the archive password is wrong (or the archive was altered)",
                            remedy: .advice(.exportPassword))
        }
        guard let manifest = try? JSONDecoder().decode(ArchiveFormat.Manifest.self, from: Data(plain)),
              manifest.version == ArchiveFormat.version else {
            throw ZipReader.reject(zip.path, "its manifest is not valid")
        }
        var seen = Set<String>()
        for item in manifest.items {
            guard ArchiveFormat.isValidEntryName(item.entry), item.entry.hasPrefix(ArchiveFormat.itemPrefix),
                  seen.insert(item.entry).inserted, item.kind == "file" || item.kind == "note" else {
                throw ZipReader.reject(zip.path, "its manifest lists an invalid or repeated entry")
            }
        }
        return manifest
    }

    private func stage(_ item: ArchiveFormat.ManifestItem, entry size: UInt64, zip: ZipReader, key: SecretBytes, secure: Bool,
                       albums: [String: ItemID]) throws -> StagedItem? {
        let kind: ItemKind = item.kind == "note" ? .note : .file
        let album = kind == .file && item.fadeDeadline == nil ? item.album.flatMap { albums[$0] } : nil
        var base = ItemMetadata(name: item.name, size: item.size, type: item.type, created: Date(timeIntervalSince1970: item.created))
        if let turns = item.rotate {
            guard (1...3).contains(turns) else { throw ZipReader.reject(zip.path, "item '\(item.name)' has a rotation of \(turns) quarter turns") }
            base.rotate = turns
        }
        let meta = base
        let decryptor = try ChunkedPushDecryptor<AES256GCMChunks>(key: key, context: ArchiveFormat.itemContext(item.entry))
        if secure {
            guard let idText = item.id, let id = try? ItemID(hex: idText), let raw = item.domain, let domain = Domain(rawValue: raw),
                  let wrappedHex = item.wrappedKey, let wrapped = Hex.decode(wrappedHex) else {
                throw ZipReader.reject(zip.path, "its manifest lacks an item's key")
            }
            guard visibleDomains.contains(domain) else {
                throw Nu11Error(.invalidArgument, "this archive holds items of another vault", remedy: .advice(.otherVaultsPIN))
            }
            if try index.item(id) != nil { return nil }  // already here
            let itemKey = try KeyWrap.unwrap(wrapped, under: key, associatedData: Self.archivedKeyAAD(id, domain: domain, kind: kind))
            return try vault.items.stage(id: id, kind: kind, domain: domain, album: album, fadeDeadline: item.fadeDeadline, itemKey: itemKey,
                             metadata: { _ in meta }) { sink in
                var first = true
                try zip.stream(item.entry) { data in
                    try decryptor.feed(data) { chunk in
                        if first {
                            first = false
                            guard try N11Header.parse(chunk.prefix(N11Header.byteCount)) == N11Header(kind: kind, domain: domain, itemID: id) else {
                                throw Nu11Error(.corrupted, "an archived item does not match its manifest entry")
                            }
                        }
                        try sink.write(chunk)
                    }
                }
                try decryptor.finish { try sink.write($0) }
                return item.size
            }
        }
        guard size == ChunkedScheme.ciphertextLength(AES256GCMChunks.self, plaintextLength: item.size) else {
            throw ZipReader.reject(zip.path, "entry \(item.entry) does not have the size its manifest declares")
        }
        let id = ItemID()
        let domain: Domain = item.fadeDeadline == nil ? mainDomain : .fade
        let itemKey = SecretBytes(randomCount: 32)
        let header = N11Header(kind: kind, domain: domain, itemID: id)
        // Photos get their thumbnails from the same pass (the plaintext is in hand here).
        let capture = kind == .file ? PhotoCapture(name: item.name) : nil
        var photo: PhotoFacts?
        var staged = try vault.items.stage(id: id, kind: kind, domain: domain, album: album, fadeDeadline: item.fadeDeadline, itemKey: itemKey,
                               metadata: { _ in
                                   var m = meta
                                   if let photo { m.apply(photo) }
                                   return m
                               }) { sink in
            try sink.write(header.encoded())
            let encryptor = try ChunkedPushEncryptor<N11Envelope.AEAD>(key: itemKey, context: header.context)
            func forward(_ plain: [UInt8]) throws {
                plain.withUnsafeBytes { capture?.take($0) }
                try encryptor.feed(plain) { try sink.write($0) }
            }
            do {
                try zip.stream(item.entry) { data in
                    try decryptor.feed(data, output: forward)
                }
                try decryptor.finish(output: forward)
                try encryptor.finish { try sink.write($0) }
            } catch let error as Nu11Error {
                throw error.code == .io ? error : Nu11Error(.corrupted, "\(zip.path): item '\(item.name)' failed authentication: \(error.message)",
                                                            remedy: .advice(.damaged), item: zip.path)
            }
            guard encryptor.plaintextLength == item.size else {
                throw ZipReader.reject(zip.path, "item '\(item.name)' has another size than its manifest declares")
            }
            if let capture {
                let (facts, warning) = capture.analyze(turns: meta.turns)
                photo = facts
                if let warning { notice(warning) }
            }
            return item.size
        }
        try vault.items.attachThumbnails(&staged, photo: photo, header: header, itemKey: itemKey)
        return staged
    }
}
