// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Rotate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate",
        abstract: "Turn a photo a quarter turn right (clockwise, the default), left, or a half turn.",
        discussion: """
            The turn is kept in the photo's sealed metadata; the stored bytes never change. Its \
            thumbnails are made again, turned. `export` writes a JPEG with the turn in its EXIF \
            orientation (losslessly: the image data is untouched); other images (PNG, WebP, HEIC, \
            …) export as stored, in their own orientation. Four right turns (or a left after a \
            right) bring a photo back to its own orientation, and its export back to the stored bytes.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Flag(name: .long, help: "A quarter turn anticlockwise.")
    var left = false
    @Flag(name: .long, help: "A quarter turn clockwise (the default).")
    var right = false
    @Flag(name: .long, help: "A half turn.")
    var half = false
    @Argument(help: "The photo's ID (or a unique prefix of 4+ hex digits).", transform: ItemRef.parse)
    var id: ItemRef
    @OptionGroup var output: JSONOption

    func validate() throws {
        if [left, right, half].filter({ $0 }).count > 1 { throw ValidationError("use one of --left, --right and --half") }
    }

    func run() throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            let item = try vault.photos.rotate(id, quarterTurns: left ? -1 : half ? 2 : 1)
            let turns = item.rotation
            if output.json {
                try Output.json(ItemJSON(item))
            } else {
                let shown = turns == 0 ? "back in its own orientation" : "turned \(turns * 90)° clockwise from its own orientation"
                print("\(item.id.hex) \(item.name): \(shown)")
                if item.type != "image/jpeg" && turns != 0 {
                    print("note: thumbnails and the app show the turn; export writes this \(item.type) file as stored")
                }
            }
        }
    }
}
