// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

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
