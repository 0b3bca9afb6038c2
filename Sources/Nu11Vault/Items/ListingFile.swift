// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// The gallery's listing cache kept across sessions (`listing.n11g` in the key store,
/// FORMAT.md §4.6b), so that the first listing after an unlock opens only the sealed
/// records that changed since the last one instead of every record: at 100,000 items that
/// is the difference between opening 100,000 records and none.
///
/// Only the primary vault's own domain (Vault) is kept: never Fade items (their dates must
/// not outlive their shredding), never a backup vault's (the file would tell that a backup
/// PIN is in use). An entry is used only while the row holds the very record it was read
/// from, in the same album (`ListingCache`), so the file can make a listing slower, never
/// wrong. Any deletion removes the file (`Shredder`): a deleted item's date and ID do not
/// stay in it. A file that is absent, of another version, or does not open (another key
/// after a rotation, damage) is rebuilt by the next full listing.
enum ListingFile {
    static let magic = Array("N11G".utf8)
    static let version: UInt8 = 2
    static let header = magic + [version, 0, 0, 0]
    static let entrySize = 16 + 16 + 1 + 16 + 8 + 1 + 16 + 1
    /// 64 MiB: far more than a million entries.
    static let limit = 64 << 20
    /// A folder import of at least this many items writes their entries into the file at once
    /// (`Items.extendListingFile`); after a smaller one, the next listing opens the few records.
    static let extendAfter = 1000

    struct Entry: Equatable {
        var id: ItemID
        var tag: RecordTag
        var album: ItemID?
        var facts: ItemMetadata.ListingFacts
    }

    static func key(_ vaultKey: SecretBytes) -> SecretBytes { Subkey.derive(from: vaultKey, purpose: "listing cache") }

    static func encode(_ entries: [Entry]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4 + entries.count * entrySize)
        withUnsafeBytes(of: UInt32(entries.count).littleEndian) { out += $0 }
        for e in entries {
            out += e.id.bytes
            out += e.tag.bytes
            out += [e.album == nil ? 0 : 1] + (e.album?.bytes ?? [UInt8](repeating: 0, count: 16))
            withUnsafeBytes(of: e.facts.date.bitPattern.littleEndian) { out += $0 }
            out += [e.facts.motion == nil ? 0 : 1] + (e.facts.motion?.bytes ?? [UInt8](repeating: 0, count: 16))
            out.append(e.facts.media.rawValue)
        }
        return out
    }

    static func decode(_ plain: [UInt8]) throws -> [Entry] {
        func damaged() -> Nu11Error { Nu11Error(.corrupted, "the listing cache is malformed") }
        guard plain.count >= 4 else { throw damaged() }
        let count = Int(UInt32(plain[0]) | UInt32(plain[1]) << 8 | UInt32(plain[2]) << 16 | UInt32(plain[3]) << 24)
        guard plain.count == 4 + count * entrySize else { throw damaged() }
        var out: [Entry] = []
        out.reserveCapacity(count)
        var at = 4
        func take(_ n: Int) -> ArraySlice<UInt8> {
            defer { at += n }
            return plain[at ..< at + n]
        }
        func optionalID() throws -> ItemID? {
            let flag = take(1).first
            let bytes = take(16)
            switch flag {
            case 0: return nil
            case 1: return try ItemID(bytes: bytes)
            default: throw damaged()
            }
        }
        for _ in 0..<count {
            let id = try ItemID(bytes: take(16))
            let tag = RecordTag(take(16))
            let album = try optionalID()
            var bits: UInt64 = 0
            for (i, b) in take(8).enumerated() { bits |= UInt64(b) << (8 * UInt64(i)) }
            let motion = try optionalID()
            guard let media = take(1).first.flatMap(MediaKind.init(rawValue:)) else { throw damaged() }
            out.append(Entry(id: id, tag: tag, album: album, facts: .init(date: Double(bitPattern: bits), motion: motion, media: media)))
        }
        return out
    }

    static func seal(_ entries: [Entry], key: SecretBytes) throws -> [UInt8] {
        var plain = encode(entries)
        defer { secureZero(&plain) }
        return header + (try SmallSeal.seal(plain, key: key, associatedData: header))
    }

    /// The entries, or nil where the file is absent, of another version, or does not open.
    static func open(_ bytes: [UInt8], key: SecretBytes) -> [Entry]? {
        guard bytes.count > header.count, bytes.prefix(header.count).elementsEqual(header) else { return nil }
        guard var plain = try? SmallSeal.open(Array(bytes[header.count...]), key: key, associatedData: header) else { return nil }
        defer { secureZero(&plain) }
        return try? decode(plain)
    }
}

extension Items {
    /// Fills the session's listing cache from the file, once per session (primary PIN only).
    func loadListingFile() {
        guard !vault.listingFileRead else { return }
        vault.listingFileRead = true
        guard vault.role == .primary else { return }
        let path = keyStore.listingCachePath
        guard ProtectedFiles.kind(path) == .file else { return }
        // A cache: unreadable, it is rebuilt (the listing opens every record, as without it).
        guard let bytes = try? ProtectedFiles.read(path, limit: ListingFile.limit),
              let key = try? ListingFile.key(vault.domainKey(.vault)),
              let entries = ListingFile.open(bytes, key: key) else { return }
        vault.listingCache.restore(entries)
        vault.listingFileEntries = entries.count
    }

    /// After a folder import of at least `ListingFile.extendAfter` items of the vault's own
    /// domain (a library brought in), their entries join the file at once, from the records
    /// this session just sealed (`ListingCache.learn`): the gallery's first listing after the
    /// next unlock then opens none of them (100,000 photos: 570 ms before, 130 ms after).
    /// Only rows the index holds now are written, as after a listing, so a deleted item's
    /// entry never comes back.
    func extendListingFile(added: Int) {
        guard vault.role == .primary, added >= ListingFile.extendAfter else { return }
        loadListingFile()
        guard let rows = try? index.listingRows(domains: [.vault], kind: .file) else { return }
        saveListingFile(rows, opened: added)
    }

    /// Writes the file after a full listing of the primary vault that found it stale: records
    /// were opened, or it holds entries for items no longer there. `rows`: the listing's rows.
    func saveListingFile(_ rows: [ListingRow], opened: Int) {
        guard vault.role == .primary else { return }  // never a backup vault's: it would tell one is in use
        let kept = rows.filter { $0.domain == .vault }
        guard opened > 0 || vault.listingFileEntries != kept.count || ProtectedFiles.kind(keyStore.listingCachePath) != .file else { return }
        let entries = kept.compactMap { vault.listingCache.entry($0) }
        guard let key = try? ListingFile.key(vault.domainKey(.vault)), let sealed = try? ListingFile.seal(entries, key: key) else { return }
        // A cache: a key store that cannot be written (read-only, full) keeps listing without it.
        do {
            try ProtectedFiles.writeAtomically(sealed, to: keyStore.listingCachePath)
            vault.listingFileEntries = entries.count
        } catch {
            return
        }
    }
}
