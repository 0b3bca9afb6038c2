// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct RecoveryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery",
        abstract: "The recovery phrase: with it and a copy of the vault folder, `nu11vlt recover` rebuilds the key store.",
        discussion: """
            Every vault made by `nu11vlt init` has one. The vault folder keeps the primary vault's keys \
            sealed to the phrase (never the phrase itself), so it can be backed up with restic, borg or \
            rsync. Fade items and the backup vault are not covered.
            """,
        subcommands: [Setup.self])

    struct Setup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "setup",
            abstract: "Make a new recovery phrase (primary PIN) and print it once; an earlier phrase opens nothing added after.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Option(name: .customLong("current-phrase-fd"),
                help: ArgumentHelp("On a TPM-bound vault: read the current recovery phrase (the TPM's lockout authorization, which moves to the new phrase) from this file descriptor instead of the terminal.", valueName: "n"))
        var currentPhraseFD: Int32?
        @OptionGroup var output: JSONOption

        func validate() throws {
            if let fd = currentPhraseFD, fd < 0 { throw ValidationError("--current-phrase-fd must be a file descriptor number") }
        }

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin, prompt: "Primary PIN or passphrase: ")
                var current: SecretBytes?
                if try vault.profiles.keyStoreTPMLockoutHeld() == true {
                    let typed = try PINReader.read(prompt: "Current recovery phrase (the TPM's lockout authorization moves to the new one): ",
                                                   from: currentPhraseFD.map { .fd($0) } ?? .terminal)
                    current = try RecoveryKey.parse(typed)
                }
                let made = try vault.profiles.setUpRecovery(currentPhrase: current)
                if output.json {
                    try Output.json(Results.RecoverySetUp(sealed: made.sealed))
                } else {
                    print("recovery phrase made; \(made.sealed) item(s) covered")
                }
                RecoveryKeyText.showPhrase(made.phrase, tpm: false, json: output.json)
                // The phrase took effect; what was cut short after is finished by the next unlock.
                if let unfinished = made.unfinished { Output.note("nu11vlt: warning: \(unfinished)") }
            }
        }
    }
}
