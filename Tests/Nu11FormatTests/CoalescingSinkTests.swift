// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

/// The sink that sends an envelope's header with its first chunks: one `write` for a small
/// file, and never a byte lost, reordered or sent twice.
@Suite("CoalescingSink: small writes go out with the next large one, in order")
struct CoalescingSinkTests {
    /// Records each write the base receives.
    struct Recorder: ByteSink {
        var calls: [[UInt8]] = []
        var failAt: Int?
        mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
            if calls.count == failAt { throw Nu11Error(.io, "the disk failed") }
            calls.append(Array(bytes))
        }
    }

    @Test("header, salt and a small file's ciphertext reach the base in one write")
    func oneWrite() throws {
        var sink = CoalescingSink(Recorder())
        let header = [UInt8](repeating: 1, count: 24), salt = [UInt8](repeating: 2, count: 56)
        let body = [UInt8](repeating: 3, count: 16_416)
        try sink.write(header)
        try sink.write(salt)
        #expect(sink.base.calls.isEmpty, "small writes are held")
        try sink.write(body)
        try sink.flush()
        #expect(sink.base.calls == [header + salt + body])
    }

    @Test("a large stream: the held bytes go with the first large write, the rest pass through; flush sends a held tail")
    func manyWrites() throws {
        var sink = CoalescingSink(Recorder())
        var expected: [UInt8] = []
        for (i, count) in [24, 56, 1 << 20, 1 << 20, 100, 7].enumerated() {
            let bytes = [UInt8](repeating: UInt8(i + 1), count: count)
            try sink.write(bytes)
            expected += bytes
        }
        try sink.flush()
        try sink.flush()  // nothing held: nothing sent
        let calls = sink.base.calls
        #expect(calls.flatMap { $0 } == expected, "every byte once, in order")
        #expect(calls.map(\.count) == [24 + 56 + (1 << 20), 1 << 20, 107])
    }

    @Test("nothing but small writes: nothing reaches the base until flush")
    func onlySmall() throws {
        var sink = CoalescingSink(Recorder())
        try sink.write([9, 9])
        #expect(sink.base.calls.isEmpty)
        try sink.flush()
        #expect(sink.base.calls == [[9, 9]])
    }

    @Test("a failed write throws, and is not sent again by flush")
    func failure() throws {
        var sink = CoalescingSink(Recorder(failAt: 0))
        try sink.write([1, 2, 3])
        #expect(throws: Nu11Error.self) { try sink.write([UInt8](repeating: 0, count: 8192)) }
        try sink.flush()
        #expect(sink.base.calls.isEmpty, "held bytes went with the failed write; a flush does not resend them")
    }
}
