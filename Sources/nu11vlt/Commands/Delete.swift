// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete items or notes by crypto-shredding: the item key is destroyed, then the file and the index row.",
        discussion: """
            --secure first overwrites the file with random bytes and fsyncs it (see docs/THREAT-MODEL.md \
            for what an overwrite cannot promise on SSDs and copy-on-write file systems). Without \
            --secure or --standard the deletion.mode setting decides.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Flag(name: .long, help: "Overwrite the file before destroying the key and unlinking it.")
    var secure = false
    @Flag(name: .long, help: "Crypto-shredding only, whatever the setting says.")
    var standard = false
    @Argument(help: "Item IDs (or unique prefixes of 4+ hex digits).", transform: ItemRef.parse)
    var ids: [ItemRef]
    @OptionGroup var output: JSONOption

    func validate() throws {
        if ids.isEmpty { throw ValidationError("give at least one item ID") }
        if secure && standard { throw ValidationError("use either --secure or --standard") }
    }

    func run() throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            let mode = secure ? true : standard ? false : nil
            // A Live Photo's still takes its motion along: every ID deleted is printed.
            let full = try vault.items.delete(ids, secure: mode).map(\.hex)
            if output.json {
                try Output.json(Results.Deleted(deleted: full, mode: (mode ?? (vault.settings.deletionMode == .secure)) ? "secure" : "standard"))
            } else {
                for id in full { print("deleted \(id)") }
            }
        }
    }
}
