// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        abstract: "Rotate the vault's keys: new domain keys, every key record and index row re-sealed.",
        discussion: """
            The vault the PIN opens gets new main and fade keys (and so new metadata subkeys); \
            every item key record is re-wrapped and every sealed index row and album name \
            re-sealed under them. No content is re-encrypted. An old copy of the key store \
            opens nothing added after the rotation. Crash-safe: interrupted anywhere, every \
            item still opens and the next command finishes the rotation. The other vault's \
            PIN (backup or duress) keeps working. `pin change` rotates too; the setting \
            keys.rotate_days rotates at the first unlock after that many days.

            --content also re-encrypts every item under a fresh item key (for a suspected \
            leak of item keys): streaming, each item replaced at one commit point by a new \
            item with a new ID (printed: old → new), album, name, dates and fade kept. Cut \
            short, run it again: it re-encrypts only what is left.
            """)
    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Flag(name: .long, help: "Also re-encrypt every item's content under a fresh item key (items get new IDs).")
    var content = false
    @OptionGroup var output: JSONOption
    @OptionGroup var quiet: QuietOption

    struct ContentReport: Encodable {
        var keys: RekeyReport
        var reencrypted: [[String: String]]
        var damaged: [String]
    }

    func run() throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            let line = RekeyProgressLine(quiet: quiet.quiet || output.json)
            let started = Date()
            let report = try vault.maintenance.rekey(progress: line.update)
            line.finish()
            if content {
                var bar: ProgressLine?
                let (map, failed) = try vault.maintenance.rekeyContent { done, total in
                    if bar == nil { bar = ProgressLine("re-encrypting", items: total, quiet: quiet.quiet || output.json) }
                    bar?.update(items: done)
                }
                bar?.finish()
                if output.json {
                    try Output.json(ContentReport(keys: report, reencrypted: map.map { ["old": $0.old, "new": $0.new] }, damaged: failed))
                } else {
                    for (old, new) in map { print("\(old) → \(new)") }
                    print("keys rotated and \(map.count) item(s) re-encrypted under fresh item keys in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
                }
                if !failed.isEmpty {
                    throw Nu11Error(.corrupted, "\(failed.count) damaged item(s) could not be re-encrypted (e.g. \(failed[0])); they are as they were",
                                    remedy: .frontEnd("run `nu11vlt check` to see what is damaged"))
                }
                return
            }
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
