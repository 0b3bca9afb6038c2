// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Share the vault folder with your other devices (synced by Syncthing or another file synchronizer).",
        discussion: """
            On the device that has the vault, `device pair` shows a one-time code. Let the vault folder \
            sync to the other device, then run `device add` there with the code: that device gets a key \
            store of its own, with its own PIN. Each device's imports are listed on the others after their \
            files arrive (at the next unlock). Fade items, the backup vault and the duress PIN stay on \
            their own device. Deletions, note edits, albums and album moves travel too (docs/FORMAT.md § 9.6).
            """,
        subcommands: [Pair.self, Add.self, ListDevices.self])

    static func defaultName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "device" }
        let name = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "device" : String(name.prefix(64))
    }

    struct Pair: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pair",
            abstract: "Offer the vault to a new device: prints a one-time code, good for an hour (primary PIN).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Option(name: .long, help: "This device's name in `device list` (default: the host name).")
        var name: String?
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin, prompt: "Primary PIN or passphrase: ")
                defer { vault.lock() }
                let made = try vault.devices.pair(name: name ?? DeviceCommand.defaultName())
                let code = RecoveryKey.text(made.code)
                let lines = """

                    Pairing code (one use, for the next hour — type it on the new device, never store it):

                        \(code)

                    Let the vault folder sync to the new device, then run there:
                        nu11vlt device add --vault <the synced folder>
                    """
                if output.json {
                    try Output.json(Results.DevicePaired(device: made.device, expires: made.expires, keyFilesWritten: made.keyFilesWritten))
                    Output.note(lines)
                } else {
                    print("this device is \(made.device); \(made.keyFilesWritten) item key(s) written for the other devices")
                    print(lines)
                }
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Join a vault folder another device shares: asks for the pairing code, then a new PIN for this device.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Option(name: .customLong("code-fd"),
                help: ArgumentHelp("Read the pairing code from this file descriptor (one line) instead of the terminal.", valueName: "n"))
        var codeFD: Int32?
        @Option(name: .long, help: "This device's name in `device list` (default: the host name).")
        var name: String?
        @OptionGroup var kdf: KDFOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if let fd = codeFD, fd < 0 { throw ValidationError("--code-fd must be a file descriptor number") }
        }

        func run() throws {
            try Failure.run {
                let loc = location.location
                let typed = try PINReader.read(prompt: "Pairing code: ", from: codeFD.map { .fd($0) } ?? .terminal)
                let code = try RecoveryKey.parse(typed, as: .pairingCode)
                let secret = try PINReader.readNew(prompt: "New PIN or passphrase for this device: ", from: pin.source)
                let parameters = try kdf.parameters()
                var report = try LockedVault(loc).addDevice(code: code, pin: secret, parameters: parameters,
                                                            name: name ?? DeviceCommand.defaultName())
                if let warning = Strength.pinWarning(secret, parameters: parameters) { Output.note("nu11vlt: " + warning) }
                for line in report.unfinished { Output.note("nu11vlt: warning: done, but " + Output.escaped(line)) }
                // The key store is in place; the first unlock takes in the other devices' items.
                let vault = try LockedVault(loc).unlock(pin: secret)
                vault.onNotice = { Output.note("nu11vlt: warning: \(Output.escaped(Remedies.line($0)))") }
                report.items = try vault.status().items ?? 0
                vault.lock()
                if output.json {
                    try Output.json(report)
                } else {
                    print("this device (\(report.device)) joined the vault shared by device \(report.pairedWith): \(report.items) item(s) listed; its own PIN opens it here")
                }
            }
        }
    }

    struct ListDevices: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "The devices that share the vault.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin)
                defer { vault.lock() }
                let devices = try vault.devices.list()
                if output.json { return try Output.json(devices) }
                if devices.isEmpty { return print("the vault is not shared with another device (`nu11vlt device pair` offers it)") }
                for device in devices {
                    let when = device.added.map { Output.localTime.string(from: Date(timeIntervalSince1970: Double($0))) } ?? "?"
                    let name = device.name.map(Output.escaped) ?? "(unreadable: \(Output.escaped(device.problem ?? "")))"
                    print("\(device.id)  \(name)  added \(when)\(device.thisDevice ? "  (this device)" : "")")
                }
            }
        }
    }
}
