// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Sweep: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Destroy expired fade items now. Needs no PIN; run it from a timer.")
    @OptionGroup var location: LocationOptions
    @OptionGroup var output: JSONOption

    func run() throws {
        try Failure.run {
            let report = try location.locked.sweep(onWait: waiting)
            if output.json { return try Output.json(Results.Swept(shredded: report.shredded, warnings: report.warnings)) }
            printGate(report)
            print("swept: \(report.shredded.count) item(s) destroyed")
        }
    }
}
