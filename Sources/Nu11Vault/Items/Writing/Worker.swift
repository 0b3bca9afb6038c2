// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Runs a job on another thread and signals `done` only once the job has run *and let go of
/// everything it captured*. A dispatch block keeps its captures until it returns, which is
/// after any signal inside it: the thread that waited could finish the command and the
/// process exit while a worker still held the vault. The index was then never closed, its
/// WAL and shared-memory files were left behind, and the next command to open the vault
/// folder — even one refused because the key store is not its pair — checkpointed and
/// removed them: a change to a vault it must not touch. With the job let go first, the thread
/// that waits holds the last references, and the index closes there, before the exit.
///
/// A job that blocks in the kernel for long (a group commit's two `syncfs`) runs on a thread
/// of its own (`blocking`): the shared pool has one thread per core and does not know that a
/// thread of it is waiting for the disk, so that core's encryption would stop meanwhile.
enum Worker {
    static func start(signalling done: DispatchSemaphore, blocking: Bool = false, _ job: @escaping () -> Void) {
        let slot = Slot(job)
        let body: @Sendable () -> Void = {
            slot.run()
            done.signal()
        }
        if blocking {
            let thread = Thread(block: body)
            thread.stackSize = 1 << 20
            thread.start()
        } else {
            DispatchQueue.global(qos: .userInitiated).async(execute: body)
        }
    }

    /// The job, taken out and released by the one run.
    final class Slot: @unchecked Sendable {
        // @unchecked Sendable, and why it is sound: the starting thread hands the job over in
        // `init` and never touches the slot again; only the worker's one `run` reads it.
        private var job: (() -> Void)?

        init(_ job: @escaping () -> Void) { self.job = job }

        func run() {
            let taken = job
            job = nil
            taken?()
        }
    }
}
