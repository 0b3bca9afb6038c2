// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CNu11Sys
import Nu11Format

/// Files and folders the way every byte of Nu11VLT is written: folders 0700 and files 0600
/// whatever the umask (modes are set with fchmod after creation, not left to the umask),
/// and atomic replacement — temp file in the same folder, fsync, rename, fsync the folder —
/// so that a crash leaves either the old or the new content, never a mix.
public enum ProtectedFiles {
    /// Name prefix of temp files; the repairing check removes leftovers with it.
    public static let tempPrefix = ".n11tmp-"

    /// Creates `path` and any missing parents as 0700 folders; tightens an existing one.
    /// Never follows a symlink: a link where a folder should be is refused. Every failure
    /// (including the fsync that makes a new folder durable) is reported.
    public static func makeDirectory(_ path: String) throws {
        switch POSIX.fileType(path) {
        case S_IFDIR?:
            var st = stat()
            if stat(path, &st) == 0 && st.st_mode & 0o777 == 0o700 { return }  // nothing to write (read-only disks)
            guard chmod(path, 0o700) == 0 else { throw POSIX.error("chmod", path) }
            return
        case nil:
            break
        default:
            throw Nu11Error(.io, "\(path) should be a folder but is a symlink or a file; nothing was written there",
                            remedy: .advice(.moveAway), item: path)
        }
        let parent = POSIX.parent(of: path)
        if parent != path && !POSIX.exists(parent) { try makeDirectory(parent) }
        if mkdir(path, 0o700) != 0 {
            guard errno == EEXIST, POSIX.fileType(path) == S_IFDIR else { throw POSIX.error("create folder", path) }
        }
        guard chmod(path, 0o700) == 0 else { throw POSIX.error("chmod", path) }
        try POSIX.syncDirectory(parent)
    }

    /// Removes an empty folder and makes the removal durable; a missing folder is fine.
    public static func removeDirectory(_ path: String) throws {
        if rmdir(path) != 0 {
            if errno == ENOENT { return }
            throw POSIX.error("remove folder", path)
        }
        try POSIX.syncDirectory(POSIX.parent(of: path))
    }

    /// What is at `path`, without following a symlink.
    public enum Kind: Sendable { case file, directory, symlink, other }
    public static func kind(_ path: String) -> Kind? {
        switch POSIX.fileType(path) {
        case nil: nil
        case S_IFREG?: .file
        case S_IFDIR?: .directory
        case S_IFLNK?: .symlink
        default: .other
        }
    }

    /// Replaces `path` with `bytes` atomically and durably. `plaintext`: decrypted bytes
    /// outside the vault, written through an unnamed temp file (see `AtomicFileWriter`).
    public static func writeAtomically(_ bytes: [UInt8], to path: String, plaintext: Bool = false) throws {
        let writer = try AtomicFileWriter(destination: path, plaintext: plaintext)
        do {
            var sink = writer.sink
            try sink.write(bytes)
            try writer.commit()
        } catch {
            writer.abort()
            throw error
        }
    }

    /// `fd` (opened O_NONBLOCK, so a FIFO did not block the open) when it is a regular file, set
    /// back to blocking; else it is closed and the error says what was put in the file's place.
    public static func requireRegular(_ fd: Int32, _ path: String) throws -> Int32 {
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw Nu11Error(.corrupted, "\(path) is not a regular file (a pipe, device or folder put in its place)",
                            remedy: .advice(.untrusted), item: path)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// Reads a whole (small) file. Refuses anything but a regular file.
    public static func read(_ path: String, limit: Int = 1 << 20) throws -> [UInt8] {
        let fd = try POSIX.openRegular(path)
        defer { close(fd) }
        let size = try POSIX.fileSize(fd, path)
        guard size <= UInt64(limit) else {
            throw Nu11Error(.corrupted, "\(path) is larger than expected (\(size) bytes)", item: path)
        }
        return try readUpTo(fd, Int(size), path)
    }

    /// The first `count` bytes of a file (fewer when it is shorter). Refuses anything but a regular file.
    public static func readPrefix(_ path: String, count: Int) throws -> [UInt8] {
        let fd = try POSIX.openRegular(path)
        defer { close(fd) }
        return try readUpTo(fd, count, path)
    }

    /// Up to `count` bytes from `fd`'s position (fewer at its end).
    private static func readUpTo(_ fd: Int32, _ count: Int, _ path: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var stream = FileDescriptorStream(fd: fd, label: path)
        let n = try bytes.withUnsafeMutableBytes { buffer -> Int in
            var filled = 0
            while filled < buffer.count {
                let got = try stream.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                if got == 0 { break }
                filled += got
            }
            return filled
        }
        return Array(bytes.prefix(n))
    }

    /// Removes a file and makes the removal durable. Missing files are not an error.
    public static func remove(_ path: String) throws {
        if unlink(path) != 0 {
            if errno == ENOENT { return }
            throw POSIX.error("remove", path)
        }
        try POSIX.afterEffect { try POSIX.syncDirectory(POSIX.parent(of: path)) }
    }

    /// Overwrites a file in place with random bytes, fsyncs, then removes it and checks it is
    /// gone. On SSDs and copy-on-write file systems the overwrite may land elsewhere; see
    /// docs/THREAT-MODEL.md — destroying the key is what really protects the content.
    public static func overwriteAndRemove(_ path: String) throws {
        try overwrite(path)
        try remove(path)
        guard !POSIX.exists(path) else {
            throw Nu11Error(.io, "\(path) still exists after secure deletion", item: path)
        }
    }

    /// Unlinks a file without syncing its folder: for a batch whose caller syncs once after.
    public static func unlinkOnly(_ path: String) throws {
        if unlink(path) != 0 && errno != ENOENT { throw POSIX.error("remove", path) }
    }

    /// Overwrites a file in place with random bytes and fsyncs it (the file stays); without
    /// `sync`, the caller syncs a whole batch at once.
    public static func overwrite(_ path: String, sync: Bool = true) throws {
        let fd = try POSIX.openFile(path, O_WRONLY | O_NOFOLLOW)
        try overwrite(fd: fd, path, sync: sync)
    }

    /// Replaces `path` with `bytes` like `writeAtomically`, then overwrites the replaced
    /// file's own bytes with random ones and syncs them: the old version of a file that holds
    /// secrets (recovery.n11r: domain keys sealed to the recovery phrase) is not left on the
    /// disk after the rename unlinks it. The old file is reached through a descriptor opened
    /// before the rename, so the replacement stays atomic; a crash between the two leaves the
    /// new file in place and the old blocks unlinked but not overwritten. (On SSDs and
    /// copy-on-write file systems the overwrite may land elsewhere; see docs/THREAT-MODEL.md.)
    public static func replaceShredding(_ bytes: [UInt8], at path: String) throws {
        let old = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if old < 0 && errno != ENOENT { throw POSIX.error("open", path) }
        var info = stat()
        let regular = old >= 0 && fstat(old, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        if old >= 0 && !regular { close(old) }
        do {
            try writeAtomically(bytes, to: path)
        } catch {
            if regular { close(old) }
            throw error
        }
        // The new file is in place: an error now took effect (the caller may report it as such).
        if regular { try POSIX.afterEffect { try overwrite(fd: old, path, sync: true) } }
    }

    /// Overwrites the file open as `fd` with random bytes (syncs if asked) and closes `fd`.
    private static func overwrite(fd: Int32, _ path: String, sync: Bool) throws {
        do {
            let size = try POSIX.fileSize(fd, path)
            var stream = FileDescriptorStream(fd: fd, label: path)
            var remaining = size
            var block = [UInt8](repeating: 0, count: 1 << 16)
            while remaining > 0 {
                let n = Int(min(UInt64(block.count), remaining))
                block.withUnsafeMutableBytes { buffer in
                    let random = SecureRandom.bytes(n)
                    random.withUnsafeBytes { buffer.copyMemory(from: $0) }
                }
                try block.withUnsafeBytes { try stream.write(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                remaining -= UInt64(n)
            }
            if sync { try POSIX.fsyncOrThrow(fd, path) }
            close(fd)
        } catch {
            close(fd)
            throw error
        }
    }

    /// Writes `bytes` over a file's own bytes at `offset`, in place (the old bytes overwritten
    /// where they were), and syncs. The range must lie inside the file.
    public static func patch(_ path: String, at offset: UInt64, bytes: [UInt8]) throws {
        let fd = try POSIX.openFile(path, O_WRONLY | O_NOFOLLOW)
        defer { close(fd) }
        guard offset + UInt64(bytes.count) <= (try POSIX.fileSize(fd, path)) else {
            throw Nu11Error(.corrupted, "\(path) is shorter than expected", item: path)
        }
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard written == bytes.count else { throw SystemIO.error("pwrite", item: path) }
        try POSIX.fsyncOrThrow(fd, path)
    }

    /// Removes temp files (`.n11tmp-*`) an interrupted command left in `folder` (not
    /// recursive). The caller holds the vault lock, so no writer is using them. Returns what
    /// could not be removed.
    public static func removeLeftovers(in folder: String) -> [String] {
        guard let names = try? list(folder) else { return [] }
        var failed: [String] = []
        for name in names where name.hasPrefix(tempPrefix) {
            let path = POSIX.join(folder, name)
            do { try remove(path) } catch { failed.append(path) }
        }
        return failed
    }

    /// Removes the temp files (`.n11tmp-*`) that writers of plaintext (`AtomicFileWriter(…,
    /// plaintext: true)`, on a file system without unnamed files) left in `folder` when they
    /// were killed: a writer at work holds its file's lock, so only abandoned ones go, and a
    /// temp file of an older version (never locked) goes too. The next export into a folder
    /// runs it, so no decrypted item stays behind there. Returns how many were removed.
    @discardableResult
    public static func removeAbandonedTemps(in folder: String) -> Int {
        guard let names = try? list(folder) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(tempPrefix) {
            let path = POSIX.join(folder, name)
            guard kind(path) == .file else { continue }
            let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            if nu11_try_lock(fd) == 0 && unlink(path) == 0 { removed += 1 }
        }
        if removed > 0 { try? POSIX.syncDirectory(folder) }
        return removed
    }

    /// The same, in the folder that holds `path` (a file about to be exported).
    @discardableResult
    public static func removeAbandonedTemps(besideFile path: String) -> Int { removeAbandonedTemps(in: POSIX.parent(of: path)) }

    /// `removeLeftovers` over many folders, skipping each folder whose modification time is
    /// the one recorded in `stampFile` after its last clean sweep (a folder of 100,000 items
    /// costs a stat, not a listing). A temp file created since changes the folder's time, so
    /// it is always found. The stamp is a cache: lost or stale, the folders are listed again.
    public static func removeLeftovers(in folders: [String], stampFile: String) -> [String] {
        func mtime(_ path: String) -> String? {
            var st = stat()
            guard lstat(path, &st) == 0 else { return nil }
            return "\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
        }
        var stamps: [String: String] = [:]
        if let text = try? String(contentsOfFile: stampFile, encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 1)
                if parts.count == 2 { stamps[String(parts[1])] = String(parts[0]) }
            }
        }
        var failed: [String] = []
        var clean: [String: String] = [:]
        for folder in folders {
            guard let before = mtime(folder) else { continue }
            if stamps[folder] == before {
                clean[folder] = before
                continue
            }
            let stuck = removeLeftovers(in: folder)
            failed += stuck
            // Stamp the time after the sweep (removing a leftover changed it).
            if stuck.isEmpty, let after = mtime(folder) { clean[folder] = after }
        }
        var bytes = Array(clean.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)\n" }.joined().utf8)
        // Padded to a fixed size (blank lines) so the file says nothing about which folders
        // exist (a key store with a backup PIN looks like one without).
        bytes += [UInt8](repeating: 0x0A, count: (8192 - bytes.count % 8192) % 8192)
        if clean != stamps {
            // Best effort: failing to record a sweep only means one more listing next time.
            try? writeAtomically(bytes, to: stampFile)
        }
        return failed
    }

    /// Renames within one file system, durably (both folders are synced).
    public static func move(_ from: String, to: String) throws {
        guard rename(from, to) == 0 else { throw POSIX.error("move", from) }
        try POSIX.afterEffect {
            try POSIX.syncDirectory(POSIX.parent(of: to))
            if POSIX.parent(of: from) != POSIX.parent(of: to) { try POSIX.syncDirectory(POSIX.parent(of: from)) }
        }
    }

    public static func exists(_ path: String) -> Bool { POSIX.exists(path) }

    /// syncfs(2): every dirty page of the file system holding `path` reaches the disk.
    public static func syncFileSystem(_ path: String) throws {
        guard nu11_syncfs(path) == 0 else { throw POSIX.error("sync", path) }
    }

    /// syncfs once per file system among `paths` (a vault and its key store usually share one).
    public static func syncFileSystems(_ paths: [String]) throws {
        var seen: [dev_t] = []
        for path in paths {
            var st = stat()
            if stat(path, &st) == 0 {
                if seen.contains(st.st_dev) { continue }
                seen.append(st.st_dev)
            }
            try syncFileSystem(path)
        }
    }

    public static func isDirectory(_ path: String) -> Bool { POSIX.isDirectory(path) }

    /// Names in a folder (not recursive), without "." and "..".
    public static func list(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw POSIX.error("list", path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
