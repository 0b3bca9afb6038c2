// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

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
