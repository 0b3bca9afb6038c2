// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Nu11Format
import SystemPackage

/// Thin, error-translating wrappers over the POSIX calls the storage layer needs.
enum POSIX {
    static func error(_ operation: String, _ path: String, code: Int32 = errno) -> Nu11Error {
        SystemIO.error(Errno(rawValue: code), operation, item: path)
    }

    static func openFile(_ path: String, _ flags: Int32, _ mode: mode_t = 0o600) throws -> Int32 {
        let fd = SystemIO.retrying { open(path, flags | O_CLOEXEC, mode) }
        guard fd >= 0 else { throw error("open", path) }
        return fd
    }

    /// Opens a regular file for reading, without blocking on the way: a FIFO or device put in
    /// its place (by a writer of the vault folder) is refused at once instead of waited on.
    static func openRegular(_ path: String) throws -> Int32 {
        try ProtectedFiles.requireRegular(try openFile(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK), path)
    }

    static func fsyncOrThrow(_ fd: Int32, _ path: String) throws {
        guard fsync(fd) == 0 else { throw error("fsync", path) }
    }

    /// fsync of a directory makes a rename or unlink in it durable.
    static func syncDirectory(_ path: String) throws {
        let fd = try openFile(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        try fsyncOrThrow(fd, path)
    }

    /// Runs what follows a change that already took effect (the fsync after a rename or an
    /// unlink); its failure is marked `tookEffect`.
    static func afterEffect(_ body: () throws -> Void) throws {
        do { try body() } catch var error as Nu11Error {
            error.tookEffect = true
            throw error
        }
    }

    static func fileType(_ path: String, followLinks: Bool = false) -> mode_t? {
        var st = stat()
        let rc = followLinks ? stat(path, &st) : lstat(path, &st)
        guard rc == 0 else { return nil }
        return st.st_mode & S_IFMT
    }

    static func exists(_ path: String) -> Bool { fileType(path) != nil }

    static func isDirectory(_ path: String) -> Bool { fileType(path, followLinks: true) == S_IFDIR }

    static func fileSize(_ fd: Int32, _ path: String) throws -> UInt64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw error("stat", path) }
        return UInt64(st.st_size)
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func join(_ parts: String...) -> String {
        parts.dropFirst().reduce(parts.first ?? "") { $0.hasSuffix("/") ? $0 + $1 : $0 + "/" + $1 }
    }
}
