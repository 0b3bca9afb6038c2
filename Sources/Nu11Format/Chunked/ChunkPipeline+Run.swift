// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// What the reader thread reads batches from.
protocol BatchReader: AnyObject, Sendable {
    /// Fills `buffer` as far as the input goes; fewer bytes only at the end.
    func readBatch(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// Carries a caller's source to the reader thread; only that thread touches it until the
/// pipeline has closed, and then the caller takes it back.
final class SourceBox<S: ByteSource>: BatchReader, @unchecked Sendable {
    var source: S
    init(_ source: S) { self.source = source }
    func readBatch(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try source.readFully(into: buffer) }
}

extension ChunkPipeline {
    /// Runs `source` through a pipeline into `sink`; returns the plaintext byte count. A
    /// regular file of at least one batch is mapped; anything else is read.
    static func run<AEAD: ChunkAEAD>(_ direction: Direction, _: AEAD.Type, keys: MessageKeys<AEAD>,
                                     from source: inout some ByteSource, to sink: inout some ByteSink) throws -> UInt64 {
        let box = SourceBox(source)
        let region = source.mappableRegion().flatMap { $0.length >= UInt64(2 * minChunksPerBatch * ChunkedScheme.chunkSize) ? $0 : nil }
        let input: Input = region.map { .mapped(fd: $0.fd, offset: $0.offset, length: $0.length) }
            ?? .stream(box)
        let pipeline = ChunkPipeline(direction: direction, algorithm: AEAD.algorithm, key: keys.key,
                                     baseNonce: keys.baseNonce, input: input)
        defer {
            pipeline.close()
            source = box.source
            if let region { region.consumed() }
        }
        while try pipeline.next({ try sink.write($0) }) {}
        return pipeline.plaintextCount
    }
}

/// One mutex and three conditions (a slot was freed, there is work, a batch is done), so a
/// change wakes only the threads that wait for it.
final class PipelineLock: @unchecked Sendable {
    enum Event: Int { case freed = 0, work = 1, done = 2 }
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let conditions = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 3)

    init() {
        pthread_mutex_init(mutex, nil)
        for i in 0..<3 { pthread_cond_init(conditions + i, nil) }
    }

    deinit {
        for i in 0..<3 { pthread_cond_destroy(conditions + i) }
        pthread_mutex_destroy(mutex)
        conditions.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func wait(_ event: Event) { pthread_cond_wait(conditions + event.rawValue, mutex) }
    func broadcast(_ event: Event) { pthread_cond_broadcast(conditions + event.rawValue) }
}
