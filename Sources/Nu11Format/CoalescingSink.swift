// SPDX-License-Identifier: GPL-3.0-or-later

/// Holds small writes (an envelope's header, a message's salt and commitment: public bytes,
/// never plaintext) and hands them to `base` together with the next large write, so a small
/// file is one `write` call rather than three. `flush` passes on what is still held; a
/// caller that does not flush loses it (so every caller flushes before it closes).
public struct CoalescingSink<Base: ByteSink>: ByteSink {
    public private(set) var base: Base
    private var held: [UInt8] = []
    /// Writes up to this size are held.
    public static var smallWrite: Int { 4096 }

    public init(_ base: Base) { self.base = base }

    public mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        if held.count + bytes.count <= Self.smallWrite {
            held.append(contentsOf: bytes)
            return
        }
        guard !held.isEmpty else { return try base.write(bytes) }
        held.append(contentsOf: bytes)
        defer { held.removeAll(keepingCapacity: false) }
        try base.write(held)
    }

    /// Passes on what is held.
    public mutating func flush() throws {
        guard !held.isEmpty else { return }
        defer { held.removeAll(keepingCapacity: false) }
        try base.write(held)
    }
}
