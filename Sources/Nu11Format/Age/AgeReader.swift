// SPDX-License-Identifier: GPL-3.0-or-later

/// A buffered reader over a `ByteSource` that hands out lines (the header, the armor) and
/// then the rest as a `ByteSource` (the payload), never reading more than one buffer ahead.
struct AgeReader<Base: ByteSource>: ByteSource {
    private var base: Base
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var atEnd = false

    init(_ base: Base, capacity: Int = 64 << 10) {
        self.base = base
        buffer = [UInt8](repeating: 0, count: capacity)
    }

    /// Refills when empty; false at the end of the source.
    private mutating func fill() throws -> Bool {
        if start < end { return true }
        if atEnd { return false }
        start = 0
        end = try buffer.withUnsafeMutableBytes { try base.read(into: $0) }
        if end == 0 { atEnd = true }
        return end > 0
    }

    /// The next byte without consuming it; nil at the end.
    mutating func peek() throws -> UInt8? {
        guard try fill() else { return nil }
        return buffer[start]
    }

    mutating func skipByte() { start += 1 }

    /// A line without its LF, or nil at the very end of the source. A line that ends without
    /// LF comes back with `terminated` false. Lines longer than `limit` throw `tooLong`.
    mutating func readLine(limit: Int, tooLong: @autoclosure () -> Nu11Error) throws -> (line: [UInt8], terminated: Bool)? {
        var line = [UInt8]()
        while try fill() {
            let slice = buffer[start..<end]
            if let lf = slice.firstIndex(of: 0x0A) {
                line += buffer[start..<lf]
                start = lf + 1
                guard line.count <= limit else { throw tooLong() }
                return (line, true)
            }
            line += slice
            start = end
            guard line.count <= limit else { throw tooLong() }
        }
        return line.isEmpty ? nil : (line, false)
    }

    mutating func read(into out: UnsafeMutableRawBufferPointer) throws -> Int {
        guard try fill() else { return 0 }
        let n = min(out.count, end - start)
        buffer.withUnsafeBytes { src in out.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[start..<(start + n)])) }
        start += n
        return n
    }
}
