// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Nu11Format
import Nu11Vault
import Synchronization

/// The vault, owned by one serial worker thread: every vault call (decrypting, importing,
/// the gate) runs there, never on the GTK main thread, and its result comes back to the main
/// loop through `onMain`. The vault's lock is taken per operation (`Vault.exclusive`), so
/// the command line can use the same vault while the app stays open. Long jobs (an import)
/// are queued a file at a time, so thumbnails of tiles scrolling into view interleave.
///
/// The threading model is the compiler's to check: the work is a `@Sendable` closure that
/// gets the vault as an argument and returns a `Sendable` result; the completion is
/// `@MainActor`. The vault itself sits in a `Mutex` that only the worker takes (so it is
/// never contended), which is what lets a non-`Sendable` `Vault` live in a `Sendable` session.
final class Session: Sendable {
    let locked: LockedVault
    fileprivate let queue = DispatchQueue(label: "nu11vlt.vault", qos: .userInitiated)
    private let vault = Mutex<Vault?>(nil)
    /// Raised by `lock()` on the main thread; a job queued before it finds it raised and runs
    /// nothing, so the keys are zeroed right after the operation in flight.
    private let locks = Atomic<UInt64>(0)

    init(location: VaultLocation) {
        locked = LockedVault(location)
    }

    /// What the app does when the library ended the session under an operation (the PIN was
    /// changed by another program: the keys held no longer open the vault, and the session
    /// cannot follow without the new PIN): the app locks, saying why (`App.lock(reason:)`).
    private let endedByVault = Mutex<(@MainActor (String) -> Void)?>(nil)

    /// Sets what happens when the library ends the session (see `endedByVault`).
    func onEndedByVault(_ body: @escaping @MainActor (String) -> Void) {
        endedByVault.withLock { $0 = body }
    }

    /// Runs `work` on the worker; `done` gets its result on the main thread — unless the
    /// operation ended the session (the vault locked itself): then the app locks instead, and
    /// `done`, whose screen goes away, is not called.
    func run<T: Sendable>(_ work: @escaping @Sendable (Vault) throws -> T,
                          done: @escaping @MainActor (Result<T, any Error>) -> Void) {
        let generation = locks.load(ordering: .acquiring)
        queue.async { [self] in
            var ended = false
            let result = vault.withLock { slot -> Result<T, any Error> in
                guard let vault = slot, locks.load(ordering: .acquiring) == generation else {
                    return .failure(Nu11Error(.invalidArgument, "the vault is locked", remedy: .unlockAgain))
                }
                let result = Result { try vault.exclusive { try work(vault) } }
                if vault.isLocked {
                    // The keys are zeroed already; no later job may find this vault.
                    slot = nil
                    ended = true
                }
                return result
            }
            let hook = ended ? endedByVault.withLock { $0 } : nil
            onMain {
                if let hook {
                    let why = if case .failure(let error as Nu11Error) = result { error.message } else { "the vault was locked" }
                    return hook("Locked: " + why)
                }
                done(result)
            }
        }
    }

    /// Runs locked-state work (the gate, the PIN delay) on the worker.
    func runLocked<T: Sendable>(_ work: @escaping @Sendable (LockedVault) throws -> T,
                                done: @escaping @MainActor (Result<T, any Error>) -> Void) {
        queue.async { [self] in
            let result = Result { try work(locked) }
            onMain { done(result) }
        }
    }

    /// Unlocks with `pin`: the gate runs once, under the vault's lock, then the attempt (the
    /// unlock screen ran the gate when it showed the prompt). The PIN is zeroed by its owner.
    func unlock(pin: SecretBytes, done: @escaping @MainActor (Result<DomainKeys.Role, any Error>) -> Void) {
        queue.async { [self] in
            let result = Result { () throws -> DomainKeys.Role in
                try vault.withLock { slot in
                    let opened = try locked.unlock(pin: pin)
                    opened.releaseLockBetweenOperations()
                    let role = opened.role
                    slot = opened
                    return role
                }
            }
            onMain { done(result) }
        }
    }

    /// Creates the vault at the session's location (first run): Argon2id calibrated on this
    /// machine, a recovery phrase made for it, then the vault opened. Returns the phrase's text,
    /// to be shown once.
    func create(pin: SecretBytes, allowBackups: Bool, done: @escaping @MainActor (Result<String, any Error>) -> Void) {
        queue.async { [self] in
            let result = Result { () throws -> String in
                try LockedVault.validateNewPIN(pin)
                try Strength.refuseCommonPIN(pin)
                let phrase = RecoveryKey.generate()
                var settings = Settings()
                settings.allowBackups = allowBackups
                try LockedVault.create(at: locked.location, pin: pin, parameters: Argon2id.calibrate(), recoveryPhrase: phrase, settings: settings)
                try vault.withLock { slot in
                    let opened = try locked.unlock(pin: pin)
                    opened.releaseLockBetweenOperations()
                    slot = opened
                }
                return RecoveryKey.text(phrase)
            }
            onMain { done(result) }
        }
    }

    /// Unlocks with the security key plugged in (docs/THREAT-MODEL.md, "Security keys"): the
    /// gate, then one touch. `keyPIN`: the key's own PIN typed in the PIN field, for an
    /// enrolment that needs it (nil: none typed). Both secrets are zeroed by their owner.
    func unlock(securityKeyPIN keyPIN: SecretBytes?, done: @escaping @MainActor (Result<DomainKeys.Role, any Error>) -> Void) {
        queue.async { [self] in
            let result = Result { () throws -> DomainKeys.Role in
                guard let device = try LockedVault.findSecurityKey() else {
                    throw Nu11Error(.notFound, "no security key is plugged in", remedy: .useEnrolledSecurityKeyOrPIN)
                }
                return try vault.withLock { slot in
                    let opened = try locked.unlock(securityKey: device, keyPIN: {
                        guard let keyPIN else {
                            throw Nu11Error(.authenticationFailed, "this security key needs its own PIN",
                                            remedy: .advice(.securityKeyPIN(triesLeft: ((try? device.info().retries) ?? nil) ?? 0)))
                        }
                        return keyPIN
                    })
                    opened.releaseLockBetweenOperations()
                    let role = opened.role
                    slot = opened
                    return role
                }
            }
            onMain { done(result) }
        }
    }

    /// Locks without waiting: jobs still queued run nothing, and the worker zeroes the keys
    /// and the preview cache as soon as the operation in flight (one file of an import at
    /// most) returns. The main thread never blocks behind the worker.
    func lock() {
        locks.add(1, ordering: .releasing)
        queue.async { [self] in
            vault.withLock { vault in
                vault?.lock()
                vault = nil
            }
        }
    }
}

extension Session {
    /// At quit: locks and waits until the worker has zeroed the keys (the window is gone,
    /// so waiting blocks nothing a person sees), then the process may exit.
    func close() {
        lock()
        queue.sync {}
    }
}

/// One line for an error, as the app says it.
func describe(_ error: any Error) -> String { Words.describe(error) }
