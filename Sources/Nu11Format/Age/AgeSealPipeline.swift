// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The age payload sealed off the caller's thread: the caller copies plaintext into slots of
/// 16 chunks (1 MiB), laid out as they will be written (each chunk followed by room for its
/// tag); one sealer thread seals each slot in place (ChaCha20-Poly1305 through OpenSSL, the
/// STREAM nonces) and the caller writes the sealed slot out in one write. So a share keeps
/// three threads busy — the vault's decryption, this sealing, and the writes — instead of
/// sealing and writing on one. Constant memory: four slots.
///
/// A slot is sealed in place, so once sealed it holds ciphertext only; every slot is zeroed
/// when the payload ends — finished, failed or abandoned (`PlainScratch`, checked by
/// ZeroingWitnessTests) — so plaintext a failure left in one does not outlive it. A payload
/// of one slot is sealed on the caller's thread, with no thread started.
final class AgeSealPipeline {
    static let chunksPerSlot = 16
    static let slotCount = 4
    static var slotPlainBytes: Int { chunksPerSlot * AgePayload.chunkSize }

    private let core: AgeSealCore
    /// The sequence number of the slot being filled, and its plaintext bytes.
    private var current = 0
    private var filled = 0
    /// The oldest slot handed on but not yet written.
    private var nextWrite = 0
    private var started = false

    init(cipher: ChunkCipher) { core = AgeSealCore(cipher: cipher) }

    /// Stops the sealer thread (an abandoned payload); the slots are zeroed as they are freed.
    deinit { core.stop() }

    /// Test seam: every slot buffer's witness (see `PlainScratch`).
    var scratchWitness: ((_ label: String, _ point: String, _ bytes: UnsafeRawBufferPointer) -> Void)? {
        get { core.witness }
        set { core.witness = newValue }
    }

    /// Takes plaintext; a full slot is handed on (not final) only once more plaintext follows it.
    func write(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        let chunk = AgePayload.chunkSize
        var index = 0
        while index < bytes.count {
            if filled == Self.slotPlainBytes { try submit(final: false, emit: emit) }
            let inChunk = filled % chunk
            let n = min(bytes.count - index, chunk - inChunk)
            let at = (filled / chunk) * AgePayload.sealedChunkSize + inChunk
            guard let from = bytes.baseAddress, let to = core.slot(current).buffer.bytes.baseAddress else {
                throw Nu11Error(.internalError, "an age slot has no storage")
            }
            (to + at).copyMemory(from: from + index, byteCount: n)
            filled += n
            index += n
        }
    }

    /// Seals the final chunk (the last of the slot being filled) and writes out every slot.
    func finish(emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        try submit(final: true, emit: emit)
        while nextWrite < current { try writeOldest(emit) }
        core.stop()
    }

    private func submit(final: Bool, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        let slot = core.slot(current)
        if !started && final {
            core.sealHere(slot, seq: current, plainCount: filled)
        } else {
            if !started {
                core.start()
                started = true
            }
            core.queue(slot, seq: current, plainCount: filled, final: final)
        }
        current += 1
        filled = 0
        // What is sealed already goes out; the caller waits only when the slot it fills next
        // still holds a slot's ciphertext that has not been written.
        while nextWrite < current {
            if !core.isSealed(nextWrite) && nextWrite + Self.slotCount > current { break }
            try writeOldest(emit)
        }
    }

    private func writeOldest(_ emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        let slot = core.waitSealed(nextWrite)
        if let error = slot.error { throw error }
        try emit(UnsafeRawBufferPointer(rebasing: slot.buffer.bytes[0..<slot.sealedCount]))
        core.free(slot)
        nextWrite += 1
    }
}

/// The slots and the sealer thread, shared by the caller's thread and the sealer under one lock.
final class AgeSealCore: @unchecked Sendable {
    // @unchecked Sendable: a slot's buffer belongs to the caller while it is free, to the
    // sealer while it is queued, and to the caller again once sealed; every change of hands
    // happens under `lock`. The cipher is used by one thread at a time (the caller's only
    // when no sealer thread was started).
    enum State { case free, queued, sealed }

    final class Slot {
        let buffer: PlainScratch
        var state = State.free
        var seq = -1
        var plainCount = 0
        var final = false
        var sealedCount = 0
        var error: Nu11Error?
        init(witness: ((String, String, UnsafeRawBufferPointer) -> Void)?) {
            buffer = PlainScratch(capacity: AgeSealPipeline.chunksPerSlot * AgePayload.sealedChunkSize, label: "AgeSealPipeline.slot")
            buffer.witness = witness
        }
    }

    private let cipher: ChunkCipher
    private let lock = PipelineLock()
    /// Slot 0 at once; the others when the sealer thread starts (a small file needs one).
    private var slots: [Slot]
    private var nextSeal = 0
    private var stopping = false
    private var running = false
    private var stopped = false
    var witness: ((String, String, UnsafeRawBufferPointer) -> Void)? {
        didSet { for slot in slots { slot.buffer.witness = witness } }
    }

    init(cipher: ChunkCipher) {
        self.cipher = cipher
        slots = [Slot(witness: nil)]
    }

    func slot(_ seq: Int) -> Slot { slots[seq % slots.count] }

    /// Makes the other slots and starts the sealer thread (on the caller's thread, once).
    func start() {
        slots += (1..<AgeSealPipeline.slotCount).map { _ in Slot(witness: witness) }
        lock.lock()
        running = true
        lock.unlock()
        let thread = Thread { [self] in run() }
        thread.stackSize = 1 << 20
        thread.start()
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
        seal(slot)
        lock.lock()
        slot.state = .sealed
        lock.unlock()
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
        while running { lock.wait(.done) }
        stopped = true
        lock.unlock()
        for slot in slots {
            slot.buffer.wipe("stopped")
            slot.buffer.witness = nil
        }
    }

    private func run() {
        lock.lock()
        while true {
            let slot = slots[nextSeal % slots.count]
            while !stopping && !(slot.state == .queued && slot.seq == nextSeal) { lock.wait(.work) }
            if stopping { break }
            lock.unlock()
            seal(slot)
            lock.lock()
            slot.state = .sealed
            nextSeal += 1
            lock.broadcast(.done)
        }
        running = false
        lock.broadcast(.done)
        lock.unlock()
    }

    /// Seals a slot's chunks in place: chunk j at j × (64 KiB + 16), its tag after it; the
    /// final flag on the last chunk of the final slot.
    private func seal(_ slot: Slot) {
        let chunk = AgePayload.chunkSize, sealed = AgePayload.sealedChunkSize
        let count = max(1, (slot.plainCount + chunk - 1) / chunk)
        let buffer = slot.buffer.bytes
        do {
            for j in 0..<count {
                let length = min(chunk, slot.plainCount - j * chunk)
                let at = j * sealed
                let counter = UInt64(slot.seq) * UInt64(AgeSealPipeline.chunksPerSlot) + UInt64(j)
                let nonce = AgePayload.chunkNonce(counter, final: slot.final && j == count - 1)
                try cipher.seal(UnsafeRawBufferPointer(rebasing: buffer[at..<(at + length)]), nonce: nonce,
                                into: UnsafeMutableRawBufferPointer(rebasing: buffer[at..<(at + length + AgePayload.tagSize)]))
            }
            slot.sealedCount = slot.plainCount + count * AgePayload.tagSize
        } catch {
            slot.error = error as? Nu11Error ?? Nu11Error(.internalError, "sealing an age chunk failed")
        }
    }
}
