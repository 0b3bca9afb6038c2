// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the vault and key store paths, the KDF cost and (after unlock) item and album counts.",
        discussion: """
            Without --unlock no PIN is asked and counts are not shown. With half a vault here (a \
            moved vault folder or key store), --search DIR looks under DIR for the other half by \
            the vault ID both halves carry. A vault folder found there (one only) is recorded in the \
            key store, and commands that are not given --vault (or NU11VLT_VAULT) use it from then on; \
            nothing else is changed.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Flag(name: .long, help: "Ask for the PIN to show item and album counts.")
    var unlock = false
    @Option(name: .long, help: ArgumentHelp("Find the missing half of this vault (a moved vault folder or key store) under this folder.",
                                            valueName: "dir"), completion: .directory)
    var search: String?
    @OptionGroup var output: JSONOption

    func run() throws {
        try Failure.run {
            if let search { return try searchOtherHalf(in: search) }
            var info = try location.locked.info()
            if unlock || pin.pinFD != nil || pin.pinStdin || ShellSession.vault != nil {
                info = try openVault(location, pin).status()
            } else if info.initialized {
                try runGate(location)
            }
            let half = location.locked.halfVaultError
            let sync = info.initialized ? SyncthingFolder.find(vault: info.vaultPath) : nil
            if output.json {
                try Output.json(info.json(sync: sync))
                if let sync { SyncLines.warn(sync) }
                if let half { throw half }
                return
            }
            let state = half != nil ? "  (incomplete: see below)" : info.initialized ? "" : "  (not initialised; run `nu11vlt init`)"
            print("vault      \(Output.escaped(info.vaultPath))\(state)")
            print("key store  \(Output.escaped(info.keyStorePath))")
            if let half { throw half }
            if let t = info.kdfIterations, let m = info.kdfMemoryMiB { print("Argon2id   \(t) passes, \(m) MiB") }
            if let items = info.items, let albums = info.albums {
                print("items      \(items)")
                print("albums     \(albums)")
            }
            if let fading = info.fadeItems { print("fading     \(fading)") }
            if info.initialized, let backup = try? location.locked.backupInfo() {
                print(BackupLines.folder(backup))
                print(BackupLines.changed(backup))
                print(BackupLines.phrase(backup))
            }
            if let sync {
                print(SyncLines.line(sync, vault: info.vaultPath))
                SyncLines.warn(sync)
            }
            print("decoders   \(DecoderSandbox.summary)")
        }
    }
}

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
