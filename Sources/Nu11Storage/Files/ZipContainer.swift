// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import ZIPFoundation

/// Writes a ZIP of stored entries next to its destination and publishes it atomically.
public final class ZipWriter {
    public let destination: String
    private let temporaryPath: String
    private var archive: Archive?

    public init(destination: String) throws {
        self.destination = destination
        temporaryPath = POSIX.join(POSIX.parent(of: destination), ProtectedFiles.tempPrefix + Hex.encode(SecureRandom.bytes(8)))
        do {
            archive = try Archive(url: URL(fileURLWithPath: temporaryPath), accessMode: .create, pathEncoding: nil)
        } catch {
            archive = nil
            unlink(temporaryPath)  // ZIPFoundation may have created it before failing
            throw Nu11Error(.io, "\(destination): cannot create the archive: \(Nu11Error.words(error))", remedy: .advice(.checkFolder), item: destination)
        }
        // Still empty here; from now on 0600 whatever the umask.
        guard chmod(temporaryPath, 0o600) == 0 else {
            archive = nil
            unlink(temporaryPath)
            throw POSIX.error("chmod", temporaryPath)
        }
    }

    /// Adds a stored entry of exactly `size` bytes, pulled from `buffer`.
    public func add(_ name: String, size: UInt64, from buffer: PullBuffer) throws {
        guard let archive else { throw Nu11Error(.internalError, "archive closed") }
        do {
            try archive.addEntry(with: name, type: .file, uncompressedSize: Int64(size), modificationDate: Date(timeIntervalSince1970: 315_532_800),
                                 permissions: 0o600, compressionMethod: .none, bufferSize: 1 << 16) { position, count in
                Data(try buffer.read(position: position, size: count))
            }
        } catch let error as Nu11Error {
            throw error
        } catch {
            throw Nu11Error(.io, "\(destination): cannot write the archive: \(Nu11Error.words(error))", remedy: .freeDiskSpace, item: destination)
        }
    }

    public func commit() throws {
        archive = nil  // closes the file
        _ = chmod(temporaryPath, 0o600)
        let fd = open(temporaryPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIX.error("open", temporaryPath) }
        defer { close(fd) }
        try POSIX.fsyncOrThrow(fd, destination)
        try ProtectedFiles.move(temporaryPath, to: destination)
    }

    public func abort() {
        archive = nil
        unlink(temporaryPath)
    }
}

/// Reads a ZIP after checking every entry against the archive rules, before anything is
/// decrypted: only the names this format writes (no traversal, no absolute paths), regular
/// files only (no symlinks or folders), no duplicates, size caps per entry and in total, a
/// compression-ratio cap (zip bombs), and stored entries only.
public final class ZipReader {
    public let path: String
    private let archive: Archive
    public let entries: [String: Entry]

    public init(path: String) throws {
        self.path = path
        guard FileManager.default.fileExists(atPath: path) else {
            throw Nu11Error(.notFound, "\(path): no such file", remedy: .advice(.checkPath), item: path)
        }
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read, pathEncoding: nil)
        } catch {
            // A file that does not even start like a ZIP is something else, not a damaged archive.
            let head = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 4)) ?? nil
            if head != Data([0x50, 0x4B, 0x03, 0x04]) {
                throw Nu11Error(.invalidArgument, "\(path) is not a Nu11VLT archive",
                                remedy: .giveArchiveFile, item: path)
            }
            throw Nu11Error(.corrupted, "\(path) is not a readable archive (damaged or truncated ZIP)",
                            remedy: .advice(.truncated), item: path)
        }
        var seen: [String: Entry] = [:]
        var total: UInt64 = 0
        var count = 0
        for entry in archive {
            count += 1
            let name = entry.path
            guard count <= ArchiveFormat.maxEntries else {
                throw Self.reject(path, "it has more than \(ArchiveFormat.maxEntries) entries")
            }
            if name.hasPrefix("/") || name.hasPrefix("\\") || name.contains(":") {
                throw Self.reject(path, "entry '\(name.prefix(80))' has an absolute path")
            }
            if name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).contains("..") {
                throw Self.reject(path, "entry '\(name.prefix(80))' tries path traversal")
            }
            guard entry.type == .file else {
                throw Self.reject(path, "entry '\(name.prefix(80))' is a \(entry.type == .symlink ? "symlink" : "folder")")
            }
            guard ArchiveFormat.isValidEntryName(name) else {
                throw Self.reject(path, "entry '\(name.prefix(80))' is not part of the format")
            }
            guard seen[name] == nil else { throw Self.reject(path, "entry '\(name)' appears twice") }
            let size = entry.uncompressedSize
            guard size <= ArchiveFormat.maxEntryBytes else { throw Self.reject(path, "entry '\(name)' is over the size limit") }
            total += size
            guard total <= ArchiveFormat.maxTotalBytes else { throw Self.reject(path, "its entries are over the total size limit") }
            if entry.isCompressed {
                if size / max(entry.compressedSize, 1) > ArchiveFormat.maxCompressionRatio {
                    throw Self.reject(path, "entry '\(name)' expands more than \(ArchiveFormat.maxCompressionRatio)× (a zip bomb)")
                }
                throw Self.reject(path, "entry '\(name)' is compressed; Nu11VLT archives store entries uncompressed")
            }
            seen[name] = entry
        }
        entries = seen
    }

    public static func reject(_ path: String, _ why: String) -> Nu11Error {
        Nu11Error(.corrupted, "\(path) is rejected: \(why)", remedy: .advice(.untrusted), item: path)
    }

    /// A small entry, whole (at most `limit` bytes).
    public func read(_ name: String, limit: Int) throws -> [UInt8] {
        guard let entry = entries[name] else {
            throw Self.reject(path, "the entry \(name) is missing")
        }
        guard entry.uncompressedSize <= UInt64(limit) else { throw Self.reject(path, "entry '\(name)' is over the size limit") }
        var out = [UInt8]()
        try stream(name) { out.append(contentsOf: $0) }
        return out
    }

    /// Streams an entry's bytes; never more than its declared size.
    public func stream(_ name: String, _ consumer: (Data) throws -> Void) throws {
        guard let entry = entries[name] else { throw Self.reject(path, "the entry \(name) is missing") }
        var received: UInt64 = 0
        do {
            _ = try archive.extract(entry, bufferSize: 1 << 16, skipCRC32: false) { data in
                received += UInt64(data.count)
                guard received <= entry.uncompressedSize else {
                    throw Self.reject(path, "entry '\(name)' is longer than declared")
                }
                try consumer(data)
            }
        } catch let error as Nu11Error {
            throw error
        } catch {
            throw Nu11Error(.corrupted, "\(path): entry \(name) cannot be read (damaged or truncated)", remedy: .advice(.damaged), item: path)
        }
    }
}
