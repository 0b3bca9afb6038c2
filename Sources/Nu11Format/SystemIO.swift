// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

/// The POSIX plumbing every layer shares, on swift-system's `FileDescriptor` (which retries
/// a call interrupted by a signal): whole reads and writes, and the one place where an
/// `errno` becomes a `Nu11Error` a person can act on.
public enum SystemIO {
    /// `operation` on `item` failed with `code`. A full disk is said as such (the item is
    /// often a temp file of ours), and marked `diskFull` so a batch can stop where it is.
    public static func error(_ code: Errno, _ operation: String, item: String) -> Nu11Error {
        let reason = String(cString: strerror(code.rawValue))
        switch code {
        case .noSpace, .diskQuotaExceeded:
            var error = Nu11Error(.io, "the disk is full (\(operation) failed: \(reason))", remedy: .freeDiskSpace, item: item)
            error.diskFull = true
            return error
        case .noSuchFileOrDirectory:
            return Nu11Error(.notFound, "\(item): \(operation) failed: \(reason)", remedy: .advice(.checkPath), item: item)
        case .permissionDenied, .notPermitted, .readOnlyFileSystem:
            return Nu11Error(.io, "\(item): \(operation) failed: \(reason)", remedy: .advice(.checkPermissions), item: item)
        case .fileExists:
            return Nu11Error(.alreadyExists, "\(item): \(operation) failed: \(reason)", item: item)
        default:
            return Nu11Error(.io, "\(item): \(operation) failed: \(reason)", remedy: .advice(.checkFileSystem), item: item)
        }
    }

    /// The same, for what a read or write here threw (swift-system throws `Errno`).
    public static func error(_ thrown: any Error, _ operation: String, item: String) -> Nu11Error {
        if let nu11 = thrown as? Nu11Error { return nu11 }
        return error(thrown as? Errno ?? .ioError, operation, item: item)
    }

    /// The same, for the `errno` the last failed call left.
    public static func error(_ operation: String, item: String) -> Nu11Error {
        error(Errno(rawValue: errno), operation, item: item)
    }

    /// Runs a call that returns -1 and sets `errno` on failure, again while it is
    /// interrupted by a signal (for the calls swift-system does not wrap: flock, waitpid, open
    /// with raw flags).
    public static func retrying<T: SignedInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// Reads up to `buffer.count` bytes; 0 only at the end.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        return try FileDescriptor(rawValue: fd).read(into: buffer)
    }

    /// Reads until `buffer` is full or the input ends; returns how much was read.
    public static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let n = try read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if n == 0 { break }
            filled += n
        }
        return filled
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end.
    public static func read(_ fd: Int32, at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        let descriptor = FileDescriptor(rawValue: fd)
        while filled < buffer.count {
            let n = try descriptor.read(fromAbsoluteOffset: Int64(offset) + Int64(filled),
                                        into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if n == 0 { break }
            filled += n
        }
        return filled
    }

    /// Writes all of `bytes`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count > 0 else { return }
        _ = try FileDescriptor(rawValue: fd).writeAll(bytes)
    }
}
