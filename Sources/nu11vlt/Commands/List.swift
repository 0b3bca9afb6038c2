// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault
import Nu11Media

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List items, a page at a time, in import order (or by capture date).",
        discussion: """
            Times are local: the import time, or with --sort taken the capture date (the \
            date the list is sorted by). When more items remain, the ID to pass to --after is printed on \
            stderr; --all (or --limit 0) lists everything. --json prints one document: \
            {"items": [...], "next": ID or null} (times ISO 8601 with their offset; docs/JSON.md).
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Option(name: .long, help: ArgumentHelp("Only the items of this album.", valueName: "name"))
    var album: String?
    @Flag(name: .long, help: "Only the items in Photos (not in an album).")
    var photos = false
    @Option(name: .long, help: ArgumentHelp("Items per page (0: all).", valueName: "n"))
    var limit = 100
    @Flag(name: .long, help: "Every item, no paging.")
    var all = false
    @Option(name: .long, help: ArgumentHelp("Continue after this item ID.", valueName: "id"), transform: ItemID.parseWhole)
    var after: ItemID?
    @Option(name: .long, help: "imported (import order) or taken (capture date: EXIF, else the file's mtime).")
    var sort: ItemOrder = .imported
    @OptionGroup var taken: TakenRangeOptions
    @Flag(name: .long, help: "Draw the photos' grid tiles inline (terminals that speak the kitty graphics protocol).")
    var thumbnails = false
    @OptionGroup var output: JSONOption

    func validate() throws {
        if limit < 0 { throw ValidationError("--limit must be 0 (all) or more") }
        if all && limit != 100 && limit != 0 { throw ValidationError("use either --all or --limit") }
        if album != nil && photos { throw ValidationError("use either --album or --photos") }
        if thumbnails && output.json { throw ValidationError("use either --thumbnails or --json") }
    }

    func run() throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            let everything = all || limit == 0
            let page = try vault.items.list(album: album, photosOnly: photos, limit: everything ? Int.max / 2 : limit, after: after,
                                            order: sort, taken: taken.range)
            if thumbnails && KittyGraphics.terminalSpeaksIt {
                var size = winsize()
                let columns = ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
                Output.stdout(Array(KittyGraphics.grid(page.items, vault: vault, columns: columns).utf8))
            } else if output.json {
                try Output.json(ListDocument(items: page.items, next: page.next))
                return
            } else {
                let formatter = Output.localTime
                if thumbnails {
                    Output.note("nu11vlt: this terminal does not speak the kitty graphics protocol; listing without tiles")
                }
                for item in page.items {
                    let where_ = (item.album.map { "[\($0)]" } ?? "") + (item.fadesAt.map { " (fades \(formatter.string(from: $0)))" } ?? "")
                    print("\(item.id)  \(Output.size(item.size).padding(toLength: 10, withPad: " ", startingAt: 0))  \(formatter.string(from: sort == .taken ? item.sortDate : item.created))  \(Output.escaped(item.name + " " + where_).trimmingTrailingSpaces)")
                }
            }
            if let next = page.next { Output.note("more items: run the same command with --after \(next)") }
        }
    }
}

/// `list --json`: the complete result as one document.
struct ListDocument: Encodable {
    var items: [ItemSummary]
    var next: ItemID?

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(ItemJSON.all(items), forKey: .items)
        try c.encode(next?.hex, forKey: .next)  // null on the last page
    }

    enum CodingKeys: String, CodingKey { case items, next }
}

extension ItemOrder: ExpressibleByArgument {}
