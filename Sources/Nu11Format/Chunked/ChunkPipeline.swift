// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// The content path: input → sealers/openers on every core → output, in batches of 16 chunks
/// held in a fixed ring of reusable buffers, so the disk and the cipher overlap and memory
/// stays bounded (about 4 MiB whatever the size).
///
/// A regular file is mapped batch by batch by the worker that processes it (no read copy, no
/// reader thread); any other input is read by a reader thread. The caller's thread takes the
/// output in order (`next`). A message of one batch runs on the caller's thread alone.
final class ChunkPipeline: @unchecked Sendable {
    enum Direction { case seal, open }

    enum Input {
        /// `length` bytes of a regular file from `offset`.
        case mapped(fd: Int32, offset: UInt64, length: UInt64)
        /// Fills the buffer as far as the input goes; fewer bytes only at the end.
        case stream(any BatchReader)
    }

    /// Chunks per batch: 64 (1 MiB) for streams and large files; a smaller file is cut into
    /// at least two batches per worker (down to 16 chunks) so every core has work.
    static let chunksPerBatch = 64
    static let minChunksPerBatch = 16
    static var slotCount: Int { 6 }
    /// Every core but one: the caller's thread writes, and the kernel's page-cache work behind
    /// each write (page allocation and copy — what `cp` itself costs) wants a core of its own.
    /// Measured on 2 cores: 2 workers + the writer ran 1.2 s per GiB, 1 worker + the writer
    /// less (bench/results).
    static var workerCount: Int { max(1, min(ProcessInfo.processInfo.activeProcessorCount - 1, 8)) }

    private let direction: Direction
    private let algorithm: ChunkAlgorithm
    private let key: SymmetricKey
    private let baseNonce: [UInt8]
    let input: Input
    /// Chunks, input and output bytes of a full batch.
    private let perBatch: Int
    private let inBatch: Int
    private let outBatch: Int
    /// Mapped input: the number of batches (the last holds the final chunk).
    private let mappedBatches: Int

    private let lock = PipelineLock()
    private var slots: [Slot] = []
    private var nextRead = 0       // stream: the next batch the reader fills
    private var nextClaim = 0      // the next batch a worker takes
    private var nextOut = 0        // the next batch the caller takes
    private var finalBatch = Int.max
    private var stopping = false
    private var live = 0
    private var started = false
    private var closed = false
    /// The plaintext bytes handed through so far (sealed or opened).
    private(set) var plaintextCount: UInt64 = 0

    init(direction: Direction, algorithm: ChunkAlgorithm, key: SymmetricKey, baseNonce: [UInt8], input: Input) {
        self.direction = direction
        self.algorithm = algorithm
        self.key = key
        self.baseNonce = baseNonce
        self.input = input
        let chunk = ChunkedScheme.chunkSize, sealed = chunk + 16
        let unit = direction == .seal ? chunk : sealed
        if case .mapped(_, _, let length) = input {
            let share = Int(min(length / UInt64(2 * Self.workerCount * unit), UInt64(Self.chunksPerBatch)))
            perBatch = max(Self.minChunksPerBatch, share)
            inBatch = perBatch * unit
            // The final chunk rides in the last batch (room for one more chunk's tag — an
            // empty final chunk — is kept in every output buffer).
            let tail: UInt64 = direction == .open ? 16 : 0
            mappedBatches = length <= tail ? 1 : Int((length - tail + UInt64(inBatch) - 1) / UInt64(inBatch))
        } else {
            perBatch = Self.chunksPerBatch
            inBatch = perBatch * unit
            mappedBatches = 0
        }
        outBatch = perBatch * (direction == .seal ? sealed : chunk) + 16
    }

    deinit { close() }

    /// Hands the next output batch to `body` in order (on a failed batch, the part before the
    /// failure, then the error is thrown). False once the final batch has been handed out.
    func next(_ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        if closed { return false }  // after the final batch or an error
        if !started { try start() }
        let slot = slots[nextOut % slots.count]
        lock.lock()
        while slot.state != .done || slot.seq != nextOut { lock.wait(.done) }
        lock.unlock()
        if slot.outLength > 0 {
            try body(UnsafeRawBufferPointer(rebasing: slot.output[0..<slot.outLength]))
        }
        plaintextCount += UInt64(direction == .seal ? slot.inputLength : slot.outLength)
        if let error = slot.error {
            close()
            throw error
        }
        let wasFinal = slot.final
        lock.lock()
        slot.state = .free
        nextOut += 1
        lock.broadcast(isMapped ? .work : .freed)
        lock.unlock()
        if wasFinal { close() }
        return !wasFinal
    }

    /// Test seam: sees each slot's buffers once `close` has zeroed them, before they are freed
    /// (PipelineTests checks that no plaintext or ciphertext is left in them).
    var releaseWitness: ((_ plain: UnsafeMutableRawBufferPointer, _ output: UnsafeMutableRawBufferPointer, _ used: Int) -> Void)?

    /// Stops the threads, waits for them, and zeroes and frees the buffers. Idempotent.
    func close() {
        lock.lock()
        if closed {
            lock.unlock()
            return
        }
        stopping = true
        lock.broadcast(.work)
        lock.broadcast(.freed)
        while live > 0 { lock.wait(.done) }
        closed = true
        lock.unlock()
        for slot in slots { slot.release(witness: releaseWitness) }
        slots = []
    }

    private func start() throws {
        started = true
        let count: Int
        if case .mapped = input { count = min(Self.slotCount, mappedBatches) } else { count = Self.slotCount }
        // The first batch on the caller's thread: a message of one batch needs no thread and
        // no more than one slot.
        slots = [Slot(inputBytes: inBatch, outputBytes: outBatch, stream: !isMapped)]
        if case .stream(let read) = input {
            try fill(slots[0], seq: 0, read: read)
            slots[0].state = .filled
            nextRead = 1
            if slots[0].final {
                process(slots[0], cipher: nil)
                slots[0].state = .done
                nextClaim = 1
                return
            }
        } else if mappedBatches == 1 {
            slots[0].seq = 0
            process(slots[0], cipher: nil)
            slots[0].state = .done
            nextClaim = 1
            return
        }
        slots += (1..<count).map { _ in Slot(inputBytes: inBatch, outputBytes: outBatch, stream: !isMapped) }
        let workers = Self.workerCount
        lock.lock()
        live = workers + (isMapped ? 0 : 1)
        lock.unlock()
        for _ in 0..<workers { spawn { self.work() } }
        if case .stream(let read) = input { spawn { self.readAll(read) } }
    }

    private var isMapped: Bool {
        if case .mapped = input { return true }
        return false
    }

    private func spawn(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread { body() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func exitThread() {
        lock.lock()
        live -= 1
        lock.broadcast(.done)
        lock.unlock()
    }

    // MARK: the reader (stream input)

    private func readAll(_ read: any BatchReader) {
        defer { exitThread() }
        while true {
            let seq: Int
            let slot: Slot
            lock.lock()
            while !stopping && nextRead < finalBatch && slots[nextRead % slots.count].state != .free { lock.wait(.freed) }
            if stopping || nextRead >= finalBatch {
                lock.unlock()
                return
            }
            seq = nextRead
            slot = slots[seq % slots.count]
            slot.state = .reading
            lock.unlock()
            do {
                try fill(slot, seq: seq, read: read)
            } catch {
                slot.inputLength = 0
                slot.final = true
                slot.error = error as? Nu11Error ?? Nu11Error(.io, "reading the input failed: \(error)")
            }
            lock.lock()
            slot.state = .filled
            nextRead += 1
            if slot.final { finalBatch = seq }
            lock.broadcast(.work)
            lock.unlock()
        }
    }

    private func fill(_ slot: Slot, seq: Int, read: any BatchReader) throws {
        slot.seq = seq
        slot.error = nil
        slot.inputLength = try read.readBatch(into: slot.plain)
        slot.final = slot.inputLength < inBatch
        slot.used = max(slot.used, slot.inputLength)
    }

    // MARK: the workers

    private func work() {
        defer { exitThread() }
        var cipher: ChunkCipher?
        while true {
            let slot: Slot
            lock.lock()
            while !stopping && !claimable() { lock.wait(.work) }
            if stopping {
                lock.unlock()
                return
            }
            let seq = nextClaim
            nextClaim += 1
            slot = slots[seq % slots.count]
            slot.seq = seq
            slot.state = .working
            lock.unlock()
            if cipher == nil { cipher = try? ChunkCipher(algorithm: algorithm, key: key) }
            process(slot, cipher: cipher)
            lock.lock()
            slot.state = .done
            lock.broadcast(.done)
            lock.unlock()
        }
    }

    /// Whether batch `nextClaim` can be taken (called under the lock).
    private func claimable() -> Bool {
        let slot = slots[nextClaim % slots.count]
        if isMapped { return nextClaim < mappedBatches && slot.state == .free }
        return slot.state == .filled && slot.seq == nextClaim
    }

    /// Runs the cipher over one batch; the outcome is left in the slot.
    private func process(_ slot: Slot, cipher given: ChunkCipher?) {
        var mapping: MappedInput?
        defer {
            mapping?.unmap()
            slot.used = max(slot.used, slot.outLength)
        }
        do {
            if let error = slot.error { throw error }
            let cipher = try given ?? ChunkCipher(algorithm: algorithm, key: key)
            let first = UInt64(slot.seq) * UInt64(perBatch)
            let data: UnsafeRawBufferPointer
            if case .mapped(let fd, let offset, let length) = input {
                let start = UInt64(slot.seq) * UInt64(inBatch)
                let count = Int(slot.seq == mappedBatches - 1 ? length - start : UInt64(inBatch))
                slot.final = slot.seq == mappedBatches - 1
                slot.inputLength = count
                if count > 0 {
                    let mapped = try MappedInput(fd: fd, offset: offset + start, count: count)
                    mapping = mapped
                    data = mapped.bytes
                } else {
                    data = UnsafeRawBufferPointer(start: nil, count: 0)
                }
            } else {
                data = UnsafeRawBufferPointer(rebasing: slot.plain[0..<slot.inputLength])
            }
            slot.outLength = 0
            switch direction {
            case .seal: try seal(data, slot: slot, first: first, cipher: cipher)
            case .open: try open(data, slot: slot, first: first, cipher: cipher)
            }
        } catch {
            slot.error = error as? Nu11Error ?? Nu11Error(.internalError, "the cipher failed: \(error)")
        }
    }

    private func seal(_ data: UnsafeRawBufferPointer, slot: Slot, first: UInt64, cipher: ChunkCipher) throws {
        let count = data.count / ChunkedScheme.chunkSize + (slot.final ? 1 : 0)
        guard first + UInt64(count) <= ChunkedScheme.maxChunks else {
            throw Nu11Error(.invalidArgument, "message exceeds 2^38 chunks", remedy: .advice(.splitInput))
        }
        try cipher.sealChunks(baseNonce: baseNonce, first: first, input: data, final: slot.final, output: slot.output)
        slot.outLength = data.count + count * 16
    }

    private func open(_ data: UnsafeRawBufferPointer, slot: Slot, first: UInt64, cipher: ChunkCipher) throws {
        let sealed = ChunkedScheme.chunkSize + 16
        // The well-formed part: whole chunks, and a final chunk of at least a tag.
        let tail = data.count % sealed
        let whole = slot.final && tail < 16 ? data.count - tail : data.count
        guard first + UInt64((whole + sealed - 1) / sealed) <= ChunkedScheme.maxChunks else {
            throw ChunkedScheme.tooManyChunks()
        }
        let (written, failed) = try cipher.openChunks(baseNonce: baseNonce, first: first,
                                                      input: UnsafeRawBufferPointer(rebasing: data[0..<whole]),
                                                      output: slot.output)
        slot.outLength = written
        if let failed {
            throw ChunkedScheme.chunkFailed(failed)
        }
        guard slot.final else { return }
        if tail == 0 {
            throw ChunkedScheme.noFinalChunk()
        }
        if tail < 16 {
            throw ChunkedScheme.endsInsideTag()
        }
    }
}

/// One batch's buffers, reused for batch `seq`, `seq + slotCount`, …
private final class Slot {
    enum State { case free, reading, filled, working, done }
    let plain: UnsafeMutableRawBufferPointer
    let output: UnsafeMutableRawBufferPointer
    var state = State.free
    var seq = -1
    var inputLength = 0
    var outLength = 0
    var final = false
    var error: Nu11Error?
    /// The most bytes either buffer ever held: what `release` zeroes.
    var used = 0

    init(inputBytes: Int, outputBytes: Int, stream: Bool) {
        plain = .allocate(byteCount: stream ? inputBytes : 0, alignment: 64)
        output = .allocate(byteCount: outputBytes, alignment: 64)
    }

    func release(witness: ((UnsafeMutableRawBufferPointer, UnsafeMutableRawBufferPointer, Int) -> Void)? = nil) {
        Sodium.zero(UnsafeMutableRawBufferPointer(rebasing: plain[0..<min(used, plain.count)]))
        Sodium.zero(UnsafeMutableRawBufferPointer(rebasing: output[0..<min(used + 256, output.count)]))
        witness?(plain, output, used)
        plain.deallocate()
        output.deallocate()
    }
}
