// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import CSodium

/// Key material and other secrets, in libsodium guarded memory.
///
/// The allocation sits between guard pages, is locked out of swap where the system allows
/// (`mlock`), is excluded from core dumps where supported, and is zeroed when the last
/// reference goes away. Secrets of up to 64 bytes (keys) take a slot of a shared guarded
/// slab (`SecretSlab`: the same protections, without a mapping of their own per key). Bytes are only reachable through `withUnsafeBytes`, in the style
/// of swift-crypto's `SymmetricKey`. Instances are immutable after initialisation, which
/// is what makes the `Sendable` conformance sound.
public final class SecretBytes: @unchecked Sendable {
    private let pointer: UnsafeMutableRawPointer
    private let capacity: Int
    private let storage: Storage
    /// Number of secret bytes.
    public let count: Int

    private init(count: Int) {
        _ = Sodium.ready
        self.count = count
        self.capacity = max(count, 1)
        if capacity <= SecretSlab.slotSize, let slot = SecretSlab.shared.take() {
            pointer = slot  // zeroed
            storage = .slab
        } else if let p = sodium_malloc(capacity) {
            pointer = p
            storage = .guarded
            sodium_memzero(pointer, capacity)
        } else {
            // sodium_malloc fails when mmap/mlock limits are exhausted; fall back to the heap,
            // still zeroed on release.
            pointer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            storage = .heap
            sodium_memzero(pointer, capacity)
        }
    }

    /// `count` bytes from the operating system's CSPRNG.
    public convenience init(randomCount count: Int) {
        self.init(count: count)
        Sodium.fillRandom(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// A copy of `bytes`. The caller remains responsible for zeroing its own copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            pointer.copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// A copy of `bytes`, which is then overwritten with zeros.
    public convenience init(consuming bytes: inout [UInt8]) {
        let count = bytes.count
        self.init(count: count)
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress, count > 0 {
                pointer.copyMemory(from: base, byteCount: count)
            }
            Sodium.zero(buffer)
        }
    }

    /// Fills a fresh secret of `count` bytes through `body`, e.g. a KDF output.
    public static func filling(count: Int,
                               _ body: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows -> SecretBytes {
        let secret = SecretBytes(count: count)
        try body(UnsafeMutableRawBufferPointer(start: secret.pointer, count: count))
        return secret
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time comparison.
    public func constantTimeEquals(_ other: SecretBytes) -> Bool {
        withUnsafeBytes { a in other.withUnsafeBytes { b in Sodium.constantTimeEqual(a, b) } }
    }

    deinit {
        switch storage {
        case .slab: SecretSlab.shared.give(pointer)  // zeroes the slot
        case .guarded: sodium_free(pointer)  // zeroes before unmapping
        case .heap:
            sodium_memzero(pointer, capacity)
            pointer.deallocate()
        }
    }

    private enum Storage { case slab, guarded, heap }
}

extension SecretBytes: ContiguousBytes {}

/// Random bytes that are not secret (salts, nonces, IDs).
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] { Sodium.randomBytes(count) }
}

/// Overwrites a buffer with zeros in a way the optimiser cannot drop.
public func secureZero(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { Sodium.zero($0) }
}

/// PINs and passphrases are Unicode text typed on some keyboard: the same passphrase may
/// arrive composed (é as one code point) or decomposed (e + ◌́). Before Argon2id it is
/// normalised to NFC (docs/FORMAT.md), so it works from any keyboard. ASCII is already NFC
/// and is never copied out of guarded memory.
public enum Passphrase {
    /// The NFC form of `secret` when it is non-ASCII UTF-8 and differs from it; nil otherwise.
    public static func nfcIfDifferent(_ secret: SecretBytes) -> SecretBytes? {
        secret.withUnsafeBytes { raw -> SecretBytes? in
            guard raw.contains(where: { $0 >= 0x80 }), let text = String(validating: raw, as: UTF8.self) else { return nil }
            var normalized = Array(text.precomposedStringWithCanonicalMapping.utf8)
            defer { secureZero(&normalized) }
            guard !normalized.elementsEqual(raw) else { return nil }
            return SecretBytes(consuming: &normalized)
        }
    }

    /// The form every new PIN is stored under.
    public static func normalized(_ secret: SecretBytes) -> SecretBytes { nfcIfDifferent(secret) ?? secret }
}
