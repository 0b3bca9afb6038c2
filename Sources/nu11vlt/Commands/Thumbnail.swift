// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Media
import Nu11Vault

extension ThumbnailSize: ExpressibleByArgument {}

struct Thumbnail: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Write a photo's thumbnail (JPEG, or WebP for images with transparency).",
        discussion: "The grid tile is about 256 px on the long side, the preview about 1600 px. Items that are not images have none.")

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Option(name: .long, help: "grid (≈256 px) or preview (≈1600 px).") var size: ThumbnailSize = .grid
    @Option(name: .short, help: ArgumentHelp("Where to write: a path, or - for stdout.", valueName: "path"), completion: .file())
    var output: String
    @Flag(name: .long, help: "Replace the output file if it exists.") var force = false
    @Argument(help: "The item ID (or a unique prefix of 4+ hex digits).", transform: ItemRef.parse) var id: ItemRef

    func validate() throws {
        if output == "-" && isatty(1) == 1 {
            throw ValidationError("refusing to write an image to the terminal; redirect it or pass -o FILE")
        }
    }

    func run() throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            if output == "-" {
                Output.stdout(try vault.photos.thumbnail(id, size: size).bytes)
                vault.audit("thumbnail export", ref: id, detail: size.rawValue)
            } else {
                try vault.photos.exportThumbnail(id, size: size, toFile: output, overwrite: force)
            }
        }
    }
}
