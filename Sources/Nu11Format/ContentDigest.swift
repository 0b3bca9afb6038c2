// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// SHA-256 of what is written to it (a `ByteSink`): duplicate detection compares the digests
/// of a file and of an item's decrypted content, in memory for one command (nothing stored).
public struct ContentDigest: ByteSink {
    private var hasher = SHA256()

    public init() {}

    public mutating func write(_ bytes: UnsafeRawBufferPointer) throws { hasher.update(bufferPointer: bytes) }

    public func finalize() -> [UInt8] { Array(hasher.finalize()) }
}
