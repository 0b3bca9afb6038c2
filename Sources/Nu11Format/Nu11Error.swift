// SPDX-License-Identifier: GPL-3.0-or-later
/// The one public error type of Nu11VLT.
///
/// A struct that can grow (like swift-log's and SwiftNIO's errors): a stable `code` that
/// scripts and the CLI's exit codes rely on, a message that says what failed and on which
/// item, and a remedy. Messages never carry a secret: no PIN, key or plaintext.
public struct Nu11Error: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// Wrong PIN/passphrase — or a key record that does not open. Deliberately the same.
        case authenticationFailed
        /// A ciphertext or record failed authentication (tampered, corrupted, wrong key/context).
        case corrupted
        /// A ciphertext ended before its final chunk.
        case truncated
        /// A file declares a version or algorithm this build does not read.
        case unsupportedVersion
        /// A caller passed a value outside its documented range.
        case invalidArgument
        /// Cost parameters read from a file exceed the hard cap.
        case costTooHigh
        /// Something that should exist does not (vault, item, album, file).
        case notFound
        /// Something that must not exist already does.
        case alreadyExists
        /// An operating-system call failed (I/O, permissions, disk full).
        case io
        /// Another nu11vlt process holds the vault.
        case busy
        /// The failed-attempt policy asks the user to wait.
        case lockedOut
        /// Data bound to another key store (a secure archive exported elsewhere): no PIN
        /// here can open it.
        case otherKeyStore
        /// The key store is bound to a TPM that is absent, failing, or another machine's.
        case tpm
        /// An internal invariant broke; a bug.
        case internalError
    }

    public var code: Code
    /// What failed, naming the item when there is one.
    public var message: String
    /// How to remedy it, typed: each front end words it (see `Remedy`).
    public var remedy: Remedy?
    /// The item the error is about (an opaque ID or a path), when there is one.
    public var item: String?
    /// The change was made (e.g. a file was renamed into place) but a later step failed
    /// (e.g. the folder fsync that makes it durable). At a commit point this means "done,
    /// but …", never a failure.
    public var tookEffect = false
    /// The disk (or the user's quota) is full: a batch can commit what fit and stop there.
    public var diskFull = false
    /// Whether the change took effect could not be settled (its commit failed, and so did
    /// discarding what the commit may have left behind): nothing is undone, and the next
    /// command settles it from the journal.
    public var undecided = false

    public init(_ code: Code, _ message: String, remedy: Remedy? = nil, item: String? = nil) {
        self.code = code
        self.message = message
        self.remedy = remedy
        self.item = item
    }

    public var description: String {
        var text = message
        if let remedy { text += " (hint: \(remedy))" }
        return text
    }

    /// The same error, attributed to `item` if it names none yet.
    public func about(_ item: String) -> Nu11Error {
        guard self.item == nil else { return self }
        var copy = self
        copy.item = item
        copy.message = "\(item): \(message)"
        return copy
    }

    /// The generic answer to a wrong PIN. A corrupted key slot gives exactly the same one.
    public static let wrongPIN = Nu11Error(
        .authenticationFailed, "the PIN or passphrase is wrong",
        remedy: .advice(.tryAgain))

    /// A security key that does not open the vault (not enrolled here, or its entry is out of date).
    public static let wrongSecurityKey = Nu11Error(
        .authenticationFailed, "this security key does not open the vault",
        remedy: .useEnrolledSecurityKeyOrPIN)
}
