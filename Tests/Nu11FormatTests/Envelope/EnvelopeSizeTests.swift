// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

@Suite("N11Envelope.sealedSize")
struct EnvelopeSizeTests {
    @Test("is the size of the envelope sealed, at every chunk boundary")
    func matchesSealed() throws {
        for count in [0, 1, 16_383, 16_384, 16_385, 32_768, 100_000] {
            var source = MemorySource([UInt8](repeating: 7, count: count))
            var sink = MemorySink()
            let header = N11Header(kind: .file, domain: .vault, itemID: ItemID())
            let plain = try N11Envelope.seal(from: &source, to: &sink, header: header, itemKey: SecretBytes(randomCount: 32))
            #expect(plain == UInt64(count))
            #expect(N11Envelope.sealedSize(plaintext: plain) == UInt64(sink.count), "\(count) bytes")
        }
    }
}
