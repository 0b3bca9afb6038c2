// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import ArgumentParser
import Nu11Format
import Nu11Vault

/// Where the vault and key store are. Environment variables may name paths, never secrets.
struct LocationOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The vault folder (default: $NU11VLT_VAULT, else $XDG_DATA_HOME/nu11vlt).",
                                            valueName: "dir"), completion: .directory)
    var vault: String?

    @Option(name: .long, help: ArgumentHelp("The key store folder, outside the vault (default: $NU11VLT_KEYSTORE, else $XDG_STATE_HOME/nu11vlt).",
                                            valueName: "dir"), completion: .directory)
    var keystore: String?

    /// The paths given, else the environment's, else the defaults — where the default vault
    /// folder holds no vault, the one the key store recorded after `status --search` found it.
    var location: VaultLocation { VaultLocation.resolveRemembered(vault: vault, keyStore: keystore) }
    /// The vault before its PIN.
    var locked: LockedVault { LockedVault(location) }
}

/// How the PIN arrives when it is not typed at the terminal.
struct PINOptions: ParsableArguments {
    @Option(name: .customLong("pin-fd"), help: ArgumentHelp("Read the PIN/passphrase from this file descriptor (one line).",
                                                            valueName: "n"))
    var pinFD: Int32?

    @Flag(name: .customLong("pin-stdin"), help: "Read the PIN/passphrase from stdin (one line).")
    var pinStdin = false

    @Flag(name: .customLong("security-key"),
          help: "Unlock with an enrolled FIDO2 security key only, without falling back to the PIN (see `nu11vlt fido2`).")
    var securityKeyOnly = false

    @Option(name: .customLong("key-pin-fd"),
            help: ArgumentHelp("Read the security key's own PIN from this file descriptor (one line), when its enrolment needs it.",
                               valueName: "n"))
    var keyPinFD: Int32?

    func validate() throws {
        if pinFD != nil && pinStdin { throw ValidationError("use either --pin-fd or --pin-stdin, not both") }
        if securityKeyOnly && (pinFD != nil || pinStdin) {
            throw ValidationError("--security-key unlocks without the PIN: leave out --pin-fd and --pin-stdin")
        }
        if let fd = keyPinFD, fd < 0 { throw ValidationError("--key-pin-fd must be a file descriptor number (0 or more)") }
        if let fd = pinFD, fd < 0 { throw ValidationError("--pin-fd must be a file descriptor number (0 or more)") }
    }

    var source: PINReader.Source {
        if let pinFD { return .fd(pinFD) }
        return pinStdin ? .fd(0) : .terminal
    }

    func read(prompt: String = "PIN or passphrase: ") throws -> SecretBytes {
        try PINReader.read(prompt: prompt, from: source)
    }

    /// The security key's own PIN: from --key-pin-fd, else asked at the terminal.
    func readKeyPIN() throws -> SecretBytes {
        try PINReader.read(prompt: "PIN of the security key: ", from: keyPinFD.map { .fd($0) } ?? .terminal)
    }

    /// For commands that re-seal with the PIN itself: `--security-key` cannot serve them.
    func refuseSecurityKeyOnly() throws {
        guard securityKeyOnly else { return }
        throw Nu11Error(.invalidArgument, "this command needs the primary PIN, not a security key",
                        remedy: .frontEnd("leave out --security-key"))
    }

    /// Whether the PIN comes from a descriptor (then no security key is tried).
    var pinGiven: Bool { pinFD != nil || pinStdin }
}

/// The Argon2id cost a new key store gets (`init`, `recover`): calibrated on this machine
/// unless chosen, within the floor and the cap.
struct KDFOptions: ParsableArguments {
    @Option(name: .customLong("kdf-memory"), help: ArgumentHelp("Argon2id memory in MiB (at least 19).", valueName: "mib"))
    var kdfMemory: UInt32?
    @Option(name: .customLong("kdf-iterations"), help: ArgumentHelp("Argon2id passes (at least 2).", valueName: "n"))
    var kdfIterations: UInt32?

    func validate() throws {
        if let m = kdfMemory, m < KDFParameters.floor.memoryMiB || m > KDFParameters.cap.memoryMiB {
            throw ValidationError("--kdf-memory must be between \(KDFParameters.floor.memoryMiB) and \(KDFParameters.cap.memoryMiB) MiB")
        }
        if let t = kdfIterations, t < KDFParameters.floor.iterations || t > KDFParameters.cap.iterations {
            throw ValidationError("--kdf-iterations must be between \(KDFParameters.floor.iterations) and \(KDFParameters.cap.iterations)")
        }
    }

    func parameters() throws -> KDFParameters {
        if kdfMemory != nil || kdfIterations != nil {
            return KDFParameters(iterations: kdfIterations ?? 3, memoryKiB: (kdfMemory ?? 256) * 1024)
        }
        if Output.stderrIsTerminal { Output.note("calibrating Argon2id on this machine…") }
        return try Argon2id.calibrate()
    }
}

struct JSONOption: ParsableArguments {
    @Flag(name: .long, help: "Print machine-readable JSON.")
    var json = false
}

/// Opens the vault: the gate runs first (fade sweep, clock, PIN delay), then the PIN is read.
/// When security keys are enrolled and no PIN descriptor is given, an enrolled key is asked
/// first (as the seed's Face ID) and the PIN is the fallback; `--security-key` has no fallback.
func openVault(_ location: LocationOptions, _ pin: PINOptions, prompt: String = "PIN or passphrase: ") throws -> Vault {
    if let session = try ShellSession.current(for: location.location) { return session }
    if let vault = try openWithSecurityKey(location, pin) { return vault }
    return try openVaultWithPIN(location, pin, prompt: prompt)
}

/// Opens the vault with the PIN only (changes that need the primary PIN itself).
func openVaultWithPIN(_ location: LocationOptions, _ pin: PINOptions, prompt: String = "PIN or passphrase: ") throws -> Vault {
    try pin.refuseSecurityKeyOnly()
    let vault = try location.locked.unlock(onWait: waiting, report: printGate, readPIN: { try pin.read(prompt: prompt) })
    vault.onNotice = { Output.note("nu11vlt: warning: \(Output.escaped(Remedies.line($0)))") }
    return vault
}

/// The other PINs of this key store (backup, duress; the primary one when another is
/// typed) for a change that re-seals every slot: from `fd` one per line (an empty line or
/// the end for none), else asked at the terminal.
func readOtherPINs(fd: Int32?, why: String, refusal: String) throws -> [SecretBytes] {
    var out: [SecretBytes] = []
    if let fd {
        defer { Descriptors.finished(fd) }
        while out.count < 2, let next = try PINReader.readOptional(fd: fd) { out.append(next) }
        return out
    }
    guard PINReader.hasTerminal else {
        throw Nu11Error(.invalidArgument, refusal,
                        remedy: .frontEnd("pass the other PINs (backup, duress) with --other-pins-fd N, an empty line if there are none"))
    }
    Output.note(why + " Type each other PIN (backup, duress; the primary one if this is not it) so it keeps working.")
    while out.count < 2, let next = try PINReader.readOptionalFromTerminal(prompt: "Another PIN that must keep working (Enter if none): ") {
        out.append(next)
    }
    return out
}

/// The security-key unlock, or nil when the PIN is to be asked (no key enrolled, none plugged
/// in, or the key did not open the vault — each said in one line).
func openWithSecurityKey(_ location: LocationOptions, _ pin: PINOptions) throws -> Vault? {
    guard !pin.pinGiven else { return nil }
    return try openWithSecurityKey(location.locked, only: pin.securityKeyOnly, keyPIN: { try pin.readKeyPIN() },
                                   announce: PINReader.hasTerminal || pin.securityKeyOnly)
}

/// The same for a process that asks elsewhere for the key's own PIN (the unlock agent asks
/// `nu11vlt unlock`); `only`: no PIN fallback; `announce`: say "touch your security key".
func openWithSecurityKey(_ locked: LockedVault, only: Bool, keyPIN: () throws -> SecretBytes?, announce: Bool) throws -> Vault? {
    let enrolled = only ? try locked.securityKeys() : ((try? locked.securityKeys()) ?? [])
    guard !enrolled.isEmpty else {
        if only {
            throw Nu11Error(.notFound, "no security key is enrolled in this vault", remedy: .frontEnd("unlock with the PIN, or enrol one: nu11vlt fido2 enroll"))
        }
        return nil
    }
    do {
        guard let device = try LockedVault.findSecurityKey() else {
            throw Nu11Error(.notFound, "no security key is plugged in", remedy: .useEnrolledSecurityKeyOrPIN)
        }
        if announce { Output.note("nu11vlt: touch your security key…") }
        let vault = try locked.unlock(securityKey: device, keyPIN: keyPIN, onWait: waiting, report: printGate)
        vault.onNotice = { Output.note("nu11vlt: warning: \(Output.escaped(Remedies.line($0)))") }
        return vault
    } catch let error as Nu11Error where !only && error.code != .lockedOut && error.code != .busy {
        Output.note("nu11vlt: \(Output.escaped(Remedies.line(error))); asking for the PIN instead")
        return nil
    }
}

/// Opens the vault and keeps the PIN that opened it (for changes that seal it again).
func openVaultKeepingPIN(_ location: LocationOptions, _ pin: PINOptions) throws -> (Vault, SecretBytes) {
    try pin.refuseSecurityKeyOnly()
    var typed: SecretBytes?
    let vault = try location.locked.unlock(onWait: waiting, report: printGate, readPIN: {
        let secret = try pin.read()
        typed = secret
        return secret
    })
    vault.onNotice = { Output.note("nu11vlt: warning: \(Output.escaped(Remedies.line($0)))") }
    guard let typed else { throw Nu11Error(.internalError, "the PIN was not read") }
    return (vault, typed)
}

/// The gate alone, for commands that need no PIN. Inside `nu11vlt shell` or the unlock agent
/// the session holds the vault's lock while a command runs and ran the gate when it unlocked.
func runGate(_ location: LocationOptions) throws {
    if try ShellSession.current(for: location.location) != nil { return }
    printGate(try location.locked.sweep(onWait: waiting))
}

func waiting() { Output.note("waiting for another nu11vlt to finish with this vault…") }

func printGate(_ report: GateReport) {
    for warning in report.warnings { Output.note("nu11vlt: warning: \(warning)") }
    if !report.shredded.isEmpty { Output.note("nu11vlt: \(report.shredded.count) fade item(s) expired and were destroyed") }
}

/// `30s`, `10m`, `24h`, `7d`, or `default` (the fade.default setting).
func fadeSeconds(_ text: String?, settings: Settings) throws -> Double? {
    guard let text else { return nil }
    return text == "default" ? settings.fadeDefault : try DurationText.parse(text)
}

/// Arguments are checked as raw bytes: Swift's `CommandLine.arguments` would silently
/// repair a name in another encoding into one that names no file.
enum Arguments {
    static func firstNonUTF8() -> (index: Int, shown: String)? {
        for i in 1..<Int(CommandLine.argc) {
            guard let arg = CommandLine.unsafeArgv[i] else { continue }
            let raw = Array(UnsafeBufferPointer(start: UnsafeRawPointer(arg).assumingMemoryBound(to: UInt8.self), count: strlen(arg)))
            if String(validating: raw, as: UTF8.self) == nil {
                let shown = raw.map { (0x20..<0x7f).contains($0) ? String(UnicodeScalar($0)) : String(format: "\\x%02x", $0) }.joined()
                return (i, shown)
            }
        }
        return nil
    }

    /// ArgumentParser reads `--limit -3` as an option `-3` and says "Missing value": this
    /// says what was wrong instead (no option takes a negative number).
    static func negativeNumber(in message: String, arguments: [String] = CommandLine.arguments) -> String? {
        guard message.hasPrefix("Missing value for '") else { return nil }
        let option = message.dropFirst("Missing value for '".count).prefix { $0 != " " && $0 != "'" }
        guard let at = arguments.firstIndex(of: String(option)), at + 1 < arguments.count else { return nil }
        let next = arguments[at + 1]
        guard next.count > 1, next.hasPrefix("-"), next.dropFirst().allSatisfy({ $0.isNumber || $0 == "." }) else { return nil }
        return "\(option) takes 0 or more, not \(next) (hint: e.g. \(option) 10)"
    }
}

extension ItemRef {
    /// Item IDs are parsed once, where ArgumentParser reads them: a whole ID or a prefix of
    /// 4+ hex digits (the vault resolves a prefix that exactly one visible item has).
    static func parse(_ text: String) throws -> ItemRef {
        do { return try ItemRef(text) } catch let error as Nu11Error { throw ValidationError(Remedies.line(error)) }
    }
}

extension ItemID {
    /// A whole item ID (32 hex digits), as `list` prints it to continue after.
    static func parseWhole(_ text: String) throws -> ItemID {
        guard text.utf8.count == 2 * ItemID.byteCount, let id = try? ItemID(hex: text.lowercased()) else {
            throw ValidationError("'\(text.prefix(40))' is not a whole item ID (32 hex digits); pass the ID printed after the previous page")
        }
        return id
    }
}
