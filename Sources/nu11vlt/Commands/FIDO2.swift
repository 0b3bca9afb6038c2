// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Storage
import Nu11Vault

/// `nu11vlt fido2`: FIDO2 security keys that open the vault, as Face ID opens the seed's app
/// (docs/THREAT-MODEL.md, "Security keys"). The PIN stays the fallback; the recovery phrase
/// opens the vault when every key is lost.
struct FIDO2Command: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fido2",
        abstract: "Unlock with a FIDO2 security key (hmac-secret): enrol, list, remove.",
        discussion: """
            A security key with the hmac-secret extension (YubiKey 5, SoloKey, Nitrokey 3, …) then opens the \
            vault with a touch — or a touch and the key's own PIN (--require key-pin). The vault PIN keeps \
            working. Up to 4 keys: enrol a spare. The device is the first key plugged in, or \
            $NU11VLT_FIDO2_DEVICE (a /dev/hidraw path).
            """,
        subcommands: [Enroll.self, StatusCommand.self, Remove.self])

    enum Requirement: String, ExpressibleByArgument, CaseIterable {
        case touch
        case keyPIN = "key-pin"

        var policy: SecurityKeyRecord.Policy { self == .touch ? .touch : .touchAndKeyPIN }
    }

    static func device() throws -> FIDODevice {
        guard let device = try LockedVault.findSecurityKey() else {
            throw Nu11Error(.notFound, "no security key is plugged in", remedy: .frontEnd("plug in the security key and try again"))
        }
        return device
    }

    static func describe(_ policy: SecurityKeyRecord.Policy) -> String {
        policy == .touch ? "touch" : "touch + the key's PIN"
    }

    struct Enroll: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "enroll", abstract: "Enrol the plugged-in security key (primary PIN; two touches).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Option(name: .long, help: ArgumentHelp("What the key asks at unlock: touch (like Face ID), or key-pin (a touch and the key's own PIN).",
                                                valueName: "touch|key-pin"))
        var require: Requirement = .touch
        @Option(name: .long, help: ArgumentHelp("A name for this key in `fido2 status` (up to 32 bytes).", valueName: "text"))
        var name: String?

        func run() throws {
            try Failure.run {
                let device = try FIDO2Command.device()
                let vault = try openVaultWithPIN(location, pin)
                let info = try device.info()
                if require == .keyPIN && !info.hasPIN {
                    throw Nu11Error(.invalidArgument, "the security key has no PIN of its own, so --require key-pin cannot be met",
                                    remedy: .frontEnd("set a PIN on the key with its maker's tool, or enrol with --require touch"))
                }
                let keyPIN: SecretBytes? = try info.hasPIN ? pin.readKeyPIN() : nil
                let enrolled = try vault.profiles.securityKeys().count
                let label = name ?? "security key \(enrolled + 1)"
                let number = try vault.profiles.enrolSecurityKey(device: device, keyPIN: keyPIN, policy: require.policy, label: label) { step in
                    Output.note("nu11vlt: touch your security key (\(step) of 2)…")
                }
                print("security key \(number) (\(label)) enrolled: \(FIDO2Command.describe(require.policy)) opens the vault; the PIN still does")
            }
        }
    }

    struct StatusCommand: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "List the enrolled security keys.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var output: JSONOption

        struct Row: Encodable {
            let number: Int
            let name: String
            let requires: String
        }

        func run() throws {
            try Failure.run {
                let locked = location.locked
                guard locked.isInitialized else {
                    throw Nu11Error(.notFound, "no vault at \(locked.location.vaultRoot)", remedy: .createVaultOrPointAtIt)
                }
                let rows = try locked.securityKeys().enumerated().map {
                    Row(number: $0.offset + 1, name: $0.element.label, requires: $0.element.policy == .touch ? "touch" : "key-pin")
                }
                if output.json { return try Output.json(rows) }
                if rows.isEmpty { print("no security key enrolled (enrol one with `nu11vlt fido2 enroll`)") }
                for row in rows {
                    print("\(row.number)  \(Output.escaped(row.name))  (\(row.requires == "touch" ? "touch" : "touch + the key's PIN"))")
                }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove an enrolled security key (primary PIN).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: ArgumentHelp("The key's number, as `fido2 status` lists it.", valueName: "n"))
        var number: Int

        func run() throws {
            try Failure.run {
                let vault = try openVaultWithPIN(location, pin)
                let dropped = try vault.profiles.removeSecurityKey(number: number)
                print("security key \(number) removed; the vault's keys were rotated and what opens it with a security key changed, so no copy of the key store made before lets the removed key open anything added from now on")
                for label in dropped {
                    Output.note("nu11vlt: warning: the security key \"\(Output.escaped(label))\" was enrolled by an older version and could not follow; enroll it again (`nu11vlt fido2 enroll`)")
                }
            }
        }
    }
}
