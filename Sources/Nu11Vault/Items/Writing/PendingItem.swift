// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Media

/// A file of a folder import being encrypted on another thread (`Items.encrypt`), then
/// analysed there (a photo decoded by a helper of the pool): the files in the import's window
/// are encrypted at once, on every core, and as many photos decoded at once as there are
/// helpers (`ImageHelper`); they are sealed and committed in the order given
/// (`Items.importFiles`). The worker owns the open file and closes it.
final class PendingItem: @unchecked Sendable {
    // @unchecked Sendable, and why it is sound: the job and the file are handed over whole —
    // the importing thread touches neither, nor `result`, until `wait` returns, and the
    // semaphore orders the worker's write of `result` before that read. `encrypt` touches
    // only its own files and the vault's immutable location; the temp file's cleanup slot is
    // claimed atomically (`nu11_cleanup_register`).
    typealias Done = (item: EncryptedItem, analysis: (facts: PhotoFacts?, warning: String?))
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<Done, any Error> = .failure(CancellationError())
    private var waited = false

    init(fd: Int32, encrypt: @escaping () throws -> EncryptedItem) {
        // The job (and the vault it holds) is let go before `wait` returns (`Worker`).
        Worker.start(signalling: done) { [self] in
            result = Result {
                defer { close(fd) }
                let item = try encrypt()
                return (item, item.capture?.analyze() ?? (nil, nil))
            }
        }
    }

    /// The encrypted item and its analysis, or what failed (its temp file already removed);
    /// on the importing thread only.
    func wait() -> Result<Done, any Error> {
        if !waited {
            done.wait()
            waited = true
        }
        return result
    }

    /// Waits, then removes what was written (the import stopped before this file).
    func abort() {
        if case .success(let done) = wait() { done.item.writer.abort() }
    }
}
