// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct NewPINOption: ParsableArguments {
    @Option(name: .customLong("new-pin-fd"),
            help: ArgumentHelp("Read the new PIN from this file descriptor (one line; may be the current PIN's descriptor, next line).",
                               valueName: "m"))
    var newPinFD: Int32?

    func read(_ prompt: String) throws -> SecretBytes {
        try PINReader.readNew(prompt: prompt, from: newPinFD.map { .fd($0) } ?? .terminal)
    }
}

extension Pin {
    struct SetBackup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-backup",
            abstract: "Set the backup PIN, which opens a separate, complete vault.",
            discussion: """
                Needs the primary PIN. The backup PIN opens the Backup domain as a vault of its own \
                (photos, albums, notes, fade) where nothing of the primary vault is visible. Setting \
                it again replaces the backup vault (its items are destroyed) and clears the duress PIN.
                """)
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var newPIN: NewPINOption
        @Flag(name: .long, help: "Replace a backup vault that holds items without asking (its items are destroyed).")
        var replace = false
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin, prompt: "Primary PIN or passphrase: ")
                let held = try vault.profiles.backupVaultItemCount()
                if held > 0 && !replace {
                    try Confirm.typed("replace", question: "The backup vault holds \(held) item(s); a new backup PIN destroys them.",
                                      offTerminal: Nu11Error(.invalidArgument, "the backup vault holds \(held) item(s), which a new backup PIN destroys; nothing was changed",
                                                             remedy: .frontEnd("pass --replace to destroy them and set the new backup PIN")),
                                      notConfirmed: "type replace, or pass --replace")
                }
                try vault.profiles.setBackupPIN(try newPIN.read("New backup PIN or passphrase: "))
                if output.json { return try Output.json(Results.PINChange(changed: "backup", keysRotated: false)) }
                print("backup PIN set")
            }
        }
    }

    struct SetDuress: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-duress",
            abstract: "Set a duress PIN: it silently destroys the primary vault, then opens the backup vault.",
            discussion: "Run it with the backup PIN as the current PIN. Off by default.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var newPIN: NewPINOption
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin, prompt: "Backup PIN or passphrase: ")
                try vault.profiles.setDuressPIN(try newPIN.read("New duress PIN: "))
                if output.json { return try Output.json(Results.PINChange(changed: "duress", keysRotated: false)) }
                print("duress PIN set")
            }
        }
    }
}

struct Skeleton: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "skeleton",
        abstract: "The Skeleton Switch: wipe the vault if you do not check in for a while.",
        discussion: """
            Every successful unlock with the primary PIN checks in, and so does `nu11vlt checkin`. \
            The check runs at the start of every command, before any PIN prompt; `nu11vlt sweep` \
            from a timer makes it fire even when nobody opens the vault.
            """,
        subcommands: [Enable.self, StatusCommand.self, Disable.self])

    struct Enable: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "enable", abstract: "Arm the switch (needs the primary PIN).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Option(name: .long, help: ArgumentHelp("Wipe after this long without a check-in: e.g. 7d.", valueName: "duration"))
        var interval: String
        @Flag(name: .long, help: "Overwrite files when the switch fires.") var secure = false
        @Flag(name: .customLong("short-interval"),
              help: "Allow an interval under one hour without asking (scripts); at a terminal you are asked instead.")
        var shortInterval = false
        @OptionGroup var output: JSONOption

        func validate() throws { try Failure.usage { _ = try DurationText.parse(interval) } }

        /// An interval under an hour is most likely a typo (5s for 5d) and wipes the vault
        /// moments later: it is confirmed at a terminal, or needs --short-interval.
        func confirmShort(_ seconds: Double) throws {
            guard seconds < 3600, !shortInterval else { return }
            try Confirm.typed("yes", question: "An interval of \(interval) wipes the vault \(interval) after the last check-in.",
                              offTerminal: Nu11Error(.invalidArgument, "an interval of \(interval) wipes the vault \(interval) after the last check-in; nothing was armed",
                                                     remedy: .frontEnd("pass --short-interval if you mean it, or write e.g. 7d")),
                              notConfirmed: "type yes, or choose a longer interval such as 7d")
        }

        func run() throws {
            try Failure.run {
                let seconds = try DurationText.parse(interval)
                try confirmShort(seconds)
                let vault = try openVault(location, pin)
                try vault.profiles.enableSkeleton(interval: seconds, secure: secure)
                if output.json {
                    vault.lock()
                    return try Output.json(location.locked.skeletonStatus().json)
                }
                print("Skeleton Switch armed: wipes\(secure ? " (secure)" : "") after \(interval) without a check-in")
                if try vault.profiles.keyStoreTPMStatus().enrolled {
                    print("enforced by the TPM's own clock as well (it advances only while the machine is on; the wall-clock check covers the time it is off)")
                }
            }
        }
    }

    struct StatusCommand: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Time left before the switch fires (no PIN).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let status = try location.locked.skeletonStatus()
                if output.json { return try Output.json(status.json) }
                guard status.enabled, let left = status.secondsLeft, let interval = status.interval else {
                    return print("Skeleton Switch: off")
                }
                print("Skeleton Switch: armed, interval \(interval)\(status.secure == true ? ", secure wipe" : "")")
                let deadline = Date(timeIntervalSinceNow: Double(left))
                print("time left: \(Output.humanDuration(left)) (until \(Output.localTime.string(from: deadline)))")
            }
        }
    }

    struct Disable: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "disable", abstract: "Disarm the switch (needs the primary PIN).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin)
                try vault.profiles.disableSkeleton()
                if output.json {
                    vault.lock()
                    return try Output.json(location.locked.skeletonStatus().json)
                }
                print("Skeleton Switch disarmed")
            }
        }
    }
}

struct Checkin: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "checkin", abstract: "Check in with the primary PIN (resets the Skeleton Switch).")
    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @OptionGroup var output: JSONOption

    func run() throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            if output.json {
                vault.lock()
                return try Output.json(location.locked.skeletonStatus().json)
            }
            print("checked in")
        }
    }
}
