// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Verify every item, the index against the files, the settings and the key store.",
        discussion: """
            Each item's key record, header and every chunk are authenticated, and its metadata \
            file (Meta/<ID>.n11m) and recovery seal; each album's name file. Exit 0 when \
            everything is sound (or was repaired), 5 when something is damaged. --repair rebuilds \
            a lost index from the vault folder, rewrites missing or damaged metadata and name \
            files from the index with fresh recovery seals (never overwriting a name file this \
            key store cannot open), moves damaged items and files without an index entry to \
            Quarantine/ (marking them), removes leftover temp files and key records that open \
            nothing; it never deletes an item that still decrypts.
            """)
    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Flag(name: .long, help: "Quarantine damaged items and clean up leftovers.") var repair = false
    @OptionGroup var output: JSONOption
    @OptionGroup var quiet: QuietOption

    func run() throws {
        try Failure.run {
            // A lost or damaged index is set aside (never deleted) and rebuilt from the vault
            // folder by this repair (FORMAT.md §5.3).
            if repair, let aside = try location.locked.setAsideDamagedIndex() {
                Output.note("nu11vlt: the index was damaged or missing (set aside: \(aside)); rebuilding it from the vault folder")
            }
            let vault = try openVault(location, pin)
            var line: ProgressLine?
            let report = try vault.maintenance.check(repair: repair) { done, total in
                if line == nil { line = ProgressLine("checking", items: total, quiet: quiet.quiet) }
                line?.update(items: done)
                // A repair runs to its end: only a check that writes nothing stops half-way.
                if !repair { try AgentInterruption.check() }
            }
            line?.finish()
            if output.json {
                try Output.json(report.json)
            } else {
                for r in report.rebuilt { print("rebuilt  \(r.item): \(Output.escaped(r.problem))\(r.repaired.map { " — \($0)" } ?? "")") }
                for f in report.failures { print("DAMAGED  \(f.item): \(Output.escaped(f.problem))\(f.repaired.map { " — \($0)" } ?? "")") }
                for w in report.warnings { print("warning  \(w.item): \(Output.escaped(w.problem))\(w.repaired.map { " — \($0)" } ?? "")") }
                let rebuilt = report.rebuilt.isEmpty ? "" : ", \(report.rebuilt.count) rebuilt"
                print("checked \(report.itemsChecked) item(s): \(report.ok) sound, \(report.failures.count) damaged\(rebuilt), \(report.warnings.count) warning(s)")
            }
            if !report.passed {
                let open = report.failures.filter { $0.repaired == nil }
                // Recovery data that is missing or put back is not repaired by --repair: a new phrase is the fix.
                let onlyRecovery = open.allSatisfy { $0.item == "recovery.n11r" }
                throw Nu11Error(.corrupted, "\(open.count) problem(s) found",
                                remedy: .frontEnd(onlyRecovery ? "put recovery.n11r back from a backup made after the last `nu11vlt recovery setup`, or run `nu11vlt recovery setup` for a new phrase"
                                                               : "run `nu11vlt check --repair`: it rebuilds index entries from the items' sidecars and moves what cannot be opened to Quarantine/, deleting nothing"))
            }
        }
    }
}
