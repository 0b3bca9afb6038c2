// SPDX-License-Identifier: GPL-3.0-or-later
import CSodium
import Synchronization

/// Guarded memory for small secrets (keys: at most `SecretSlab.slotSize` bytes), shared.
///
/// `sodium_malloc` maps every allocation on its own, between guard pages, and locks it: about
/// eight system calls to make one 32-byte key and throw it away (mmap, mprotect ×3, mlock,
/// madvise; then munlock, munmap), and each mprotect or munmap of a multithreaded process
/// interrupts every other core to flush its TLB. A folder import makes a key per item, so that
/// was a fifth of the CPU of importing 10,000 small files (bench row 12).
///
/// A slab is one `sodium_malloc` region of `slotsPerSlab` slots: it has the same guard pages
/// around it, is locked out of swap and kept out of core dumps in the same way, and is never
/// unmapped, so its pages hold only zeros and live keys. A slot is zeroed when its secret is
/// released, before it can be handed out again. What it gives up is a guard page between two
/// keys of the same slab: an overrun of one key's buffer would reach the next key instead of
/// faulting. Secrets are fixed-size and only reached through `SecretBytes.withUnsafeBytes`,
/// with the count it was made with.
final class SecretSlab: Sendable {
    init() { _ = Sodium.ready }  // sodium_malloc needs sodium_init first

    static let slotSize = 64
    static let slotsPerSlab = 256  // 16 KiB: four pages

    static let shared = SecretSlab()

    /// Free slots (addresses). Slabs are only ever added.
    private let free = Mutex<[UInt]>([])

    /// A zeroed slot, or nil when no slab can be made (the `mlock` or map limit reached):
    /// the caller then falls back as for `sodium_malloc`.
    func take() -> UnsafeMutableRawPointer? {
        let address: UInt? = free.withLock { free in
            if free.isEmpty {
                guard let slab = sodium_malloc(Self.slotSize * Self.slotsPerSlab) else { return nil }
                sodium_memzero(slab, Self.slotSize * Self.slotsPerSlab)
                let base = UInt(bitPattern: slab)
                free.reserveCapacity(free.count + Self.slotsPerSlab)
                for slot in stride(from: Self.slotsPerSlab - 1, through: 0, by: -1) {
                    free.append(base + UInt(slot * Self.slotSize))
                }
            }
            return free.popLast()
        }
        return address.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
    }

    /// Zeroes a slot and makes it free again.
    func give(_ slot: UnsafeMutableRawPointer) {
        sodium_memzero(slot, Self.slotSize)
        free.withLock { $0.append(UInt(bitPattern: slot)) }
    }
}
