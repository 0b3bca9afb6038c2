// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// The age payload sealed on two threads: the caller fills slots of 8 chunks (512 KiB) of
/// plaintext — bytes it copies in, or ranges of a `PlaintextRange` (a vault item) that are
/// only noted — and hands each full slot on; a slot's work (reading its ranges, which for a
/// vault item means decrypting them straight into the slot, then sealing its chunks into the
/// slot's output buffer: ChaCha20-Poly1305 through OpenSSL, the STREAM nonces) is done by the
/// sealer thread, or by the caller itself whenever it would otherwise wait; the caller writes
/// sealed slots out in order, one write each. So on two cores a share keeps both busy with
/// the two ciphers and the writes, with no copy between the ciphers. Constant memory: twelve
/// slots (12 MiB).
///
/// A slot's plaintext buffer is zeroed when the payload ends — finished, failed or abandoned
/// (`PlainScratch`, checked by ZeroingWitnessTests) —, so plaintext a failure left in one does
/// not outlive it; its output buffer holds ciphertext only. A payload of one slot is sealed
/// on the caller's thread, with no thread started.
final class AgeSealPipeline {
    /// 8 chunks (512 KiB): a slot's plaintext, its output and the ciphertext read for it fit
    /// in a core's 2 MiB L2 (16-chunk slots measured no faster, within noise).
    static let chunksPerSlot = 8
    static let slotCount = 12
    static var slotPlainBytes: Int { chunksPerSlot * AgePayload.chunkSize }

    private let core: AgeSealCore
    /// The sequence number of the slot being filled, and its plaintext bytes.
    private var current = 0
    private var filled = 0
    /// The oldest slot handed on but not yet written.
    private var nextWrite = 0
    private var started = false

    init(key: SymmetricKey) throws { core = try AgeSealCore(key: key) }

    /// Stops the sealer thread (an abandoned payload); the slots are zeroed as they are freed.
    deinit { core.stop() }

    /// Test seam: every slot's plaintext buffer's witness (see `PlainScratch`).
    var scratchWitness: ((_ label: String, _ point: String, _ bytes: UnsafeRawBufferPointer) -> Void)? {
        get { core.witness }
        set { core.witness = newValue }
    }

    /// Takes plaintext; a full slot is handed on (not final) only once more plaintext follows it.
    func write(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        var index = 0
        while index < bytes.count {
            if filled == Self.slotPlainBytes { try submit(final: false, emit: emit) }
            let n = min(bytes.count - index, Self.slotPlainBytes - filled)
            guard let from = bytes.baseAddress, let to = core.slot(current).plain.bytes.baseAddress else {
                throw Nu11Error(.internalError, "an age slot has no storage")
            }
            (to + filled).copyMemory(from: from + index, byteCount: n)
            filled += n
            index += n
        }
    }

    /// Takes all of `range`'s plaintext, without reading it here: each slot notes the part it
    /// holds, which is read into it by whichever thread seals it.
    func write(range: some PlaintextRange, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        var at: UInt64 = 0
        while at < range.count {
            if filled == Self.slotPlainBytes { try submit(final: false, emit: emit) }
            let n = Int(min(range.count - at, UInt64(Self.slotPlainBytes - filled)))
            core.slot(current).segments.append(AgeSealCore.Segment(source: range, offset: at, at: filled, count: n))
            filled += n
            at += UInt64(n)
        }
    }

    /// Seals the final chunk (the last of the slot being filled) and writes out every slot.
    func finish(emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        try submit(final: true, emit: emit)
        while nextWrite < current {
            if !core.isSealed(nextWrite) && core.helpOne() { continue }
            try writeOldest(emit)
        }
        core.stop()
    }

    private func submit(final: Bool, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        let slot = core.slot(current)
        if !started && final {
            core.sealHere(slot, seq: current, plainCount: filled)
        } else {
            if !started {
                try core.start()
                started = true
            }
            core.queue(slot, seq: current, plainCount: filled, final: final)
        }
        current += 1
        filled = 0
        // What is sealed already goes out. When the slot to fill next still holds one not yet
        // written, the caller seals a queued slot itself rather than wait, and waits only when
        // none is left to take.
        while nextWrite < current {
            if core.isSealed(nextWrite) {
                try writeOldest(emit)
                continue
            }
            if nextWrite + Self.slotCount > current { break }
            if core.helpOne() { continue }
            try writeOldest(emit)
        }
    }

    private func writeOldest(_ emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        let slot = core.waitSealed(nextWrite)
        if let error = slot.error { throw error }
        try emit(UnsafeRawBufferPointer(rebasing: slot.sealed[0..<slot.sealedCount]))
        core.free(slot)
        nextWrite += 1
    }
}

/// Hands a sealer thread its own cipher context (used by that thread only).
final class CipherBox: @unchecked Sendable {
    let cipher: ChunkCipher
    init(_ cipher: ChunkCipher) { self.cipher = cipher }
}

/// The slots and the sealer thread, shared by the caller's thread and the sealer under one lock.
final class AgeSealCore: @unchecked Sendable {
    // @unchecked Sendable: a slot's buffers and segments belong to the caller while it is
    // free, to whichever thread claimed it while it is worked on, and to the caller again once
    // sealed; every change of hands happens under `lock`. Each thread seals with a cipher
    // context of its own.
    enum State { case free, queued, working, sealed }

    /// Part of a slot's plaintext that is read from a range when the slot is worked on.
    struct Segment {
        let source: any PlaintextRange
        let offset: UInt64
        let at: Int
        let count: Int
    }

    final class Slot {
        let plain: PlainScratch
        /// Chunk j sealed at j × (64 KiB + 16): ciphertext only.
        let sealed: UnsafeMutableRawBufferPointer
        var segments: [Segment] = []
        var state = State.free
        var seq = -1
        var plainCount = 0
        var final = false
        var sealedCount = 0
        var error: Nu11Error?
        init(witness: ((String, String, UnsafeRawBufferPointer) -> Void)?) {
            plain = PlainScratch(capacity: AgeSealPipeline.chunksPerSlot * AgePayload.chunkSize, label: "AgeSealPipeline.slot")
            plain.witness = witness
            sealed = .allocate(byteCount: AgeSealPipeline.chunksPerSlot * AgePayload.sealedChunkSize, alignment: 64)
            sealed.initializeMemory(as: UInt8.self, repeating: 0)
        }
        deinit {
            Sodium.zero(sealed)
            sealed.deallocate()
        }
    }

    private let key: SymmetricKey
    /// The caller's cipher context, and the sealer thread's (made before it starts).
    private let cipher: ChunkCipher
    /// One sealer thread: with the caller it keeps two cores busy (a second one measured no
    /// faster on two cores).
    static let sealerCount = 1
    private let lock = PipelineLock()
    /// Slot 0 at once; the others when the sealer thread starts (a small file needs one).
    private var slots: [Slot]
    private var nextClaim = 0
    private var stopping = false
    private var running = 0
    private var stopped = false
    var witness: ((String, String, UnsafeRawBufferPointer) -> Void)? {
        didSet { for slot in slots { slot.plain.witness = witness } }
    }

    init(key: SymmetricKey) throws {
        self.key = key
        cipher = try ChunkCipher(algorithm: .chacha20Poly1305, key: key)
        slots = [Slot(witness: nil)]
    }

    func slot(_ seq: Int) -> Slot { slots[seq % slots.count] }

    /// Makes the other slots and starts the sealer thread (on the caller's thread, once).
    func start() throws {
        let ciphers = try (0..<Self.sealerCount).map { _ in try CipherBox(ChunkCipher(algorithm: .chacha20Poly1305, key: key)) }
        slots += (1..<AgeSealPipeline.slotCount).map { _ in Slot(witness: witness) }
        lock.lock()
        running = ciphers.count
        lock.unlock()
        for box in ciphers {
            let thread = Thread { [self] in run(box.cipher) }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    func queue(_ slot: Slot, seq: Int, plainCount: Int, final: Bool) {
        lock.lock()
        slot.seq = seq
        slot.plainCount = plainCount
        slot.final = final
        slot.state = .queued
        lock.broadcast(.work)
        lock.unlock()
    }

    /// Seals the final slot on the caller's thread (no sealer thread was started).
    func sealHere(_ slot: Slot, seq: Int, plainCount: Int) {
        slot.seq = seq
        slot.plainCount = plainCount
        slot.final = true
        process(slot, cipher: cipher)
        lock.lock()
        slot.state = .sealed
        nextClaim = seq + 1
        lock.unlock()
    }

    /// Works on the oldest queued slot on the caller's thread, if one is waiting; false if none.
    func helpOne() -> Bool {
        lock.lock()
        guard let slot = claim() else {
            lock.unlock()
            return false
        }
        lock.unlock()
        process(slot, cipher: cipher)
        lock.lock()
        slot.state = .sealed
        lock.broadcast(.done)
        lock.unlock()
        return true
    }

    /// The next queued slot, marked as worked on (under the lock).
    private func claim() -> Slot? {
        let slot = slot(nextClaim)
        guard slot.state == .queued && slot.seq == nextClaim else { return nil }
        slot.state = .working
        nextClaim += 1
        return slot
    }

    func isSealed(_ seq: Int) -> Bool {
        let slot = slot(seq)
        lock.lock()
        defer { lock.unlock() }
        return slot.state == .sealed && slot.seq == seq
    }

    func waitSealed(_ seq: Int) -> Slot {
        let slot = slot(seq)
        lock.lock()
        while !(slot.state == .sealed && slot.seq == seq) { lock.wait(.done) }
        lock.unlock()
        return slot
    }

    func free(_ slot: Slot) {
        lock.lock()
        slot.state = .free
        slot.error = nil
        slot.segments.removeAll(keepingCapacity: true)
        lock.unlock()
    }

    /// Stops the sealer thread, waits for it, and zeroes every slot (the witness sees each
    /// one "stopped"; after that it is told nothing, as the thread may free the slots). Once.
    func stop() {
        lock.lock()
        if stopped {
            lock.unlock()
            return
        }
        stopping = true
        lock.broadcast(.work)
        while running > 0 { lock.wait(.done) }
        stopped = true
        lock.unlock()
        for slot in slots {
            slot.segments = []
            slot.plain.wipe("stopped")
            slot.plain.witness = nil
        }
    }

    private func run(_ own: ChunkCipher) {
        lock.lock()
        while true {
            var next = claim()
            while !stopping && next == nil {
                lock.wait(.work)
                next = claim()
            }
            guard !stopping, let slot = next else { break }
            lock.unlock()
            process(slot, cipher: own)
            lock.lock()
            slot.state = .sealed
            lock.broadcast(.done)
        }
        running -= 1
        lock.broadcast(.done)
        lock.unlock()
    }

    /// Reads the slot's ranges into its plaintext, then seals its chunks into its output:
    /// chunk j at j × (64 KiB + 16), its tag after it; the final flag on the last chunk of the
    /// final slot.
    private func process(_ slot: Slot, cipher: ChunkCipher) {
        let chunk = AgePayload.chunkSize, sealed = AgePayload.sealedChunkSize
        let count = max(1, (slot.plainCount + chunk - 1) / chunk)
        let plain = slot.plain.bytes
        do {
            for segment in slot.segments {
                try segment.source.read(at: segment.offset,
                                        into: UnsafeMutableRawBufferPointer(rebasing: plain[segment.at..<(segment.at + segment.count)]))
            }
            for j in 0..<count {
                let length = min(chunk, slot.plainCount - j * chunk)
                let at = j * sealed
                let counter = UInt64(slot.seq) * UInt64(AgeSealPipeline.chunksPerSlot) + UInt64(j)
                let nonce = AgePayload.chunkNonce(counter, final: slot.final && j == count - 1)
                try cipher.seal(UnsafeRawBufferPointer(rebasing: plain[(j * chunk)..<(j * chunk + length)]), nonce: nonce,
                                into: UnsafeMutableRawBufferPointer(rebasing: slot.sealed[at..<(at + length + AgePayload.tagSize)]))
            }
            slot.sealedCount = slot.plainCount + count * AgePayload.tagSize
        } catch {
            slot.error = error as? Nu11Error ?? Nu11Error(.internalError, "sealing an age chunk failed")
        }
    }
}
