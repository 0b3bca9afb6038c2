// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

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
