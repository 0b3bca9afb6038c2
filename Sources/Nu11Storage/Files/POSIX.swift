// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Nu11Format

/// Thin, error-translating wrappers over the POSIX calls the storage layer needs.
enum POSIX {
    static func error(_ operation: String, _ path: String, code: Int32 = errno) -> Nu11Error {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOSPC, EDQUOT:
            // The path is often a temp file of ours: the user's words are "the disk is full".
            var error = Nu11Error(.io, "the disk is full (\(operation) failed: \(reason))", remedy: "free some disk space and try again", item: path)
            error.diskFull = true
            return error
        case ENOENT:
            return Nu11Error(.notFound, "\(path): \(operation) failed: \(reason)", remedy: "check the path", item: path)
        case EACCES, EPERM, EROFS:
            return Nu11Error(.io, "\(path): \(operation) failed: \(reason)", remedy: "check permissions of the folder", item: path)
        case EEXIST:
            return Nu11Error(.alreadyExists, "\(path): \(operation) failed: \(reason)", item: path)
        default:
            return Nu11Error(.io, "\(path): \(operation) failed: \(reason)", remedy: "check the file system", item: path)
        }
    }

    static func openFile(_ path: String, _ flags: Int32, _ mode: mode_t = 0o600) throws -> Int32 {
        while true {
            let fd = open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno == EINTR { continue }
            throw error("open", path)
        }
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
