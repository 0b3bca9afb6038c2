// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Let backup tools (restic, borg, rsync) copy the vault folder; never the key store (back up with --exclude-caches: see the README).",
        subcommands: [Enable.self, Disable.self, StatusCommand.self])

    static let explanation = """
        What a backup of the vault folder brings back: every item, with the recovery phrase (`nu11vlt recover`).
        An item you delete stays in the snapshots made before: crypto-shredding holds for the live folder and for
        snapshots made after; pruning the older snapshots (e.g. `restic forget --prune`) finishes it.
        Never back up the key store: it carries CACHEDIR.TAG, which restic and borg honour only with --exclude-caches
        (`restic backup --exclude-caches ~`, `borg create --exclude-caches REPO::NAME ~`); keep the phrase on paper, away from the backup.
        """

    /// Sets backup.allow (after unlock), then says what it means.
    static func set(_ allow: Bool, _ location: LocationOptions, _ pin: PINOptions) throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            _ = try vault.setSetting("backup.allow", allow ? "true" : "false")
            if allow {
                print("the vault folder \(vault.location.vaultRoot) can now be backed up")
                print(Backup.explanation)
            } else {
                print("the vault folder is excluded from backups again; snapshots already made keep what they hold")
            }
        }
    }

    struct Enable: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "enable", abstract: "Remove the vault folder's backup exclusion (CACHEDIR.TAG, nodump) and say what a backup keeps.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        func run() throws { try Backup.set(true, location, pin) }
    }

    struct Disable: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "disable", abstract: "Exclude the vault folder from backups again (CACHEDIR.TAG, nodump).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        func run() throws { try Backup.set(false, location, pin) }
    }

    struct StatusCommand: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Whether the vault folder is backup-friendly, and when it last changed (no PIN).")
        @OptionGroup var location: LocationOptions
        func run() throws {
            try Failure.run {
                let info = try location.locked.backupInfo()
                print(BackupLines.folder(info))
                print(BackupLines.changed(info))
                print(BackupLines.phrase(info))
            }
        }
    }
}

enum BackupLines {
    static func folder(_ info: BackupInfo) -> String {
        "backups    " + (info.excluded ? "vault folder excluded (a backup of it holds nothing; run `nu11vlt backup enable` to back it up)"
                                 : "vault folder backup-friendly; key store excluded (CACHEDIR.TAG: restic and borg need --exclude-caches)")
    }

    static func changed(_ info: BackupInfo) -> String {
        "changed    " + (info.lastChange.map { Output.localTime.string(from: $0) + " (a backup made before this misses something)" } ?? "never")
    }

    static func phrase(_ info: BackupInfo) -> String {
        "recovery   " + (info.hasRecoveryData ? "the vault folder carries recovery data (opens with the recovery phrase)" : "no recovery phrase: a backup cannot be opened without this key store (`nu11vlt recovery setup`)")
    }
}
