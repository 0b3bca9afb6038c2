// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Storage
import Nu11Vault

enum RecoveryKeyText {
    /// The TPM's recovery key alone (`tpm enroll` of a vault whose phrase is separate).
    static func show(_ key: SecretBytes, json: Bool) {
        let text = RecoveryKey.text(key)
        let lines = """

            Recovery key (shown only now — write it down and keep it away from this machine):

                \(text)

            With it and your primary PIN the vault opens on another machine, after a TPM reset or a
            motherboard change: `nu11vlt tpm recover`. Without it, losing this TPM loses the vault.
            """
        if json { Output.note(lines) } else { print(lines) }
    }

    /// The vault's recovery phrase (`init`, `recovery setup`); with a TPM it is the TPM's
    /// recovery key too.
    static func showPhrase(_ phrase: SecretBytes, tpm: Bool, json: Bool) {
        let text = RecoveryKey.text(phrase)
        let lines = """

            Recovery phrase (shown only now — write it down on paper and keep it away from this machine):

                \(text)

            With it and a copy of the vault folder alone, `nu11vlt recover` rebuilds the key store
            (a new PIN) on any machine — after a dead disk, a lost key store or a forgotten PIN.\(tpm ? """

            It is also the TPM's recovery key (`nu11vlt tpm recover`).
            """ : "")
            Whoever has it and the vault folder has your primary vault: treat it like the vault itself.
            """
        if json { Output.note(lines) } else { print(lines) }
    }
}
