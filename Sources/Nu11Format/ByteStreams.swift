// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where streaming encryption reads from: a file, stdin, memory.
public protocol ByteSource {
    /// Reads up to `buffer.count` bytes; returns 0 only at the end.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// The rest of a regular file this source reads, which the content path may map instead
    /// of reading; nil (the default) for anything else.
    func mappableRegion() -> MappableRegion?
}

/// `length` bytes of the regular file `fd` from `offset` (its current position).
public struct MappableRegion: Sendable {
    public let fd: Int32
    public let offset: UInt64
    public let length: UInt64

    /// Moves the file position past the region, as if it had been read.
    func consumed() { _ = lseek(fd, off_t(offset + length), SEEK_SET) }
}

extension ByteSource {
    public func mappableRegion() -> MappableRegion? { nil }
}

/// Where streaming output goes.
public protocol ByteSink {
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws
}

/// A ciphertext that can be read at any offset (a regular file, or memory).
public protocol RandomAccessSource {
    var size: UInt64 { get throws }
    /// Reads up to `buffer.count` bytes at `offset`; returns fewer only at the end.
    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

extension ByteSource {
    /// Reads until `buffer` is full or the source ends.
    public mutating func readFully(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let n = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if n == 0 { break }
            filled += n
        }
        return filled
    }
}

extension ByteSink {
    public mutating func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }
}

/// Bytes in memory, read front to back or at random.
public struct MemorySource: ByteSource, RandomAccessSource {
    public let bytes: [UInt8]
    private var position = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, bytes.count - position)
        if n > 0 {
            bytes.withUnsafeBytes { src in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[position..<(position + n)]))
            }
            position += n
        }
        return n
    }

    public var size: UInt64 { UInt64(bytes.count) }

    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < UInt64(bytes.count) else { return 0 }
        let start = Int(offset)
        let n = min(buffer.count, bytes.count - start)
        bytes.withUnsafeBytes { src in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[start..<(start + n)]))
        }
        return n
    }
}


/// A file descriptor the caller owns (it is not closed here).
public struct FileDescriptorStream: ByteSource, ByteSink, RandomAccessSource {
    public let fd: Int32
    /// Names the file in errors.
    public let label: String

    /// Called with the descriptor after every `writebackInterval` bytes written: the storage
    /// layer sets it on files it will sync, to start the kernel's writeback while the rest is
    /// still being encrypted (a hint: it makes nothing durable).
    public var startWriteback: (@Sendable (Int32) -> Void)?
    private var sinceWriteback = 0
    public static let writebackInterval = 8 << 20

    public init(fd: Int32, label: String) {
        self.fd = fd
        self.label = label
    }

    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        do { return try SystemIO.read(fd, into: buffer) } catch { throw SystemIO.error(error, "read", item: label) }
    }

    public mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        do { try SystemIO.writeAll(fd, bytes) } catch { throw SystemIO.error(error, "write", item: label) }
        if let startWriteback {
            sinceWriteback += bytes.count
            if sinceWriteback >= Self.writebackInterval {
                startWriteback(fd)
                sinceWriteback = 0
            }
        }
    }

    public func mappableRegion() -> MappableRegion? {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let position = lseek(fd, 0, SEEK_CUR)
        guard position >= 0, st.st_size >= position else { return nil }
        return MappableRegion(fd: fd, offset: UInt64(position), length: UInt64(st.st_size - position))
    }

    public var size: UInt64 {
        get throws {
            var st = stat()
            guard fstat(fd, &st) == 0 else { throw SystemIO.error("stat", item: label) }
            return UInt64(st.st_size)
        }
    }

    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        do { return try SystemIO.read(fd, at: offset, into: buffer) } catch { throw SystemIO.error(error, "read", item: label) }
    }
}

/// Reads ahead in large blocks (256 KiB) so that 16 KiB chunk reads do not each cost a syscall.
public struct BufferedSource<Base: ByteSource>: ByteSource {
    private var base: Base
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0

    public init(_ base: Base, capacity: Int = 256 << 10) {
        self.base = base
        buffer = [UInt8](repeating: 0, count: capacity)
    }

    public mutating func read(into out: UnsafeMutableRawBufferPointer) throws -> Int {
        if start == end {
            start = 0
            end = try buffer.withUnsafeMutableBytes { try base.read(into: $0) }
            if end == 0 { return 0 }
        }
        let n = min(out.count, end - start)
        buffer.withUnsafeBytes { src in out.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[start..<(start + n)])) }
        start += n
        return n
    }
}
