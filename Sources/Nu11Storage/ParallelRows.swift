// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format

/// `body` over many values on every core (at most 8 workers; one, the caller's thread, below
/// `serialBelow` values: cheap values are not worth a thread below a few hundred), results in
/// the values' order; the first failure wins. What a key rotation's packs and rows, and a
/// listing's sealed metadata, are computed with.
public enum ParallelRows {
    public static func map<T: Sendable, R: Sendable>(_ values: [T], serialBelow: Int = 256,
                                                     _ body: @Sendable (T) throws -> R) throws -> [R] {
        try map(values, serialBelow: serialBelow, worker: { () }) { value, _ in try body(value) }
    }

    /// The same, each worker with state of its own made by `worker` (a decoder, say) and given
    /// to every call of that worker.
    public static func map<T: Sendable, S, R: Sendable>(_ values: [T], serialBelow: Int = 256, worker: @Sendable () -> S,
                                                        _ body: @Sendable (T, S) throws -> R) throws -> [R] {
        let workers = values.count < max(2, serialBelow) ? 1 : max(1, min(8, ProcessInfo.processInfo.activeProcessorCount))
        if workers == 1 {
            let state = worker()
            return try values.map { try body($0, state) }
        }
        let results = Slots<R>(count: values.count)
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            let state = worker()
            var local: [(Int, R)] = []
            local.reserveCapacity(values.count / workers + 1)
            for i in stride(from: w, to: values.count, by: workers) {
                do { local.append((i, try body(values[i], state))) } catch {
                    results.fail(error)
                    return
                }
            }
            results.set(local)
        }
        return try results.all()
    }

    /// Each slot written by exactly one worker, under one lock per worker.
    private final class Slots<R: Sendable>: @unchecked Sendable {
        private var values: [R?]
        private var failure: (any Error)?
        private let lock = NSLock()
        init(count: Int) { values = Array(repeating: nil, count: count) }
        func set(_ pairs: [(Int, R)]) { lock.withLock { for (i, value) in pairs { values[i] = value } } }
        func fail(_ error: any Error) { lock.withLock { if failure == nil { failure = error } } }
        func all() throws -> [R] {
            if let failure { throw failure }
            let all = values.compactMap { $0 }
            guard all.count == values.count else { throw Nu11Error(.internalError, "a worker left a value without its result") }
            return all
        }
    }
}
