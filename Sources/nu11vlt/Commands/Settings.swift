// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

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
