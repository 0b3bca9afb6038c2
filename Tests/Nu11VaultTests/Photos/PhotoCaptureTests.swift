// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format
@testable import Nu11Vault

/// The import's copy of a photo (`PhotoCapture`) is plaintext, up to 128 MiB of it: it must
/// live only in storage that zeroes every block it leaves (issue 56). An `Array` that grows
/// frees each old copy as it was.
@Suite("Photo capture")
struct PhotoCaptureTests {
    /// A JPEG's first bytes, then a pattern: `count` bytes in all.
    static func photo(_ count: Int) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xE0, 0, 16] + Array("JFIF".utf8) + (0..<(count - 10)).map { UInt8(truncatingIfNeeded: $0 % 251 + 1) }
    }

    static func feed(_ capture: PhotoCapture, _ bytes: [UInt8], chunk: Int) {
        var at = 0
        while at < bytes.count {
            let end = min(bytes.count, at + chunk)
            bytes[at..<end].withUnsafeBytes { capture.take($0) }
            at = end
        }
    }

    /// Every stored property of `value`, and theirs, that is an array or a buffer of bytes
    /// with something in it.
    static func byteArrays(in value: Any, depth: Int = 0) -> [String] {
        guard depth < 4 else { return [] }
        var found: [String] = []
        for child in Mirror(reflecting: value).children {
            switch child.value {
            case let a as [UInt8] where !a.isEmpty: found.append("\(child.label ?? "?"): [UInt8] × \(a.count)")
            case let a as ContiguousArray<UInt8> where !a.isEmpty: found.append("\(child.label ?? "?"): ContiguousArray × \(a.count)")
            case let a as ArraySlice<UInt8> where !a.isEmpty: found.append("\(child.label ?? "?"): ArraySlice × \(a.count)")
            case let d as Data where !d.isEmpty: found.append("\(child.label ?? "?"): Data × \(d.count)")
            default: found += byteArrays(in: child.value, depth: depth + 1)
            }
        }
        return found
    }

    @Test("a photo read in small chunks is kept in no growing [UInt8] (nor Data, nor a slice)")
    func noGrowingArray() {
        let capture = PhotoCapture(name: "p.jpg")
        Self.feed(capture, Self.photo(300_000), chunk: 4096)
        #expect(capture.format == .jpeg)
        #expect(Self.byteArrays(in: capture).isEmpty, "plaintext in an array: \(Self.byteArrays(in: capture))")
    }

    @Test("every block the copy leaves while it grows, and the last one, is zeroed before it is freed")
    func growthZeroes() throws {
        final class Seen: @unchecked Sendable {
            var blocks = 0
            var dirty = 0
        }
        let seen = Seen()
        let witness: (UnsafeRawBufferPointer) -> Void = { block in
            seen.blocks += 1
            if block.contains(where: { $0 != 0 }) { seen.dirty += 1 }
        }
        do {
            let capture = PhotoCapture(name: "p.jpg", storage: MemorySink(capacity: 0, witness: witness))
            Self.feed(capture, Self.photo(1 << 20), chunk: 1000)
            #expect(capture.count == 1 << 20)
            #expect(seen.blocks >= 8, "the copy did not grow through several blocks (\(seen.blocks))")
            _ = capture.analyze()
        }
        #expect(seen.dirty == 0, "\(seen.dirty) of \(seen.blocks) blocks were freed with plaintext in them")
    }

    @Test("a file of known size is reserved once: the copy never moves")
    func reservedOnce() {
        final class Seen: @unchecked Sendable { var blocks = 0 }
        let seen = Seen()
        let capture = PhotoCapture(name: "p.jpg", storage: MemorySink(capacity: 0) { _ in seen.blocks += 1 })
        let bytes = Self.photo(200_000)
        #expect(capture.prejudge(first: Array(bytes.prefix(64)), size: UInt64(bytes.count)) == false)
        Self.feed(capture, bytes, chunk: 4096)
        #expect(capture.count == bytes.count && seen.blocks == 0, "the reserved copy moved \(seen.blocks) time(s)")
    }

    @Test("a file over the limit: the copy is dropped, zeroed")
    func tooLarge() {
        final class Seen: @unchecked Sendable { var dirty = 0 }
        let seen = Seen()
        let capture = PhotoCapture(name: "p.jpg", storage: MemorySink(capacity: 0) { b in if b.contains(where: { $0 != 0 }) { seen.dirty += 1 } })
        let head = Self.photo(1 << 16)
        Self.feed(capture, head, chunk: 1 << 16)
        var big = [UInt8](repeating: 7, count: PhotoCapture.maxBytes)
        big.withUnsafeBytes { capture.take($0) }
        big = []
        #expect(capture.tooLarge && capture.count == 0 && seen.dirty == 0)
    }
}
