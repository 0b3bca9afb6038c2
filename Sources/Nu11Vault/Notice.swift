// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format

/// Something a command did or found that the user should know, though it succeeded: a late
/// failure after a commit point ("done, but …"), or what the unlock found (a rotation left
/// half done, recovery data that does not cover new items). The remedy is typed, as in
/// `Nu11Error`, so each front end words it.
public struct Notice: Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public let remedy: Remedy?

    public init(message: String, remedy: Remedy? = nil) {
        self.message = message
        self.remedy = remedy
    }

    /// Plain words, for front ends that have no names of their own.
    public var description: String { remedy.map { "\(message) (\($0))" } ?? message }
}
