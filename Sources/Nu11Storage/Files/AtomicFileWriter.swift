// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CNu11Sys
import Nu11Format

/// Writes a new file next to its destination and publishes it atomically on `commit()`.
/// Until then the destination is untouched; `abort()` (or a crash) leaves only a temp file
/// that the repairing check removes.
public final class AtomicFileWriter {
    public let destination: String
    public let temporaryPath: String
    private var fd: Int32
    private var done = false
    private var prepared = false
    /// The temp file is removed by the signal handler if the process is interrupted.
    private var cleanupSlot: Int32
    /// Set before `prepare` to give the file this modification time (an export restores
    /// the original's).
    public var modificationTime: Double?  // seconds since 1970
    /// False: `publish` refuses (`.alreadyExists`) when the destination exists by then,
    /// without touching it; the check and the rename are one step (RENAME_NOREPLACE).
    public var replaceExisting = true
    /// How `prepare` made the file durable (fixed there; `publish` follows it).
    public private(set) var durability: Durability = .immediate

    /// When a written file becomes durable.
    public enum Durability: Sendable {
        /// fsync of the file before the rename, fsync of its folder after.
        case immediate
        /// The caller syncs the whole batch (syncfs) before publishing and after.
        case batched
    }

    /// A writer of plaintext outside the vault (an export): its temp file is unnamed
    /// (O_TMPFILE) where the file system allows, so a process killed while writing leaves
    /// nothing behind; elsewhere it is a named temp file locked (flock) while it is written,
    /// which `removeAbandonedTemps` (run by the next export into that folder) removes once
    /// no writer holds it.
    private let plaintext: Bool
    /// The temp file has no name (O_TMPFILE): `publish` links it in.
    private var unnamed = false

    public init(destination: String, plaintext: Bool = false) throws {
        self.destination = destination
        self.plaintext = plaintext
        let dir = POSIX.parent(of: destination)
        temporaryPath = POSIX.join(dir, ProtectedFiles.tempPrefix + Hex.encode(SecureRandom.bytes(8)))
        if plaintext {
            let anonymous = nu11_open_unnamed(dir)
            if anonymous >= 0 {
                fd = anonymous
                unnamed = true
                cleanupSlot = -1
                guard fchmod(fd, 0o600) == 0 else {
                    let error = POSIX.error("chmod", temporaryPath)
                    close(fd)
                    (fd, done) = (-1, true)  // nothing left for `deinit` to close
                    throw error
                }
                return
            }
            guard errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL else {
                throw POSIX.error("create a file in", dir)
            }
        }
        cleanupSlot = nu11_cleanup_register(temporaryPath)
        let tempPath = temporaryPath
        fd = SystemIO.retrying { open(tempPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        guard fd >= 0 else {
            let code = errno
            nu11_cleanup_unregister(cleanupSlot)
            // The temp file's random name means nothing to the user: the folder is named.
            var error = POSIX.error("create a file in", dir, code: code)
            if !error.diskFull { error.message = "\(dir): cannot create a file in this folder: \(String(cString: strerror(code)))" }
            done = true  // nothing left for `deinit` to close or unlink
            throw error
        }
        guard fchmod(fd, 0o600) == 0, !plaintext || nu11_lock(fd) == 0 else {
            nu11_cleanup_unregister(cleanupSlot)
            let error = POSIX.error(plaintext ? "lock" : "chmod", temporaryPath)
            close(fd)
            unlink(temporaryPath)
            (fd, done) = (-1, true)  // nothing left for `deinit` to close or unlink
            throw error
        }
    }

    /// Where to stream the content.
    public var sink: FileDescriptorStream {
        var stream = FileDescriptorStream(fd: fd, label: destination)
        stream.startWriteback = { _ = nu11_start_writeback($0) }  // a hint (see `prepare`)
        return stream
    }

    public func commit() throws {
        try prepare(.immediate)
        try publish()
    }

    /// Makes the temp file durable now (`.immediate`), or leaves that to the caller's one
    /// `syncfs` for a whole batch (`.batched`), and closes it; the destination is still
    /// untouched. The choice is made once, here: `publish` follows it, so a file prepared
    /// for a batch can never be published as if it were durable on its own.
    /// The size from which a batched file's writeback starts when it is prepared.
    static let writebackThreshold = 256 << 10

    /// `size`: the bytes written, when the caller knows them (saves asking the file).
    public func prepare(_ durability: Durability = .immediate, size: UInt64? = nil) throws {
        guard !prepared else { return }
        do {
            if let modificationTime {
                let seconds = modificationTime.rounded(.down)
                let nanos = Int((modificationTime - seconds) * 1e9)
                let stamp = timespec(tv_sec: Int(seconds), tv_nsec: nanos)
                var times = [stamp, stamp]
                guard futimens(fd, &times) == 0 else { throw POSIX.error("set the modification time of", destination) }
            }
            if durability == .immediate { try POSIX.fsyncOrThrow(fd, destination) }
            // A batched file of some size: its writeback starts now, while the batch's next
            // files are encrypted, so that the batch's syncfs finds it mostly written. Only a
            // hint: it waits for nothing, and the syncfs reports any write error (its result is
            // moot). Small files are left to the syncfs, which writes them out together (one
            // writeback each costs more than it saves: 3000 × 16 KiB took 1.1–1.9 s with it,
            // 0.7 s without).
            if durability == .batched {
                var info = stat()
                let written = size ?? (fstat(fd, &info) == 0 ? UInt64(info.st_size) : 0)
                if written >= UInt64(Self.writebackThreshold) { _ = nu11_start_writeback(fd) }
            }
            // A plaintext writer keeps its descriptor (and its lock, or the unnamed file's only
            // reference) until `publish` has linked or renamed it into place.
            if !plaintext {
                guard close(fd) == 0 else { throw POSIX.error("close", destination) }
                fd = -1
            }
            prepared = true
            self.durability = durability
        } catch {
            abort()
            throw error
        }
    }

    /// Renames the prepared file into place; with `.immediate` (the default, and what an
    /// unprepared writer gets) the folder is synced too. A `.batched` file's caller has
    /// synced its content before and syncs the renames after.
    public func publish() throws {
        guard !done else { throw Nu11Error(.internalError, "atomic write committed twice") }
        try prepare(.immediate)
        done = true
        defer { nu11_cleanup_unregister(cleanupSlot) }
        defer {
            if fd >= 0 { close(fd) }
            fd = -1
        }
        if unnamed && !replaceExisting {
            // The unnamed file gets its name in one step that never replaces anything.
            guard nu11_link_unnamed(fd, destination) == 0 else { throw POSIX.error("link", destination) }
        } else {
            if unnamed {
                // Replacing: named beside the destination first (the cleanup handler knows the
                // name from here), then renamed over it.
                cleanupSlot = nu11_cleanup_register(temporaryPath)
                guard nu11_link_unnamed(fd, temporaryPath) == 0 else { throw POSIX.error("link", temporaryPath) }
            }
            let moved = replaceExisting ? rename(temporaryPath, destination) : nu11_rename_noreplace(temporaryPath, destination)
            guard moved == 0 else {
                let error = POSIX.error("rename", destination)
                unlink(temporaryPath)
                throw error
            }
        }
        if durability == .immediate { try POSIX.afterEffect { try POSIX.syncDirectory(POSIX.parent(of: destination)) } }
    }

    /// Renames the prepared file to `path`, a fixed name beside its destination, instead of
    /// the destination itself: the sidecar and thumbnail of an item moving between domains,
    /// which replace the old ones only after the move's commit point (`Items.moveDomain`). The
    /// file is no longer the writer's to remove (nor the signal handler's). Not synced: the
    /// caller syncs the batch, as `publish` of a `.batched` file.
    public func publishStaged(at path: String) throws {
        guard !done else { throw Nu11Error(.internalError, "atomic write committed twice") }
        guard !unnamed else { throw Nu11Error(.internalError, "a plaintext file cannot be staged") }
        try prepare(.immediate)
        done = true
        defer { nu11_cleanup_unregister(cleanupSlot) }
        if fd >= 0 { close(fd) }
        fd = -1
        guard rename(temporaryPath, path) == 0 else {
            let error = POSIX.error("rename", path)
            unlink(temporaryPath)
            throw error
        }
        if durability == .immediate { try POSIX.afterEffect { try POSIX.syncDirectory(POSIX.parent(of: path)) } }
    }

    public func abort() {
        guard !done else { return }
        done = true
        if fd >= 0 { close(fd) }
        fd = -1
        if !unnamed { unlink(temporaryPath) }
        nu11_cleanup_unregister(cleanupSlot)
    }

    deinit { abort() }
}
