// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import Nu11Format

/// Small secrets share guarded slabs (`SecretSlab`). Slabs are never unmapped, so a released
/// key's bytes can be read back at its old address: they must be zeros.
@Suite("guarded slabs for small secrets")
struct SecretSlabTests {
    /// The address a secret's bytes live at (read as a number: the pointer is not kept).
    static func address(_ secret: SecretBytes) -> UInt {
        secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
    }

    static func bytes(at address: UInt, count: Int) -> [UInt8] {
        guard let pointer = UnsafeRawPointer(bitPattern: address) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    // The tests below use a slab of their own: other tests, running at the same time, take
    // keys from the shared one.

    @Test("a released slot holds zeros, and is handed out again")
    func releasedSlotIsZeroed() throws {
        let slab = SecretSlab()
        let slot = try #require(slab.take())
        let where_ = UInt(bitPattern: slot)
        #expect(Self.bytes(at: where_, count: SecretSlab.slotSize) == [UInt8](repeating: 0, count: SecretSlab.slotSize),
                "a new slot is zeros")
        slot.initializeMemory(as: UInt8.self, repeating: 0xA5, count: SecretSlab.slotSize)
        slab.give(slot)
        // Released: the whole slot is zeros (the slab stays mapped, so it can be read).
        #expect(Self.bytes(at: where_, count: SecretSlab.slotSize) == [UInt8](repeating: 0, count: SecretSlab.slotSize))
        let next = try #require(slab.take())
        #expect(UInt(bitPattern: next) == where_, "the free slot is reused (last freed, first taken)")
        slab.give(next)
    }

    @Test("keys of every size up to a slot, and larger secrets, read back what was put in")
    func sizes() {
        for count in [0, 1, 16, 31, 32, 33, 63, 64, 65, 100, 4096] {
            let plain = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
            let secret = plain.withUnsafeBytes { SecretBytes(copying: $0) }
            #expect(secret.count == count)
            #expect(secret.withUnsafeBytes { Array($0) } == plain, "\(count) bytes")
        }
    }

    @Test("slots held at once from many threads never overlap, and all are zeroed when released")
    func concurrent() async {
        let slab = SecretSlab()
        let perTask = 300, tasks = 8  // 2,400 slots: more than nine slabs
        let addresses = await withTaskGroup(of: [UInt].self) { group in
            for t in 0..<tasks {
                group.addTask {
                    var held: [UnsafeMutableRawPointer] = []
                    for n in 0..<perTask {
                        guard let slot = slab.take() else { return [] }
                        slot.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: t * 31 + n) | 1,
                                              count: SecretSlab.slotSize)
                        held.append(slot)
                    }
                    // Every slot still holds its own bytes while the other threads write theirs.
                    for (n, slot) in held.enumerated() {
                        let want = UInt8(truncatingIfNeeded: t * 31 + n) | 1
                        let bytes = UnsafeRawBufferPointer(start: slot, count: SecretSlab.slotSize)
                        if !bytes.allSatisfy({ $0 == want }) { return [] }
                    }
                    return held.map { UInt(bitPattern: $0) }  // still held: given back below
                }
            }
            var all: [UInt] = []
            for await part in group { all += part }
            return all
        }
        #expect(addresses.count == perTask * tasks, "a slot was missing or overwritten by another thread's")
        #expect(Set(addresses).count == addresses.count, "two live slots were the same")
        let distance = zip(addresses.sorted(), addresses.sorted().dropFirst()).map { $1 - $0 }.min() ?? UInt(SecretSlab.slotSize)
        #expect(distance >= UInt(SecretSlab.slotSize), "two slots overlap")
        for address in addresses {
            if let slot = UnsafeMutableRawPointer(bitPattern: address) { slab.give(slot) }
            #expect(Self.bytes(at: address, count: SecretSlab.slotSize) == [UInt8](repeating: 0, count: SecretSlab.slotSize))
        }
    }
}
