// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

/// `init --backups yes|no`.
enum BackupChoice: String, ExpressibleByArgument, CaseIterable {
    case yes, no
}

/// Whether the new vault's folder may be backed up (issue 56: the first run said "back it up"
/// while the folder stayed excluded). Asked at a terminal, with the trade-off in one sentence;
/// a script says `--backups yes|no`; with neither, the folder stays out of backups and `init`
/// says so on stderr.
enum BackupQuestion {
    static func answer(_ given: BackupChoice?, vaultRoot: String) throws -> Bool {
        if let given { return given == .yes }
        guard isatty(0) == 1 else {
            Output.note("nu11vlt: the vault folder is kept out of backups (no terminal to ask, and no --backups yes|no); `nu11vlt backup enable` allows them later")
            return false
        }
        Output.stderr("\(BackupInfo.tradeOff)\nBack up the vault folder (\(Output.escaped(vaultRoot)))? Never back up the key store. [y/n] ")
        for _ in 0..<3 {
            guard let line = readLine() else { break }
            switch line.trimmingCharacters(in: .whitespaces).lowercased() {
            case "y", "yes": return true
            case "n", "no": return false
            default: Output.stderr("Type y (back it up) or n (keep it out of backups): ")
            }
        }
        throw Nu11Error(.invalidArgument, "no answer to whether the vault folder may be backed up; nothing was created",
                        remedy: .frontEnd("answer y or n, or pass --backups yes or --backups no"))
    }

    /// The line `init` prints about the answer.
    static func outcome(_ allowed: Bool) -> String {
        allowed
            ? "backups       the vault folder may be backed up (`nu11vlt backup disable` keeps it out)"
            : "backups       the vault folder is kept out of backups (`nu11vlt backup enable` allows them)"
    }
}
