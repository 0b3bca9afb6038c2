import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rotate the vault's keys: new domain keys, every key record and index row re-sealed.",
        discussion: """
            The vault the PIN opens gets new main and fade keys (and so new metadata subkeys); \
            every item key record is re-wrapped and every sealed index row and album name \
            re-sealed under them. No content is re-encrypted. An old copy of the key store \
            opens nothing added after the rotation. Crash-safe: interrupted anywhere, every \
            item still opens and the next command finishes the rotation. The other vault's \
            PIN (backup or duress) keeps working. `pin change` rotates too; the setting \
            keys.rotate_days rotates at the first unlock after that many days.
            """)
    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @OptionGroup var output: JSONOption
    @OptionGroup var quiet: QuietOption

    func run() throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            let line = RekeyProgressLine(quiet: quiet.quiet || output.json)
            let started = Date()
            let report = try vault.rekey(progress: line.update)
            line.finish()
            if output.json {
                try Output.json(report)
            } else {
                print(String(format: "keys rotated: %d key record(s) re-wrapped, %d row(s) and %d album name(s) re-sealed in %.1f s",
                             report.keyRecords, report.rows, report.albums, Date().timeIntervalSince(started)))
            }
        }
    }
}

/// One progress line for a rotation's two phases.
final class RekeyProgressLine {
    private let quiet: Bool
    private var line: ProgressLine?
    private var phase: RekeyProgress.Phase?

    init(quiet: Bool) { self.quiet = quiet }

    func update(_ progress: RekeyProgress) {
        if phase != progress.phase {
            line?.finish()
            line = ProgressLine("re-sealing \(progress.phase.rawValue)", items: progress.total, quiet: quiet)
            phase = progress.phase
        }
        line?.update(items: progress.done)
    }

    func finish() { line?.finish() }
}
