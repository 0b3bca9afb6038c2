// SPDX-License-Identifier: GPL-3.0-or-later

/// A fixed-size buffer for plaintext on the chunked content path (the push encryptor's
/// pending chunk, the random-access reader's chunks): allocated once, never grown (a grown
/// Swift array would free its old storage with the plaintext in it), zeroed whole after
/// every use and when freed. `witness` (a test seam, like `ChunkPipeline.releaseWitness`)
/// sees the whole buffer at each of those points, after the zeroing: the tests check that it
/// holds nothing but zeros there (Tests/Nu11FormatTests/Chunked/ZeroingWitnessTests).
final class PlainScratch {
    let bytes: UnsafeMutableRawBufferPointer
    /// The bytes in use at the front.
    var count = 0
    /// What the witness is told: whose buffer, and at which point ("after use", "released").
    let label: String
    var witness: ((_ label: String, _ point: String, _ bytes: UnsafeRawBufferPointer) -> Void)?

    init(capacity: Int, label: String) {
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, capacity), alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        self.label = label
    }

    var used: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[0..<count]) }

    /// Appends as much of `source` as fits; returns how many bytes were taken.
    func append(_ source: UnsafeRawBufferPointer) -> Int {
        let take = min(source.count, bytes.count - count)
        if take > 0, let from = source.baseAddress, let to = bytes.baseAddress {
            (to + count).copyMemory(from: from, byteCount: take)
        }
        count += take
        return take
    }

    /// Zeroes the whole buffer (not only the bytes in use now) and empties it.
    func wipe(_ point: String) {
        Sodium.zero(bytes)
        count = 0
        witness?(label, point, UnsafeRawBufferPointer(bytes))
    }

    deinit {
        wipe("released")
        bytes.deallocate()
    }
}
