// SPDX-License-Identifier: GPL-3.0-or-later

/// The errors of the chunked family (streaming, pipelined, push and random-access readers
/// alike), worded once, and the one append-or-roll-back helper of the one-chunk calls.
extension ChunkedScheme {
    static func shortHeader() -> Nu11Error {
        Nu11Error(.truncated, "ciphertext is shorter than its \(headerByteCount)-byte header", remedy: .advice(.truncated))
    }

    static func commitmentMismatch() -> Nu11Error {
        Nu11Error(.corrupted, "key commitment does not match (wrong key, wrong context, or altered header)",
                  remedy: .advice(.wrongFile))
    }

    static func noFinalChunk() -> Nu11Error {
        Nu11Error(.truncated, "ciphertext is truncated (no final chunk)", remedy: .advice(.truncated))
    }

    static func endsInsideTag() -> Nu11Error {
        Nu11Error(.truncated, "ciphertext ends inside a chunk tag", remedy: .advice(.truncated))
    }

    static func tooManyChunks() -> Nu11Error { Nu11Error(.corrupted, "ciphertext exceeds 2^38 chunks") }

    static func chunkFailed(_ index: UInt64) -> Nu11Error {
        Nu11Error(.corrupted, "chunk \(index) failed authentication", remedy: .advice(.damaged))
    }

    static func shortChunk() -> Nu11Error { Nu11Error(.corrupted, "chunk shorter than its tag") }

    /// Appends `count` bytes to `output` filled by `body`, or nothing if `body` throws.
    static func append(_ count: Int, to output: inout [UInt8],
                       _ body: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: count))
        do {
            try output.withUnsafeMutableBytes { try body(UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
        } catch {
            output.removeSubrange(start...)
            throw error
        }
    }
}
