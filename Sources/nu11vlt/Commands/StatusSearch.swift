// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Vault

/// `status --search DIR`: finds the missing half of a vault by the vault ID both halves carry.
/// A vault folder found there (one only) is recorded in the key store (docs/FORMAT.md §4.4c),
/// so the default location follows it from then on. Every command printed here runs as
/// printed when pasted into the same shell (issue 56: `nu11vlt --vault DIR status` did not).
extension Status {
    func searchOtherHalf(in search: String) throws {
        let locked = location.locked
        let found = try locked.searchOtherHalf(in: search)
        let vaults = found.filter { $0.kind == "vault" }
        var recorded = false
        if vaults.count == 1, let folder = vaults.first?.path {
            do {
                try locked.rememberVaultFolder(folder)
                recorded = true
            } catch {
                let why = (error as? Nu11Error).map(Remedies.line) ?? "\(error)"
                Output.note("nu11vlt: warning: the vault folder was found, but its place could not be recorded in the key store: \(Output.escaped(why))")
            }
        }
        if output.json { return try Output.json(found) }
        guard !found.isEmpty else {
            throw Nu11Error(.notFound, "no folder under \(search) carries this vault's ID",
                            remedy: .frontEnd("search a wider folder (e.g. --search /), or restore the missing half from your own copy"))
        }
        let here = locked.location
        for half in found {
            let isVault = half.kind == "vault"
            print("found the \(isVault ? "vault folder" : "key store") of this vault: \(Output.escaped(half.path))")
            let command = isVault
                ? Self.command(vault: half.path, keyStore: location.keystore == nil ? nil : here.keyStoreRoot)
                : Self.command(vault: location.vault == nil ? nil : here.vaultRoot, keyStore: half.path)
            print("  use it:  \(command)   (or set NU11VLT_\(isVault ? "VAULT" : "KEYSTORE"))")
        }
        if recorded {
            if VaultLocation.vaultFolderChosen(vault: location.vault) {
                print("recorded in the key store: commands given neither --vault nor NU11VLT_VAULT use that vault folder from now on")
            } else {
                print("recorded in the key store: commands use that vault folder from now on")
                print("  check:   \(Self.command(vault: nil, keyStore: location.keystore == nil ? nil : here.keyStoreRoot))")
            }
        } else if vaults.count > 1 {
            print("several folders carry this vault's ID (copies?): none was recorded; give the one you mean with --vault, or search again once the others are moved away")
        }
    }

    /// `nu11vlt status` with the options that make it find this pair, quoted for a POSIX shell.
    static func command(vault: String?, keyStore: String?) -> String {
        var words = ["nu11vlt", "status"]
        if let vault { words += ["--vault", ShellWord.quoted(vault)] }
        if let keyStore { words += ["--keystore", ShellWord.quoted(keyStore)] }
        return words.joined(separator: " ")
    }
}

/// A path as one word of a POSIX shell command line: as it is when it holds only characters no
/// shell treats specially, else in single quotes (a quote inside as '\''). Control characters
/// are shown escaped (such a path cannot be pasted; it never reaches the terminal raw).
enum ShellWord {
    static func quoted(_ text: String) -> String {
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+:@%,=")
        if !text.isEmpty, text.allSatisfy({ plain.contains($0) }) { return text }
        return "'" + Output.escaped(text).replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
