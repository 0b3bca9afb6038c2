// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Nu11Format
import Nu11Storage

/// The index is a cache the vault can rebuild (FORMAT.md §5.3): an item file whose row is
/// gone gets it back from its sidecar (`Meta/<ID>.n11m`, under the item's own key), its album
/// from where the file is (or the sidecar), the album's name from `Meta/<AlbumID>.n11a`.
extension Maintenance {
    /// What the rebuild did for one file: a row adopted (with what it could not bring back),
    /// or why not.
    struct Adoption {
        var rows: [ItemRow] = []
        var albums: [AlbumRow] = []
        var findings: [CheckReport.Finding] = []
        /// Files left as they are: items another PIN opens (the backup vault's, with the primary PIN).
        var foreign: Set<String> = []
    }

    /// Rows for the content files in `files` that the index lacks and this session's keys
    /// open; written in one transaction (nothing when `write` is false: `check` without
    /// `--repair` only reports).
    /// `albumKeys`: other keys that may open album names (`recover` without an index: the
    /// phrase's key sets); a name they open is sealed again under this session's key.
    /// `writeSidecars` false: rows only (another device's items in a shared vault, whose sidecars
    /// and album name files are that device's files).
    func adoptOrphans(_ files: [String], known given: Set<ItemID>, write: Bool, albumKeys: [SecretBytes] = [],
                      writeSidecars: Bool = true) throws -> Adoption {
        // An item adopted once: a move between domains cut short (and its marker lost) can
        // leave a content file in each, under one ID; the first that opens wins.
        var known = given
        var result = Adoption()
        var albumNames: [ItemID: AlbumRow] = [:]
        if mainDomain == .vault, let key = try? metadataKey(.vault) {
            for album in location.albumNameFiles() {
                let ad = Albums.albumAAD(album.id)
                if (try? SmallSeal.open(album.name, key: key, associatedData: ad)) != nil {
                    albumNames[album.id] = album
                } else if var plain = albumKeys.lazy.compactMap({ try? SmallSeal.open(album.name, key: $0, associatedData: ad) }).first {
                    defer { secureZero(&plain) }
                    albumNames[album.id] = AlbumRow(id: album.id, domain: .vault,
                                                    name: try SmallSeal.seal(plain, key: key, associatedData: ad))
                }
            }
        }
        var existingAlbums = Set(try index.albums(domains: Domain.allCases).map(\.id))
        /// Name files that are there but open with no key held: left as they are (FORMAT.md §5.3).
        var leftNameFiles: Set<ItemID> = []
        var adopted: [(ItemRow, Date)] = []
        /// Each adopted row's sidecar, written after the commit: the seal replaced in place
        /// (`opened`) or the whole file from the row.
        var sidecars: [(row: ItemRow, meta: ItemMetadata, itemKey: SecretBytes, opened: Bool)] = []
        for path in files {
            let name = (path as NSString).lastPathComponent
            guard !name.hasPrefix(ProtectedFiles.tempPrefix), name.hasSuffix(".n11") || name.hasSuffix(".n11note"),
                  let header = try? N11Header.parse(ProtectedFiles.readPrefix(path, count: N11Header.byteCount)),
                  !known.contains(header.itemID), (try? ItemID(hex: Self.stem(name))) == header.itemID else { continue }
            let id = header.itemID
            guard let record = try? keyStore.itemKeyRecord(id, domain: header.domain) else { continue }  // an orphan, reported by the caller
            guard visibleDomains.contains(header.domain), record.domain == header.domain,
                  let itemKey = try? record.open(domainKey: domainKey(header.domain)) else {
                result.foreign.insert(path)
                continue
            }
            var finding = CheckReport.Finding(item: id.hex, problem: "file without an index entry (\(path))")
            var facts: ItemSidecar.Facts?
            var sidecarSeal: [UInt8]?
            if let bytes = try? ProtectedFiles.read(location.sidecarPath(id), limit: SidecarEnvelope.maxBytes),
               let (head, opened) = try? ItemSidecar.open(bytes, id: id, itemKey: itemKey),
               head.kind == header.kind, head.domain == header.domain {
                facts = opened
                sidecarSeal = head.recoverySeal
            }
            var missing: [String] = []
            let meta: ItemMetadata
            if let facts {
                meta = facts.meta
            } else {
                // An item from before sidecars, or whose sidecar is lost: its content tells its
                // size; a name is made up from its ID.
                guard let size = try? plainSize(path, header: header, itemKey: itemKey) else {
                    finding.problem += "; it does not decrypt"
                    result.findings.append(finding)
                    continue
                }
                var made = ItemMetadata(name: "recovered-\(id.hex.prefix(8))", size: size, type: "application/octet-stream",
                                        created: Self.modificationTime(path))
                made.modified = nil
                meta = made
                missing.append("its name, type and dates (no metadata file): named \(made.name)")
            }
            // The album: where the file is says it for the primary vault (Photos: none); the
            // sidecar says it for the backup vault, whose files are not kept by album.
            var album = header.domain == .backup ? facts?.album : Self.albumOfPath(path, location: location)
            if header.kind != .file || header.domain == .fade { album = nil }
            if let a = album, !existingAlbums.contains(a) {
                if let named = albumNames[a] {
                    result.albums.append(named)
                } else if let sealed = try? vault.albums.sealAlbumName("Album \(a.hex.prefix(8))", id: a) {
                    result.albums.append(AlbumRow(id: a, domain: mainDomain, name: sealed))
                    if let key = try? metadataKey(.vault), nameFileState(a, key: key) == .foreign {
                        leftNameFiles.insert(a)
                        missing.append("its album's name (named Album \(a.hex.prefix(8)); its name file was left as it is: \(Self.nameFileOlderOrNewer))")
                    } else {
                        missing.append("its album's name (named Album \(a.hex.prefix(8)))")
                    }
                } else {
                    album = nil
                }
                existingAlbums.insert(a)
            }
            var row = ItemRow(id: id, kind: header.kind, domain: header.domain, album: album,
                              meta: try meta.seal(id: id, album: album, key: metadataKey(header.domain)))
            // A fresh seal to the current phrase, never the sidecar's: an old sidecar put back
            // carries a revoked phrase's seal (FORMAT.md §5.3).
            // Another device's item (`writeSidecars` false) keeps the seal its device made: this
            // device neither opens seals nor writes that device's sidecar (FORMAT.md § 9.6).
            row.recovery = !write ? nil : writeSidecars ? try freshRecoverySeal(row, itemKey: itemKey) : sidecarSeal
            adopted.append((row, meta.created))
            known.insert(id)
            sidecars.append((row, meta, itemKey, facts != nil))
            var done = "index entry rebuilt"
            if facts == nil { done += "; metadata file rewritten" }
            if row.recovery != nil { done += "; sealed afresh to the current recovery phrase" }
            finding.repaired = done + (missing.isEmpty ? "" : "; not recovered: " + missing.joined(separator: ", "))
            if !write { finding.repaired = nil; finding.problem += " (its metadata file can rebuild it: a repairing check does)" }
            result.findings.append(finding)
        }
        // Empty albums of the primary vault come back too.
        for (id, album) in albumNames where !existingAlbums.contains(id) { result.albums.append(album) }
        result.rows = adopted.sorted { ($0.1, $0.0.id.hex) < ($1.1, $1.0.id.hex) }.map(\.0)
        if write && (!result.rows.isEmpty || !result.albums.isEmpty) {
            try index.commit(albums: result.albums, items: result.rows, removing: [])
            for album in result.albums where writeSidecars && !leftNameFiles.contains(album.id) {
                afterCommit("writing the album's name file") { try vault.albums.writeAlbumNameFile(album) }
            }
            for sidecar in sidecars where writeSidecars {
                afterCommit("writing the item's metadata file") {
                    if sidecar.opened {
                        if let seal = sidecar.row.recovery { try SidecarSeals.set(seal, for: sidecar.row.id, location: location) }
                    } else {
                        try writeSidecar(sidecar.row, meta: sidecar.meta, seal: sidecar.row.recovery, itemKey: sidecar.itemKey)
                    }
                }
            }
        }
        return result
    }

    /// Rows of this session's domains whose sealed metadata does not open (sealed under keys no
    /// longer held: an old index put back, recovery data that named other keys) but whose
    /// sidecar opens with the item's key: re-sealed from the sidecar (`repair`), or only
    /// counted. Returns their IDs.
    func resealFromSidecars(repair: Bool) throws -> [ItemID] {
        var fixed: [ItemID] = []
        // Not `isVisible`: a Fade row counts as this PIN's when its metadata opens, which an
        // entry sealed under a retired Fade key does not — it would vanish silently. Whose it
        // is, is told here by its key record, which opens only under this PIN's domain key.
        for row in try index.allRows() where visibleDomains.contains(row.domain) {
            if row.domain == .fade, let entry = state.fade.first(where: { $0.id == row.id }), entry.deadline <= now { continue }
            let key = try metadataKey(row.domain)
            guard !ItemMetadata.opens(row, key: key), (try? ItemMetadata.openReportingLegacy(row, key: key)) == nil,
                  let itemKey = try? keyStore.itemKeyRecord(row.id, domain: row.domain).open(domainKey: domainKey(row.domain)),
                  let bytes = try? ProtectedFiles.read(location.sidecarPath(row.id), limit: SidecarEnvelope.maxBytes),
                  let (head, facts) = try? ItemSidecar.open(bytes, id: row.id, itemKey: itemKey),
                  head.kind == row.kind, head.domain == row.domain else { continue }
            if repair {
                var resealed = row
                resealed.meta = try facts.meta.seal(id: row.id, album: row.album, key: key)
                try index.updateItem(resealed)
                // The row's recovery seal came with the old index (and the sidecar's may be an
                // old copy's): both are sealed afresh to the current phrase, never copied.
                if let seal = try freshRecoverySeal(row, itemKey: itemKey) {
                    try index.setRecoverySeals([(id: row.id, seal: seal)])
                    try SidecarSeals.set(seal, for: row.id, location: location)
                }
            }
            fixed.append(row.id)
        }
        return fixed
    }

    /// A file name's ID part (`vault_<ID>.n11note`, `<ID>.n11`).
    static func stem(_ name: String) -> String {
        name.replacingOccurrences(of: "vault_", with: "").replacingOccurrences(of: "fade_", with: "")
            .components(separatedBy: ".").first ?? ""
    }

    /// The album a primary-vault file's place names (`Vault/Albums/<AlbumID>/<ID>.n11`).
    static func albumOfPath(_ path: String, location: VaultLocation) -> ItemID? {
        guard path.hasPrefix(location.albumsFolder + "/") else { return nil }
        let parent = ((path as NSString).deletingLastPathComponent as NSString).lastPathComponent
        return try? ItemID(hex: parent)
    }

    static func modificationTime(_ path: String) -> Date {
        (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? Date()
    }

    /// The plaintext size of an item file (every chunk authenticated on the way).
    func plainSize(_ path: String, header: N11Header, itemKey: SecretBytes) throws -> UInt64 {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw SystemIO.error("open", item: path) }
        defer { close(fd) }
        var sink = ByteCounter()
        try N11Envelope.open(from: FileDescriptorStream(fd: fd, label: header.itemID.hex), to: &sink, expected: header, itemKey: itemKey)
        return sink.count
    }
}

/// Counts output bytes, keeps none.
struct ByteCounter: ByteSink {
    var count: UInt64 = 0
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws { count += UInt64(bytes.count) }
}

extension LockedVault {
    /// Sets a lost or damaged index aside and puts an empty one, paired with the key store, in
    /// its place, so that the next unlock works and `check --repair` rebuilds the rows from the
    /// vault folder (FORMAT.md §5.3). Needs no PIN and destroys nothing: the damaged file (with
    /// its -wal and -shm) is renamed `index.sqlite.damaged-<time>`. Returns that name, or nil
    /// when the index is sound (or there is no vault folder with items to rebuild from).
    public func setAsideDamagedIndex() throws -> String? {
        let store = KeyStore(root: location.keyStoreRoot)
        guard store.exists, let vaultID = try store.vaultID() else { return nil }
        // Only a folder that is a vault folder (its own subfolders or recovery data) gets an index.
        guard looksLikeVaultFolder else { return nil }
        let lock = try FileLock(path: location.lockPath)
        defer { withExtendedLifetime(lock) {} }
        return try setAsideIndex(vaultID: vaultID)
    }

    /// The work of `setAsideDamagedIndex`, under the caller's lock.
    func setAsideIndex(vaultID: ItemID) throws -> String? {
        var aside: String?
        if ProtectedFiles.kind(location.indexPath) != nil {
            // Damaged means SQLite says so (not "busy", not "read-only": those are rethrown).
            let sound: Bool
            do {
                let index = try VaultIndex(path: location.indexPath)
                sound = try index.integrityCheck() == "ok" && index.vaultID() != nil
            } catch let error as Nu11Error where error.code == .corrupted {
                sound = false
            }
            guard !sound else { return nil }
            let target = location.indexPath + ".damaged-\(Int(clock.wallTime()))"
            for suffix in ["-wal", "-shm"] where ProtectedFiles.kind(location.indexPath + suffix) != nil {
                try ProtectedFiles.move(location.indexPath + suffix, to: target + suffix)
            }
            try ProtectedFiles.move(location.indexPath, to: target)
            aside = target
        } else {
            // A deleted index: stale -wal/-shm files must not be applied to the new one.
            for suffix in ["-wal", "-shm"] where ProtectedFiles.kind(location.indexPath + suffix) != nil {
                try ProtectedFiles.move(location.indexPath + suffix, to: location.indexPath + ".lost-\(Int(clock.wallTime()))" + suffix)
            }
            aside = "(none: index.sqlite was missing)"
        }
        let index = try VaultIndex(path: location.indexPath)
        try index.recordVaultID(vaultID)
        return aside
    }
}

extension Maintenance {
    /// A vault made before sidecars (FORMAT.md §5.3): every item of the session's domains
    /// gets its sidecar (with its recovery seal), every album of the primary vault its name
    /// file, once per domain. A failure is a notice; the next unlock goes on.
    func backfillSidecars() {
        guard !index.isReadOnly, let done = try? index.sidecarDomains() else { return }
        let todo = visibleDomains.filter { !done.contains($0) }
        guard !todo.isEmpty else { return }
        do {
            let seals = try index.recoverySeals()
            var written = 0
            for domain in todo {
                for row in try index.items(domains: [domain], limit: nil) where !ProtectedFiles.exists(location.sidecarPath(row.id)) {
                    let meta = try ItemMetadata.open(row, key: metadataKey(row.domain))
                    var withSeal = row
                    withSeal.recovery = row.domain == .vault ? seals[row.id] : nil
                    let itemKey = try keyStore.itemKeyRecord(row.id, domain: row.domain).open(domainKey: domainKey(row.domain))
                    try ProtectedFiles.makeDirectory(location.metaFolder)
                    try ProtectedFiles.writeAtomically(ItemSidecar.seal(row: withSeal, meta: meta, recoverySeal: withSeal.recovery, itemKey: itemKey),
                                                       to: location.sidecarPath(row.id))
                    written += 1
                }
                if domain == .vault {
                    for album in try index.albums(domains: [.vault]) where !ProtectedFiles.exists(location.albumNamePath(album.id)) {
                        try vault.albums.writeAlbumNameFile(album)
                    }
                }
                try index.markSidecarsDone(domain)
            }
            if written > 0 { audit("sidecars written", count: written, detail: "an index made before sidecars: each item's metadata is now also in the vault folder") }
        } catch {
            notice("the items' metadata files (so that a lost index can be rebuilt) could not all be written (\(Vault.describe(error))); the next unlock goes on")
        }
    }
}

extension Maintenance {
    /// A `recover` cut short after its key store was in place (its marker is there): the
    /// index's entries come under the fresh keys from the items' sidecars, files without
    /// entries are adopted, and the marker goes (FORMAT.md §5.2).
    func finishRecover() {
        guard !index.isReadOnly, ProtectedFiles.exists(keyStore.recoveryMarker) else { return }
        do {
            let resealed = try resealFromSidecars(repair: true).count
            let adopted = try adoptOrphans(try contentFiles(), known: Set(try index.allRows().map(\.id)), write: true).rows.count
            try ProtectedFiles.remove(keyStore.recoveryMarker)
            audit("recover finished", count: resealed + adopted, detail: "index entries rebuilt from the items' sidecars after a recovery cut short")
        } catch {
            notice("a recovery cut short could not be finished yet (\(Vault.describe(error))); the next unlock tries again")
        }
    }
}
