// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Fade: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fade",
        abstract: "Self-destructing items.",
        discussion: """
            Fade items are destroyed (crypto-shredded) when their time runs out: at the start of \
            every nu11vlt command, before any PIN prompt; whenever one is read; and by \
            `nu11vlt sweep` (see the README for a systemd timer and a cron line).
            """,
        subcommands: [Set.self])

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Make an item fade after DURATION (30s, 10m, 24h, 7d, or default); a fade item gets the new deadline; `off` cancels its fade.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The item or note ID (or a unique prefix of 4+ hex digits).", transform: ItemRef.parse) var id: ItemRef
        @Argument(help: "How long from now.") var duration: String
        @OptionGroup var output: JSONOption

        func validate() throws {
            if duration != "default" && duration != "off" { try Failure.usage { _ = try DurationText.parse(duration) } }
        }

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin)
                let previous = try Results.fullID(vault, id)
                if duration == "off" {
                    let kept = try vault.items.cancelFade(id)
                    if output.json { return try Output.json(Results.Faded(id: kept.hex, previousID: previous, fadesAt: nil)) }
                    print("\(kept.hex) is permanent again (re-encrypted as a new item: the ID changed from \(id))")
                    return
                }
                guard let seconds = try fadeSeconds(duration, settings: vault.settings) else { return }
                let faded = try vault.items.setFade(id, seconds: seconds)
                if output.json {
                    return try Output.json(Results.Faded(id: faded.hex, previousID: previous, fadesAt: Date(timeIntervalSince1970: vault.now + seconds)))
                }
                print("\(faded.hex) fades at \(Output.localTime.string(from: Date(timeIntervalSince1970: vault.now + seconds)))")
                if !faded.hex.hasPrefix(id.digits) { print("(re-encrypted as a new item: the ID changed from \(id))") }
            }
        }
    }
}

struct Sweep: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Destroy expired fade items now. Needs no PIN; run it from a timer.")
    @OptionGroup var location: LocationOptions
    @OptionGroup var output: JSONOption

    func run() throws {
        try Failure.run {
            let report = try location.locked.sweep(onWait: waiting)
            if output.json { return try Output.json(Results.Swept(shredded: report.shredded, warnings: report.warnings)) }
            printGate(report)
            print("swept: \(report.shredded.count) item(s) destroyed")
        }
    }
}

struct WipeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wipe",
        abstract: "Destroy the whole vault: every key first, then the files, then the index.",
        discussion: """
            Asks you to type `wipe` unless --yes is given. Needs no PIN. Where only half of the \
            vault is here (its folder without its key store, or the reverse, e.g. after a move), \
            wipe refuses unless --i-know names the vault's ID: the other half, wherever it is, \
            could never be opened again. `nu11vlt status --search DIR` finds a moved half.
            """)
    @OptionGroup var location: LocationOptions
    @Option(name: .customLong("i-know"), help: ArgumentHelp("Wipe half a vault: its vault ID, as the refusal shows it.", valueName: "vault-id"))
    var iKnow: String?
    @Flag(name: .long, help: "Overwrite every file with random bytes before removing it.") var secure = false
    @Flag(name: .long, help: "Do not ask for confirmation.") var yes = false
    @OptionGroup var output: JSONOption
    @OptionGroup var quiet: QuietOption

    func run() throws {
        try Failure.run {
            let loc = location.location
            let locked = LockedVault(loc)
            if iKnow == nil { try locked.checkHalf() }
            if !yes {
                try Confirm.typed("wipe", question: "This destroys every item in \(loc.vaultRoot) and every key in \(loc.keyStoreRoot) for good.",
                                  offTerminal: Nu11Error(.invalidArgument, "wipe needs a confirmation", remedy: .frontEnd("pass --yes in scripts")),
                                  notConfirmed: "type wipe, or pass --yes")
            }
            var line: ProgressLine?
            try locked.wipe(secure: secure, confirmedID: iKnow, onWait: waiting) { done, total in
                guard secure else { return }
                if line == nil { line = ProgressLine("overwriting", items: total, quiet: quiet.quiet || output.json) }
                line?.update(items: done)
            }
            line?.finish()
            if output.json { return try Output.json(Results.Wiped(wiped: loc.vaultRoot, secure: secure)) }
            print("wiped \(loc.vaultRoot) and \(loc.keyStoreRoot)")
        }
    }
}

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Typed settings: list, get KEY, set KEY VALUE (set needs the PIN).",
        subcommands: [ListSettings.self, Get.self, SetSetting.self])

    struct ListSettings: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Every setting, its value and its allowed values.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let settings = try SettingsCommand.shown(location, pin, keys: Settings.looseningKeys)
                var rows: [[String: String]] = []
                for d in Settings.definitions {
                    rows.append(["key": d.key, "value": try settings.value(d.key), "allowed": d.allowed, "summary": d.summary])
                }
                if output.json { return try Output.json(rows) }
                for row in rows {
                    print("\((row["key"] ?? "").padding(toLength: 18, withPad: " ", startingAt: 0)) \((row["value"] ?? "").padding(toLength: 10, withPad: " ", startingAt: 0)) \(row["allowed"] ?? "")")
                }
            }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Print one setting's value.")
        @OptionGroup var location: LocationOptions
        @Argument(help: "The key (see `nu11vlt settings list`).") var key: String
        @OptionGroup var pin: PINOptions
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let value = try SettingsCommand.shown(location, pin, keys: [key]).value(key)
                if output.json { return try Output.json(Results.Setting(key: key, value: value)) }
                print(value)
            }
        }
    }

    /// The settings to show. With a PIN (or inside `nu11vlt shell`) as they apply to the
    /// unlocked vault: a looser value the vault did not save is not applied, and the unlock
    /// says so. Without one, as the file says, with a note on each of `keys` whose value is
    /// looser than its default (only the PIN can tell whether this vault saved it).
    static func shown(_ location: LocationOptions, _ pin: PINOptions, keys: [String]) throws -> Settings {
        if pin.pinStdin || pin.pinFD != nil || pin.securityKeyOnly { return try openVault(location, pin).settings }
        if let session = try ShellSession.current(for: location.location) { return session.settings }
        try runGate(location)
        let (settings, damaged) = try location.locked.settings()
        if damaged { Output.note("nu11vlt: warning: the settings file is damaged; showing defaults") }
        let loose = keys.filter { Settings.looseningKeys.contains($0) && settings.isLooser($0, than: Settings()) }
        if !loose.isEmpty {
            Output.note("nu11vlt: note: \(loose.joined(separator: ", ")) loosen a protection; they apply only if this vault saved them (see them as they apply with --pin-stdin)")
        }
        return settings
    }

    struct SetSetting: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Change one setting (validated; needs the PIN).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The key.") var key: String
        @Argument(help: "The new value.") var value: String
        @OptionGroup var output: JSONOption

        func validate() throws {
            var probe = Settings()
            try Failure.usage { try probe.set(key, value) }
        }

        func run() throws {
            try Failure.run {
                let updated = try openVault(location, pin).setSetting(key, value)
                if output.json {
                    try Output.json(Results.Setting(key: key, value: try updated.value(key)))
                } else {
                    print("\(key) = \(try updated.value(key))")
                }
                if key == "backup.allow" && updated.allowBackups { Output.note(Backup.explanation) }
            }
        }
    }
}
