// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Duplicate detection for imports (`import --skip-duplicates`, or the question at a
/// terminal). Nothing is stored for it: the sizes come from the sealed metadata, and a file of
/// the same size as an item is compared by SHA-256 with the item's decrypted content. Each
/// item's digest is computed once per command and kept in memory only, so an import of N files
/// over M same-size items decrypts each item at most once (not N times): a retry of 1,000
/// small files is seconds, not minutes — and no content hash sits in the vault to tell equal
/// files apart.
public final class DuplicateFinder {
    let vault: Vault
    let bySize: [UInt64: [(row: ItemRow, name: String)]]
    /// Digests of items already decrypted by this command; nil: damaged or expired (never a duplicate).
    private var digests: [ItemID: [UInt8]?] = [:]

    /// What a duplicate was found as.
    public struct Match: Sendable {
        public let id: String
        public let name: String
    }

    /// Opens the metadata of every item this PIN sees (once per import command).
    public init(_ vault: Vault) throws {
        self.vault = vault
        var bySize: [UInt64: [(ItemRow, String)]] = [:]
        var cursor: Int64 = 0
        while true {
            let page = try vault.visibleRows(kind: .file, afterSeq: cursor, limit: 1000)
            for row in page {
                guard let meta = try? ItemMetadata.open(row, key: vault.metadataKey(row.domain)) else { continue }
                bySize[meta.size, default: []].append((row, meta.name))
            }
            guard page.count == 1000, let last = page.last else { break }
            cursor = last.seq
        }
        self.bySize = bySize
    }

    /// The item whose content equals the file at `path`, if any.
    public func match(_ path: String) throws -> Match? {
        let fd = try ImportSource.openRegularFile(path)
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, bySize[UInt64(st.st_size)] != nil else { return nil }
        var digest = ContentDigest()
        var stream = FileDescriptorStream(fd: fd, label: path)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        defer { secureZero(&buffer) }
        while true {
            let n = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
            if n == 0 { break }
            try buffer.withUnsafeBytes { try digest.write(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
        return match(size: UInt64(st.st_size), digest: digest.finalize())
    }

    /// The item of this size whose content has this digest (`ContentDigest`), if any.
    public func match(size: UInt64, digest wanted: [UInt8]) -> Match? {
        for (row, name) in bySize[size] ?? [] where itemDigest(row) == wanted {
            return Match(id: row.id.hex, name: name)
        }
        return nil
    }

    private func itemDigest(_ row: ItemRow) -> [UInt8]? {
        if let known = digests[row.id] { return known }
        var sink = ContentDigest()
        // A damaged or expired candidate is not a duplicate (check reports it).
        let digest: [UInt8]? = (try? vault.items.export(row, to: &sink)) == nil ? nil : sink.finalize()
        digests[row.id] = digest
        return digest
    }
}
