// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Nu11Format
import Nu11Storage

/// What a received age file held, and what became of it.
public struct ShareImportReport: Sendable {
    public let imported: [ItemSummary]
    /// Entries left out as duplicates of items already here.
    public let duplicates: [(name: String, match: DuplicateFinder.Match)]
    /// Entries that were not regular files (folders excepted): links, devices.
    public let skipped: Int
    public let wasPassphrase: Bool
}

/// Receiving: an age file sent to this vault (or made with `age -p`) is decrypted and its
/// items imported, all or nothing. A tar is unpacked into its regular files (names, dates);
/// anything else is one item under the file's name without ".age". Every item is staged
/// (encrypted into a temp file) as the age stream is read; only when the stream ended with
/// its authenticated final chunk and nothing after it are they committed, at one commit
/// point. A damaged, cut or altered file imports nothing.
extension Sharing {
    /// Whether the file at `path` is an age file: named `*.age`, and an age header (binary or
    /// armored) in its first bytes. Other files are not opened here (an import opens each of
    /// its files once).
    public static func isAgeFile(_ path: String) -> Bool {
        guard path.lowercased().hasSuffix(".age") else { return false }
        guard let fd = try? ImportSource.openRegularFile(path) else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 64)
        var stream = FileDescriptorStream(fd: fd, label: path)
        guard let n = try? head.withUnsafeMutableBytes({ try stream.readFully(into: $0) }) else { return false }
        let text = head[..<n].drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        return text.starts(with: Array("age-encryption.org/".utf8)) || text.starts(with: Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8))
    }

    /// Imports the age file at `path`. `passphrase` is asked only for a passphrase file;
    /// `keepDuplicate` (when given) decides for each entry whose content is already in the
    /// vault, after the whole file checked out and before anything is committed.
    public func importShare(from path: String, album: String? = nil, passphrase: () throws -> SecretBytes,
                            keepDuplicate: ((String, DuplicateFinder.Match) -> Bool)? = nil,
                            progress: (Int, UInt64) throws -> Void = { _, _ in }) throws -> ShareImportReport {
        let fd = try ImportSource.openRegularFile(path)
        defer { close(fd) }
        let (domain, targetAlbum) = try vault.items.importTarget(album: album, fade: nil)
        let source: AgeDecryptingSource
        do {
            let identities = try allIdentities()
            source = try withoutActuallyEscaping(passphrase) { ask in
                try AgeDecryptingSource(FileDescriptorStream(fd: fd, label: path), identities: identities, passphrase: ask)
            }
        } catch let error as Nu11Error {
            throw error.about(path)
        }
        var staged: [StagedItem] = []
        var digests: [[UInt8]] = []
        var committed = false
        defer { if !committed { for item in staged { item.abortFiles() } } }
        var bytes: UInt64 = 0
        let tar = ShareTarReader(source)
        let skipped: Int
        do {
            if try tar.isTar() {
                while let entry = try tar.next() {
                    try progress(staged.count, bytes)
                    let digest = DigestBox()
                    let item = try vault.items.stage(DigestingSource(base: tar.content(), digest: digest), name: entry.name,
                                                     kind: .file, domain: domain, album: targetAlbum, fadeDeadline: nil,
                                                     modified: entry.modified)
                    staged.append(item)
                    digests.append(digest.digest.finalize())
                    bytes += item.meta.size
                }
            } else {
                // Not a tar (e.g. `age -p photo.jpg`): one item, named after the file.
                let name = Self.plainName(path)
                let digest = DigestBox()
                let item = try vault.items.stage(DigestingSource(base: tar.rest(), digest: digest), name: name, kind: .file,
                                                 domain: domain, album: targetAlbum, fadeDeadline: nil)
                staged.append(item)
                digests.append(digest.digest.finalize())
                bytes += item.meta.size
            }
            skipped = tar.skipped
        } catch let error as Nu11Error {
            throw AgeFailure.of(error) == nil ? error : error.about(path)
        }
        try progress(staged.count, bytes)
        // The whole file checked out. Duplicates are decided now, before the commit.
        var duplicates: [(name: String, match: DuplicateFinder.Match)] = []
        if let keepDuplicate {
            let finder = try DuplicateFinder(vault)
            var kept: [StagedItem] = []
            for (item, digest) in zip(staged, digests) {
                if let match = finder.match(size: item.meta.size, digest: digest), !keepDuplicate(item.meta.name, match) {
                    item.abortFiles()
                    duplicates.append((item.meta.name, match))
                } else {
                    kept.append(item)
                }
            }
            staged = kept
        }
        try vault.items.commit(&staged)
        committed = true
        audit("share import", count: staged.count, items: staged.map(\.row.id),
              detail: source.wasPassphrase ? "passphrase" : "identity")
        let names = try vault.albums.albumNames()
        let imported = staged.map { vault.items.summary(row: $0.row, meta: $0.meta, albumName: $0.row.album.flatMap { names[$0] }) }
        return ShareImportReport(imported: imported, duplicates: duplicates, skipped: skipped, wasPassphrase: source.wasPassphrase)
    }

    static func plainName(_ path: String) -> String {
        let last = PathName.last(path)
        for suffix in [".age", ".AGE"] where last.hasSuffix(suffix) && last.count > suffix.count {
            return String(last.dropLast(suffix.count))
        }
        return last
    }
}

/// Hashes what is read through it (for the duplicate check), so the content is read once.
final class DigestBox { var digest = ContentDigest() }

struct DigestingSource<Base: ByteSource>: ByteSource {
    var base: Base
    let digest: DigestBox

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try base.read(into: buffer)
        try digest.digest.write(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
        return n
    }
}
