import ArgumentParser
import Nu11Format
import Nu11Vault

/// Where the vault and key store are. Environment variables may name paths, never secrets.
struct LocationOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The vault folder (default: $NU11VLT_VAULT, else $XDG_DATA_HOME/nu11vlt).",
                                            valueName: "dir"))
    var vault: String?

    @Option(name: .long, help: ArgumentHelp("The key store folder, outside the vault (default: $NU11VLT_KEYSTORE, else $XDG_STATE_HOME/nu11vlt).",
                                            valueName: "dir"))
    var keystore: String?

    var location: VaultLocation { VaultLocation.resolve(vault: vault, keyStore: keystore) }
}

/// How the PIN arrives when it is not typed at the terminal.
struct PINOptions: ParsableArguments {
    @Option(name: .customLong("pin-fd"), help: ArgumentHelp("Read the PIN/passphrase from this file descriptor (one line).",
                                                            valueName: "n"))
    var pinFD: Int32?

    @Flag(name: .customLong("pin-stdin"), help: "Read the PIN/passphrase from stdin (one line).")
    var pinStdin = false

    func validate() throws {
        if pinFD != nil && pinStdin { throw ValidationError("use either --pin-fd or --pin-stdin, not both") }
        if let fd = pinFD, fd < 0 { throw ValidationError("--pin-fd must be a file descriptor number (0 or more)") }
    }

    var source: PINReader.Source {
        if let pinFD { return .fd(pinFD) }
        return pinStdin ? .fd(0) : .terminal
    }

    func read(prompt: String = "PIN or passphrase: ") throws -> SecretBytes {
        try PINReader.read(prompt: prompt, from: source)
    }
}

struct JSONOption: ParsableArguments {
    @Flag(name: .long, help: "Print machine-readable JSON.")
    var json = false
}

/// Opens the vault: reads the PIN, says so if another nu11vlt holds the lock.
func openVault(_ location: LocationOptions, _ pin: PINOptions) throws -> Vault {
    let loc = location.location
    guard Vault.isInitialized(loc) else {
        throw Nu11Error(.notFound, "no vault at \(loc.vaultRoot)",
                        remedy: "run `nu11vlt init`, or pass --vault/--keystore with the right folders")
    }
    let secret = try pin.read()
    return try Vault.open(loc, pin: secret) {
        Output.note("waiting for another nu11vlt to finish with this vault…")
    }
}
