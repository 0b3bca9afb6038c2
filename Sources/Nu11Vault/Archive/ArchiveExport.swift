// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What `archive inspect` and exports report.
public struct ArchiveInfo: Sendable {
    public var kind: String
    public var version: Int
    public var kdfIterations: UInt32?
    public var kdfMemoryMiB: UInt32?
    public var entries: Int
    public var items: Int
}

extension Archives {
    static let archivedKeyLabel = Array("nu11vlt archive item key v1".utf8)

    static func archivedKeyAAD(_ id: ItemID, domain: Domain, kind: ItemKind) -> [UInt8] {
        archivedKeyLabel + id.bytes + [domain.rawValue, kind.rawValue]
    }

    /// Exports items (all, or one album's) as a `.nu11vlt` archive. Portable: everything is
    /// re-encrypted with Cobblestone-256 under Argon2id(password); secure: the `.n11` files
    /// travel as they are, wrapped again under this key store's Archive key.
    @discardableResult
    ///
    /// `stripLocation` removes photos' locations from a portable archive (as `export
    /// --strip-location` does); a secure archive carries the sealed files as they are.
    ///
    /// Fade items stay out of portable archives unless `includeFade`: a copy cannot carry
    /// the deadline (whoever holds the archive and its password can keep the item forever).
    public func exportArchive(to path: String, password: SecretBytes?, parameters: KDFParameters, album: String? = nil,
                              includeFade: Bool = false, overwrite: Bool = false, stripLocation: Bool = false,
                              progress: (Int, Int) throws -> Void = { _, _ in }) throws -> ArchiveInfo {
        if !overwrite && FileManager.default.fileExists(atPath: path) {
            throw Nu11Error(.alreadyExists, "\(path) already exists", remedy: .otherOutputOrForce, item: path)
        }
        let albumFilter: ItemID?? = try album.map { .some(try vault.albums.albumID(named: $0)) } ?? .none
        let rows = try visibleRows(kind: album == nil ? nil : .file, album: albumFilter, afterSeq: 0, limit: Int.max)
            .filter { password == nil || includeFade || $0.domain != .fade }
        let names = try vault.albums.albumNames()
        let kind: ArchiveFormat.Kind = password == nil ? .secure : .portable
        let key: SecretBytes
        var header: ArchiveFormat.Header
        if let password {
            try parameters.validateChosen()
            let salt = SecureRandom.bytes(Argon2id.saltByteCount)
            key = try Argon2id.deriveKey(passphrase: Passphrase.normalized(password), salt: salt, parameters: parameters)
            header = .init(kind: .portable, kdf: .init(parameters: parameters, salt: salt), keyID: nil, items: rows.count)
        } else {
            key = try domainKey(.archive)
            header = .init(kind: .secure, kdf: nil, keyID: ArchiveFormat.keyID(key), items: rows.count)
        }
        // The manifest, with an opaque entry name per item.
        var items: [ArchiveFormat.ManifestItem] = []
        var sources: [(ItemRow, String, UInt64)] = []
        for row in rows {
            try vault.items.checkFade(row)
            let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
            let entry = ArchiveFormat.itemPrefix + Hex.encode(SecureRandom.bytes(16)) + ".c2sp"
            var item = ArchiveFormat.ManifestItem(
                entry: entry, kind: row.kind == .note ? "note" : "file", name: meta.name, size: meta.size, type: meta.type,
                created: meta.created.timeIntervalSince1970, album: row.album.flatMap { names[$0] },
                fadeDeadline: row.domain == .fade ? state.fade.first { $0.id == row.id }?.deadline : nil)
            item.rotate = meta.turns == 0 ? nil : meta.turns
            var payload = meta.size
            if kind == .secure {
                let itemKey = try keyStore.itemKeyRecord(row.id, domain: row.domain).open(domainKey: domainKey(row.domain))
                item.id = row.id.hex
                item.domain = row.domain.rawValue
                item.wrappedKey = Hex.encode(try KeyWrap.wrap(itemKey, under: key,
                                                              associatedData: Self.archivedKeyAAD(row.id, domain: row.domain, kind: row.kind)))
                payload = UInt64((try FileManager.default.attributesOfItem(atPath: try vault.items.locate(row))[.size] as? Int) ?? 0)
            }
            items.append(item)
            sources.append((row, entry, payload))
        }
        let manifest = ArchiveFormat.Manifest(albums: album.map { [$0] } ?? names.values.sorted(), items: items)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var manifestPlain = [UInt8](try encoder.encode(manifest))
        defer { secureZero(&manifestPlain) }
        let manifestSealed = try ChunkedEncryption<AES256GCMChunks>.seal(manifestPlain, key: key, context: ArchiveFormat.manifestContext)
        let headerBytes = [UInt8](try encoder.encode(header))

        let zip = try ZipWriter(destination: path)
        do {
            try zip.add(ArchiveFormat.headerName, size: UInt64(headerBytes.count), from: PullBuffer(once(headerBytes)))
            try zip.add(ArchiveFormat.manifestName, size: UInt64(manifestSealed.count), from: PullBuffer(once(manifestSealed)))
            for (n, (row, entry, payload)) in sources.enumerated() {
                try progress(n, sources.count)
                let (fd, itemKey) = try vault.items.openItem(row)
                defer { close(fd) }
                let header = N11Header(kind: row.kind, domain: row.domain, itemID: row.id)
                let size = ChunkedScheme.ciphertextLength(AES256GCMChunks.self, plaintextLength: payload)
                if kind == .portable && stripLocation && row.kind == .file {
                    // Stripping keeps the size (in place), so the manifest's size holds.
                    var plain = MemorySink()
                    try vault.photos.exportStripped(row, meta: try ItemMetadata.open(row, key: metadataKey(row.domain)), to: &plain)
                    defer { plain.zero() }
                    let encryptor = try ChunkedStreamEncryptor<AES256GCMChunks, MemorySink.Reader>(
                        source: plain.reader(), key: key, context: ArchiveFormat.itemContext(entry))
                    try zip.add(entry, size: size, from: PullBuffer(encryptor.next))
                } else if kind == .portable {
                    let decryptor = try ChunkedDecryptor<N11Envelope.AEAD, FileDescriptorStream>(
                        source: N11Envelope.body(of: fd, label: row.id.hex, expected: header), key: itemKey, context: header.context)
                    let encryptor = try ChunkedStreamEncryptor<AES256GCMChunks, DecryptingSource<N11Envelope.AEAD, FileDescriptorStream>>(
                        source: DecryptingSource(decryptor: decryptor), key: key, context: ArchiveFormat.itemContext(entry))
                    try zip.add(entry, size: size, from: PullBuffer(encryptor.next))
                } else {
                    let encryptor = try ChunkedStreamEncryptor<AES256GCMChunks, FileDescriptorStream>(
                        source: FileDescriptorStream(fd: fd, label: row.id.hex), key: key, context: ArchiveFormat.itemContext(entry))
                    try zip.add(entry, size: size, from: PullBuffer(encryptor.next))
                }
            }
            try progress(sources.count, sources.count)
            // Renamed into place, the archive is written: a failing folder fsync after it is "done, but …".
            try vault.commitStep("the archive \(path)") { try zip.commit() }
        } catch let error as Nu11Error {
            zip.abort()
            throw error
        }
        audit("archive export", count: rows.count, items: rows.map(\.id), detail: kind.rawValue)
        return ArchiveInfo(kind: kind.rawValue, version: ArchiveFormat.version, kdfIterations: header.kdf?.iterations,
                           kdfMemoryMiB: header.kdf.map { $0.memoryKiB / 1024 }, entries: rows.count + 2, items: rows.count)
    }

    /// What the archive says of itself, without the password.
    public static func inspectArchive(_ path: String) throws -> ArchiveInfo {
        let zip = try ZipReader(path: path)
        let header = try ArchiveFormat.Header.parse(zip.read(ArchiveFormat.headerName, limit: ArchiveFormat.maxHeaderBytes))
        return ArchiveInfo(kind: header.kind.rawValue, version: header.version, kdfIterations: header.kdf?.iterations,
                           kdfMemoryMiB: header.kdf.map { $0.memoryKiB / 1024 }, entries: zip.entries.count, items: header.items)
    }
}

/// A producer that yields `bytes` once.
func once(_ bytes: [UInt8]) -> () throws -> [UInt8]? {
    var pending: [UInt8]? = bytes
    return {
        defer { pending = nil }
        return pending
    }
}
