// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Duplicate detection for imports (`import --skip-duplicates`, or the question at a
/// terminal). Nothing is stored for it: the sizes come from the sealed metadata, and a
/// file of the same size as an item is compared byte for byte with the item's decrypted
/// content, so no content hash sits in the vault to tell equal files apart.
public struct DuplicateFinder {
    let vault: Vault
    let bySize: [UInt64: [(row: ItemRow, name: String)]]

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
        guard fstat(fd, &st) == 0, let candidates = bySize[UInt64(st.st_size)] else { return nil }
        for (row, name) in candidates {
            guard lseek(fd, 0, SEEK_SET) == 0 else { throw Nu11Error(.io, "\(path): cannot read it again", item: path) }
            var sink = ComparingSink(fd: fd)
            do {
                _ = try vault.items.export(row, to: &sink)
                if try sink.atEnd() { return Match(id: row.id.hex, name: name) }
            } catch is ComparingSink.Differs {
                continue
            } catch {
                continue  // a damaged or expired candidate is not a duplicate (check reports it)
            }
        }
        return nil
    }
}

/// Compares what is written with a file's bytes; stops at the first difference.
struct ComparingSink: ByteSink {
    struct Differs: Error {}
    let fd: Int32
    var buffer = [UInt8](repeating: 0, count: 65536)

    init(fd: Int32) { self.fd = fd }

    mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let want = min(buffer.count, bytes.count - offset)
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, want) }
            let same = n > 0 && buffer.withUnsafeBytes { mine in
                zip(mine.prefix(n), bytes[offset..<(offset + n)]).allSatisfy { $0 == $1 }
            }
            guard same else {
                secureZero(&buffer)
                throw Differs()
            }
            offset += n
        }
    }

    /// Whether the file has nothing left after what was compared.
    mutating func atEnd() throws -> Bool {
        defer { secureZero(&buffer) }
        return buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, 1) } == 0
    }
}
