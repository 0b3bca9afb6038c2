// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import OrderedCollections

/// A byte-bounded, in-memory LRU cache for decrypted previews (the seed's thumbnail cache).
/// Nothing decrypted is ever written to disk; evicted and removed values are zeroed.
/// Thread-safe; the total size of the values never exceeds `capacity` bytes.
public final class PreviewCache<Key: Hashable & Sendable>: @unchecked Sendable {
    public let capacity: Int
    /// In recency order, least recently used first (swift-collections' OrderedDictionary).
    private var values: OrderedDictionary<Key, [UInt8]> = [:]
    private var bytes = 0
    private let lock = NSLock()
    /// Test seam: sees each evicted or removed value once it has been zeroed.
    var zeroedWitness: (([UInt8]) -> Void)?

    public init(capacityBytes: Int) { capacity = max(0, capacityBytes) }

    public var totalBytes: Int { lock.withLock { bytes } }
    public var count: Int { lock.withLock { values.count } }

    public func get(_ key: Key) -> [UInt8]? {
        lock.withLock {
            // Used now: it moves to the end.
            guard let value = values.removeValue(forKey: key) else { return nil }
            values[key] = value
            return value
        }
    }

    /// Stores a value; a value larger than the whole cache is not stored.
    public func set(_ key: Key, _ value: [UInt8]) {
        lock.withLock {
            removeLocked(key)
            guard value.count <= capacity else { return }
            while bytes + value.count > capacity, let oldest = values.keys.first { removeLocked(oldest) }
            values[key] = value
            bytes += value.count
        }
    }

    public func remove(_ key: Key) { lock.withLock { removeLocked(key) } }

    public func removeAll() {
        lock.withLock {
            for key in values.keys { removeLocked(key) }
        }
    }

    private func removeLocked(_ key: Key) {
        guard var value = values.removeValue(forKey: key) else { return }
        bytes -= value.count
        secureZero(&value)
        zeroedWitness?(value)
    }

    deinit { removeAll() }
}
