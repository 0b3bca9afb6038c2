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
                    print("\(kept.hex) is permanent again")
                    return
                }
                guard let seconds = try fadeSeconds(duration, settings: vault.settings) else { return }
                let faded = try vault.items.setFade(id, seconds: seconds)
                if output.json {
                    return try Output.json(Results.Faded(id: faded.hex, previousID: previous, fadesAt: Date(timeIntervalSince1970: vault.now + seconds)))
                }
                print("\(faded.hex) fades at \(Output.localTime.string(from: Date(timeIntervalSince1970: vault.now + seconds)))")
            }
        }
    }
}
