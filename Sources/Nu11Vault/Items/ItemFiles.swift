// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Every file of one item in the vault folder: where its row says, where an interrupted
/// album move may have left it, its sealed thumbnail and its sidecar (always the last two). The one place that knows; the
/// key record is the key store's (`KeyStore.itemPath`).
///
/// Existence is tested with `lstat` (a planted symlink is never followed, and is found as
/// a candidate so that shredding removes the link, not its target).
struct ItemFiles: Sendable {
    let location: VaultLocation

    /// Where the row says the file is.
    func expected(_ row: ItemRow) -> String {
        location.path(id: row.id, kind: row.kind, domain: row.domain, album: row.album)
    }

    func thumbnail(_ id: ItemID) -> String { location.thumbnailPath(id) }

    /// Every place the item's files may be. A file of the primary vault may be in Photos or
    /// in any album after an interrupted move; `kind == nil` (an item known only by its ID
    /// and domain, e.g. from the fade schedule) covers every kind.
    func candidates(id: ItemID, kind: ItemKind?, domain: Domain, album: ItemID?) -> [String] {
        var paths: [String] = []
        for kind in kind.map({ [$0] }) ?? ItemKind.allCases {
            paths.append(location.path(id: id, kind: kind, domain: domain, album: album))
            if kind == .file && (domain == .vault || domain == .archive) {
                paths.append(location.path(id: id, kind: .file, domain: domain, album: nil))
                paths += albumFolders().map { $0 + "/\(id.hex).n11" }
            }
        }
        var seen = Set<String>()
        return (paths + [thumbnail(id), location.sidecarPath(id)]).filter { seen.insert($0).inserted }
    }

    func candidates(_ row: ItemRow) -> [String] {
        candidates(id: row.id, kind: row.kind, domain: row.domain, album: row.album)
    }

    /// The item's file: where its row says, or (after an interrupted move) wherever it is.
    func locate(_ row: ItemRow, mainDomain: Domain) throws -> String {
        let expected = expected(row)
        if ProtectedFiles.exists(expected) { return expected }
        if row.kind == .file && row.domain == mainDomain,
           let found = candidates(row).dropLast(2).first(where: ProtectedFiles.exists) {
            return found
        }
        throw Nu11Error(.notFound, "item \(row.id): its file is missing", remedy: .check(reason: nil), item: row.id.hex)
    }

    private func albumFolders() -> [String] {
        ((try? ProtectedFiles.list(location.albumsFolder)) ?? []).map { location.albumsFolder + "/" + $0 }
    }
}

/// The one way an item is destroyed — by a user's delete, a replaced note version, fade
/// expiry (the gate's sweep, the read-time check, a TPM recovery), the duress PIN, a reset
/// backup vault and crash recovery alike. Crypto-shredding: in secure mode every file of the
/// item is first overwritten in place and fsynced; then its key record is destroyed (that is
/// what makes the content unrecoverable); then every file is unlinked (durably) and checked
/// gone. The index row is the caller's: where it goes is each path's commit point.
struct Shredder: Sendable {
    let files: ItemFiles
    let keyStore: KeyStore
    let secure: Bool

    init(_ location: VaultLocation, keyStore: KeyStore, secure: Bool) {
        self.files = ItemFiles(location: location)
        self.keyStore = keyStore
        self.secure = secure
    }

    /// The deletion mode the settings ask for, read without the PIN (the gate runs before
    /// it): a changed file can only turn an overwrite off, never keep a key.
    static func secureMode(_ keyStore: KeyStore) -> Bool {
        ((try? keyStore.loadSettings())?.settings.deletionMode ?? .standard) == .secure
    }

    func shred(_ row: ItemRow) throws {
        try shred(id: row.id, paths: files.candidates(row))
    }

    func shred(id: ItemID, kind: ItemKind?, domain: Domain, album: ItemID?) throws {
        try shred(id: id, paths: files.candidates(id: id, kind: kind, domain: domain, album: album))
    }

    /// Destroys one domain's copy of an item that moves between domains keeping its ID
    /// (`fade set`, `Items.moveDomain`): its key record of that domain, its content files there,
    /// and its thumbnail and sidecar only when their clear headers name that domain (byte 6 of
    /// both, FORMAT.md §2.1, §2.2) — the other domain's copy, under the same ID, stays whole.
    /// The fade sweep destroys expired items this way too, so a deadline left behind by a
    /// cancelled fade never reaches the item that is permanent again.
    func shred(id: ItemID, kind: ItemKind?, onlyIn domain: Domain, album: ItemID?) throws {
        var paths = Array(files.candidates(id: id, kind: kind, domain: domain, album: album).dropLast(2))
        for shared in [files.thumbnail(id), files.location.sidecarPath(id)] where Self.domain(of: shared) == domain {
            paths.append(shared)
        }
        try shred(id: id, paths: paths, keysOf: domain)
    }

    /// The domain a thumbnail or sidecar file names in its clear header (byte 6), nil when
    /// there is no such file or it is too short to say.
    static func domain(of path: String) -> Domain? {
        guard ProtectedFiles.kind(path) == .file, let head = try? ProtectedFiles.readPrefix(path, count: 8), head.count == 8 else {
            return nil
        }
        return Domain(rawValue: head[6])
    }

    private func shred(id: ItemID, paths given: [String], keysOf domain: Domain? = nil) throws {
        // A shared vault's key file for the other devices (FORMAT.md § 9.6) goes with the
        // primary vault's copy (found by `lstat`, which costs no write).
        let keyFile = files.location.sharedKeyPath(id)
        let shared = (domain ?? .vault) == .vault && ProtectedFiles.kind(keyFile) != nil
        var paths = shared ? given + [keyFile] : given
        // Syncthing's partial copies of them (§ 9.6), when there are any: one of the key file
        // holds the item's key, one of the sidecar its name.
        paths += paths.map(SyncthingTemps.partialCopy).filter { ProtectedFiles.kind($0) == .file }
        // First of all: the item is never taken in again from an old copy put back (§ 9.6).
        if shared { try keyStore.recordSharedDeletion(id) }
        if secure {
            for path in paths where ProtectedFiles.kind(path) == .file { try ProtectedFiles.overwrite(path) }
        }
        try keyStore.destroyItemKeys([id], domain: domain)
        // The listing cache holds the dates and IDs of the items it lists: it goes with any
        // deletion (the next full listing writes it again, without this item).
        try keyStore.destroyListingCache()
        // So does an index a repair set aside: it holds the item's name and recovery seal.
        try SetAsideIndexes.destroy(files.location)
        for path in paths {
            try ProtectedFiles.remove(path)
            guard ProtectedFiles.kind(path) == nil else {
                throw Nu11Error(.io, "item \(id): its file \(path) still exists after deletion", item: id.hex)
            }
        }
    }
}

/// Indexes a repair set aside (`index.sqlite.damaged-<time>`, `.lost-<time>-wal`…, FORMAT.md
/// §5.3): kept so nothing is lost at the repair, destroyed (overwritten, then removed) at the
/// next deletion, the duress PIN, the Skeleton Switch and a new phrase — they hold names and
/// recovery seals of items that may be deleted after.
enum SetAsideIndexes {
    static func destroy(_ location: VaultLocation) throws {
        guard let names = try? ProtectedFiles.list(location.vaultRoot) else { return }
        for name in names where name.hasPrefix("index.sqlite.damaged-") || name.hasPrefix("index.sqlite.lost-") {
            let path = location.vaultRoot + "/" + name
            if ProtectedFiles.kind(path) == .file { try ProtectedFiles.overwriteAndRemove(path) }
        }
    }
}
