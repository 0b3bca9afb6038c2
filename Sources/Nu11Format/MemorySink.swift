// SPDX-License-Identifier: GPL-3.0-or-later
import CSodium

/// Output collected in memory — often plaintext (a note's body, a photo for a viewer, a
/// copy with its location removed): the one in-memory sink of the project, the core's and
/// the app's alike.
///
/// Its storage never moves without zeroing the block it leaves (an `Array` that grows
/// leaves its old copies in freed memory), and it is zeroed when the last copy of the sink
/// goes away, or at `zero()`. `bytes` hands out a copy, which the caller zeroes
/// (`secureZero`); `withUnsafeBytes` and `reader()` read it in place.
public struct MemorySink: ByteSink {
    final class Storage {
        var base: UnsafeMutableRawPointer?
        var capacity = 0
        var count = 0
        /// For tests: sees every block just before it is freed (it must be all zeros).
        let witness: ((UnsafeRawBufferPointer) -> Void)?

        init(capacity: Int, witness: ((UnsafeRawBufferPointer) -> Void)? = nil) {
            self.witness = witness
            if capacity > 0 { grow(to: capacity) }
        }

        func grow(to wanted: Int) {
            let fresh = UnsafeMutableRawPointer.allocate(byteCount: wanted, alignment: 16)
            if let base {
                fresh.copyMemory(from: base, byteCount: count)
                release(base, capacity)
            }
            base = fresh
            capacity = wanted
        }

        func zero() {
            if let base { Sodium.zero(UnsafeMutableRawBufferPointer(start: base, count: capacity)) }
            count = 0
        }

        func copy() -> Storage {
            let other = Storage(capacity: count, witness: witness)
            if let base, let target = other.base { target.copyMemory(from: base, byteCount: count) }
            other.count = count
            return other
        }

        private func release(_ pointer: UnsafeMutableRawPointer, _ size: Int) {
            let buffer = UnsafeMutableRawBufferPointer(start: pointer, count: size)
            Sodium.zero(buffer)
            witness?(UnsafeRawBufferPointer(buffer))
            pointer.deallocate()
        }

        deinit { if let base { release(base, capacity) } }
    }

    private var storage: Storage

    /// `capacity`: bytes reserved up front (the expected size), so the storage rarely grows.
    public init(capacity: Int = 0) { storage = Storage(capacity: max(0, capacity)) }

    /// A test seam: `witness` sees every block of storage just before it is freed.
    init(capacity: Int = 0, witness: @escaping (UnsafeRawBufferPointer) -> Void) {
        storage = Storage(capacity: capacity, witness: witness)
    }

    public var count: Int { storage.count }

    /// A copy of the collected bytes; zero it when done (`secureZero`).
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage.base, count: storage.count))
    }

    /// Makes room for `capacity` bytes in all, now (the old block, if any, is zeroed as it is
    /// left): a sink reserved to the final size never moves its bytes again.
    public mutating func reserve(_ capacity: Int) {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        if capacity > storage.capacity { storage.grow(to: capacity) }
    }

    public mutating func write(_ buffer: UnsafeRawBufferPointer) throws {
        guard let source = buffer.baseAddress, buffer.count > 0 else { return }
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        let needed = storage.count + buffer.count
        if needed > storage.capacity { storage.grow(to: max(needed, storage.capacity * 2, 4096)) }
        guard let base = storage.base else { return }
        (base + storage.count).copyMemory(from: source, byteCount: buffer.count)
        storage.count = needed
    }

    /// Zeroes and empties the sink now (every copy of it shares the storage until written).
    public mutating func zero() { storage.zero() }

    /// Reads the collected bytes front to back, in place (the reader keeps them alive).
    public func reader() -> Reader { Reader(storage: storage) }

    public struct Reader: ByteSource {
        let storage: Storage
        private var position = 0

        init(storage: Storage) { self.storage = storage }

        public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let n = min(buffer.count, storage.count - position)
            guard n > 0, let base = storage.base, let target = buffer.baseAddress else { return 0 }
            target.copyMemory(from: base + position, byteCount: n)
            position += n
            return n
        }
    }
}
