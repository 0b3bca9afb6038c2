// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Nu11Format
import Nu11Vault

/// The vault, owned by one serial worker thread: every vault call (decrypting, importing,
/// the gate) runs there, never on the GTK main thread, and its result comes back to the main
/// loop through `onMain`. The vault's lock is taken per operation (`Vault.exclusive`), so
/// the command line can use the same vault while the app stays open. Long jobs (an import)
/// are queued a file at a time, so thumbnails of tiles scrolling into view interleave.
final class Session: @unchecked Sendable {
    let locked: LockedVault
    private let queue = DispatchQueue(label: "nu11vlt.vault", qos: .userInitiated)
    /// Touched only on `queue`.
    private var vault: Vault?

    init(location: VaultLocation) {
        locked = LockedVault(location)
    }

    /// Runs `work` on the worker; `done` gets its result on the main thread.
    func run<T>(_ work: @escaping (Vault) throws -> T, done: @escaping (Result<T, any Error>) -> Void) {
        let job = Job(work, done)
        queue.async { [self] in
            let (work, done) = (job.work, job.done)
            let result: Result<T, any Error>
            if let vault {
                result = Result { try vault.exclusive { try work(vault) } }
            } else {
                result = .failure(Nu11Error(.invalidArgument, "the vault is locked", remedy: "unlock it again"))
            }
            let box = ResultBox(result)
            onMain { done(box.value) }
        }
    }

    /// Runs locked-state work (the gate, the PIN delay) on the worker.
    func runLocked<T>(_ work: @escaping (LockedVault) throws -> T, done: @escaping (Result<T, any Error>) -> Void) {
        let job = Job(work, done)
        queue.async { [self] in
            let (work, done) = (job.work, job.done)
            let box = ResultBox(Result { try work(locked) })
            onMain { done(box.value) }
        }
    }

    /// Unlocks with `pin` (the gate runs first, as in the CLI); the PIN is zeroed by its owner.
    func unlock(pin: SecretBytes, done: @escaping (Result<DomainKeys.Role, any Error>) -> Void) {
        let job = Job<Void, DomainKeys.Role>({ _ in .primary }, done)
        queue.async { [self] in
            let done = job.done
            let result = Result { () throws -> DomainKeys.Role in
                let v = try locked.unlock(pin: pin)
                v.releaseLockBetweenOperations()
                vault = v
                return v.role
            }
            let box = ResultBox(result)
            onMain { done(box.value) }
        }
    }

    /// Zeroes the keys and the preview cache now (waits for the operation in flight).
    func lock() {
        queue.sync {
            vault?.lock()
            vault = nil
        }
    }
}

/// A job and its completion, handed to the worker (the closures run on the worker and on the
/// main thread respectively; what they capture is used by one thread at a time).
final class Job<In, T>: @unchecked Sendable {
    let work: (In) throws -> T
    let done: (Result<T, any Error>) -> Void
    init(_ work: @escaping (In) throws -> T, _ done: @escaping (Result<T, any Error>) -> Void) {
        self.work = work
        self.done = done
    }
}

/// Carries a result across threads (the values are plain data or main-thread-only use).
final class ResultBox<T>: @unchecked Sendable {
    let value: Result<T, any Error>
    init(_ value: Result<T, any Error>) { self.value = value }
}

/// One line for an error, as the CLI says it.
func describe(_ error: any Error) -> String { Words.describe(error) }
