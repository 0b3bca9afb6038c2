// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Media
import Nu11Vault

extension ThumbnailSize: ExpressibleByArgument {}
extension ItemOrder: ExpressibleByArgument {}

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

/// The kitty graphics protocol: PNG only (f=100), sent in base64 chunks of 4096 bytes.
enum KittyGraphics {
    static func escape(png: [UInt8], id: Int? = nil, columns: Int? = nil, rows: Int? = nil, keepCursor: Bool = false) -> String {
        let encoded = Data(png).base64EncodedString()
        var keys = "a=T,f=100,q=2"
        if let id { keys += ",i=\(id)" }
        if let columns { keys += ",c=\(columns)" }
        if let rows { keys += ",r=\(rows)" }
        if keepCursor { keys += ",C=1" }
        var out = ""
        var start = encoded.startIndex
        while start < encoded.endIndex {
            let end = encoded.index(start, offsetBy: 4096, limitedBy: encoded.endIndex) ?? encoded.endIndex
            let more = end < encoded.endIndex ? 1 : 0
            out += start == encoded.startIndex ? "\u{1B}_G\(keys),m=\(more);\(encoded[start..<end])\u{1B}\\"
                : "\u{1B}_Gm=\(more);\(encoded[start..<end])\u{1B}\\"
            start = end
        }
        return out
    }

    static var terminalSpeaksIt: Bool {
        let env = ProcessInfo.processInfo.environment
        return env["TERM"] == "xterm-kitty" || env["KITTY_WINDOW_ID"] != nil
    }

    /// A grid of tiles: `perRow` tiles of 16×8 cells, each with its short ID under it.
    static func grid(_ items: [ItemSummary], vault: Vault, columns: Int) -> String {
        let perRow = max(1, columns / 17)
        var out = ""
        for row in stride(from: 0, to: items.count, by: perRow) {
            let slice = items[row..<min(items.count, row + perRow)]
            for item in slice {
                if item.thumbnail,
                   let tile = try? vault.photos.thumbnail(ItemRef(item.id), size: .grid),
                   let png = try? ImageHelper.shared.png(tile.bytes, maxSide: ImageLimits.gridSize) {
                    out += escape(png: png, columns: 16, rows: 8, keepCursor: true) + "\u{1B}[17C"
                } else {
                    out += "[\(item.isImage ? "image" : "file")]".padding(toLength: 17, withPad: " ", startingAt: 0)
                }
            }
            out += String(repeating: "\n", count: 8)
            out += slice.map { String($0.id.hex.prefix(8)).padding(toLength: 17, withPad: " ", startingAt: 0) }.joined()
                .trimmingTrailingSpaces + "\n"
        }
        return out
    }
}
