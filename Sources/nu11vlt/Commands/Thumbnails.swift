// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Media
import Nu11Vault

struct Thumbnails: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnails",
        abstract: "Make the thumbnails of photos imported before thumbnails existed.",
        discussion: "Each photo without one is decrypted in memory once; its thumbnails and image facts (size, capture date, camera, location present) are sealed into the vault.")

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Flag(name: .long, help: "Make the missing thumbnails (required: the only mode).") var missing = false
    @OptionGroup var output: JSONOption
    @OptionGroup var quiet: QuietOption

    func validate() throws {
        if !missing { throw ValidationError("say what to do: --missing makes the thumbnails photos lack") }
    }

    func run() throws {
        try Failure.run {
            var line: ProgressLine?
            let result = try openVault(location, pin).photos.makeMissingThumbnails { done, total in
                if line == nil { line = ProgressLine("making thumbnails", items: total, quiet: quiet.quiet) }
                line?.update(items: done)
                try AgentInterruption.check()
            }
            line?.finish()
            if output.json {
                try Output.json(result)
            } else {
                print("checked \(result.checked) item(s): \(result.made) thumbnail(s) made, \(result.failed) image(s) could not be decoded")
            }
            if result.failed > 0 { throw ExitCode(1) }
        }
    }
}
