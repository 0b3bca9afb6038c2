// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

/// The one in-memory sink holds plaintext (note bodies, photos for a viewer): no block of it
/// is freed with its bytes in place — not when it grows, not when it goes away.
@Suite("MemorySink: plaintext in memory is zeroed")
struct MemorySinkTests {
    final class Seen {
        var blocks = 0
        var dirty = 0
        func look(_ block: UnsafeRawBufferPointer) {
            blocks += 1
            if block.contains(where: { $0 != 0 }) { dirty += 1 }
        }
    }

    @Test("every block left behind by growth, by zero() and at the end is all zeros; the bytes read back intact")
    func zeroedEverywhere() throws {
        let seen = Seen()
        var expected: [UInt8] = []
        do {
            var sink = MemorySink(capacity: 16) { seen.look($0) }
            for round in 0..<40 {
                let chunk = [UInt8](repeating: UInt8(0x41 + round % 26), count: 1000 + round * 97)
                try sink.write(chunk)
                expected += chunk
            }
            #expect(sink.bytes == expected && sink.count == expected.count)
            var read: [UInt8] = []
            var reader = sink.reader()
            var buffer = [UInt8](repeating: 0, count: 4099)
            while case let n = try buffer.withUnsafeMutableBytes({ try reader.read(into: $0) }), n > 0 { read += buffer[0..<n] }
            #expect(read == expected, "the reader gives the bytes back in order")
            // A copy shares the storage until one of them writes; then both stay intact.
            var copy = sink
            try copy.write([1, 2, 3])
            #expect(sink.bytes == expected && copy.bytes == expected + [1, 2, 3])
            sink.zero()
            #expect(sink.count == 0 && copy.count == expected.count + 3)
        }
        #expect(seen.blocks >= 5, "the sink grew \(seen.blocks) times: the test did not exercise growth")
        #expect(seen.dirty == 0, "\(seen.dirty) of \(seen.blocks) blocks were freed holding their bytes")
    }
}
