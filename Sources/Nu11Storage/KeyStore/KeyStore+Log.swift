// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format

/// The audit logs in the key store (`log/`): one per vault, named by an ID derived from
/// that vault's keys (so the folder does not tell which vaults exist), and the device
/// journal (`log/device.n11l`) for what happens before a PIN is typed.
extension KeyStore {
    var logFolder: String { layout.log }

    public static let deviceJournalName = "device.n11l"

    /// A log's bytes, or nil when it does not exist yet.
    public func readLog(_ name: String) throws -> [UInt8]? {
        let path = POSIX.join(logFolder, name)
        guard POSIX.exists(path) else { return nil }
        return try ProtectedFiles.read(path, limit: 128 << 20)
    }

    public func writeLog(_ name: String, _ bytes: [UInt8]) throws {
        try ProtectedFiles.makeDirectory(logFolder)
        try ProtectedFiles.writeAtomically(bytes, to: POSIX.join(logFolder, name))
    }

    /// Moves a log that cannot be appended to aside (kept as evidence); returns its new name.
    public func setAsideLog(_ name: String) throws -> String {
        let aside = name + ".damaged-" + Hex.encode(SecureRandom.bytes(4))
        guard rename(POSIX.join(logFolder, name), POSIX.join(logFolder, aside)) == 0 else {
            throw POSIX.error("move aside", POSIX.join(logFolder, name))
        }
        return aside
    }

    /// Logs of `name` set aside as damaged.
    public func setAsideLogs(of name: String) throws -> [String] {
        guard POSIX.exists(logFolder) else { return [] }
        return try ProtectedFiles.list(logFolder).filter { $0.hasPrefix(name + ".damaged-") }.sorted()
    }

    /// Shreds one log (a rotation moved it to new keys).
    public func removeLog(_ name: String) throws {
        let path = POSIX.join(logFolder, name)
        if POSIX.exists(path) { try ProtectedFiles.overwriteAndRemove(path) }
    }

    /// Shreds every vault log but `keep` (and the device journal): the duress action.
    public func shredLogs(except keep: String) throws {
        guard POSIX.exists(logFolder) else { return }
        for name in try ProtectedFiles.list(logFolder) where !name.hasPrefix(keep) && name != Self.deviceJournalName {
            try ProtectedFiles.overwriteAndRemove(POSIX.join(logFolder, name))
        }
    }
}
