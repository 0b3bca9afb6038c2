// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Album: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "album",
        abstract: "Create, rename, list, delete albums, and move items between them.",
        subcommands: [Create.self, Rename.self, ListAlbums.self, DeleteAlbum.self, Move.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Create an album (its name is stored encrypted).")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var output: JSONOption
        @Option(name: .customLong("name-fd"), help: ArgumentHelp("Read the name from this descriptor (one line) instead of argv, where other users can see it in /proc/PID/cmdline while the command runs.", valueName: "n"))
        var nameFD: Int32?
        @Argument(help: "The album name (or use --name-fd).") var name: String?

        func validate() throws {
            if (name == nil) == (nameFD == nil) { throw ValidationError("give the album name, or --name-fd") }
        }

        func run() throws {
            try Failure.run {
                let name = try nameFD.map { try PINReader.readName(fd: $0, what: "album name") } ?? self.name ?? ""
                let album = try openVault(location, pin).albums.createAlbum(name)
                if output.json { try Output.json(album) } else { print("\(album.id)  \(Output.escaped(album.name))") }
            }
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rename", abstract: "Rename an album.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The current name.") var name: String
        @Argument(help: "The new name.") var newName: String
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                try openVault(location, pin).albums.renameAlbum(name, to: newName)
                if output.json { return try Output.json(Results.AlbumChange(album: name, renamedTo: newName, items: [], itemsAction: nil)) }
                print("renamed '\(Output.escaped(name))' to '\(Output.escaped(newName))'")
            }
        }
    }

    struct ListAlbums: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List albums with their item counts.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let albums = try openVault(location, pin).albums.list()
                if output.json { return try Output.json(albums) }
                for album in albums { print("\(album.id)  \(String(album.items).padding(toLength: 6, withPad: " ", startingAt: 0))  \(Output.escaped(album.name))") }
            }
        }
    }

    struct DeleteAlbum: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete an album; its items go back to Photos or are deleted.",
            discussion: "At a terminal you are asked which; scripts pass --items photos or --items delete.")
        enum Disposition: String, ExpressibleByArgument, CaseIterable { case photos, delete }

        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Option(name: .long, help: "What to do with the album's items: photos (keep them) or delete (crypto-shred them).")
        var items: Disposition?
        @Argument(help: "The album name.") var name: String
        @OptionGroup var output: JSONOption

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin)
                let members = try vault.items.list(album: name, limit: Int.max).items.map(\.id.hex)
                var choice = items
                if choice == nil {
                    guard isatty(0) == 1 else {
                        throw Nu11Error(.invalidArgument, "album delete needs to know what to do with the items",
                                        remedy: .frontEnd("pass --items photos or --items delete"))
                    }
                    Output.stderr("Move the items of '\(name)' back to Photos, or delete them? [photos/delete] ")
                    choice = readLine().flatMap { Disposition(rawValue: $0.trimmingCharacters(in: .whitespaces).lowercased()) }
                    guard choice != nil else {
                        throw Nu11Error(.invalidArgument, "no choice made; nothing was changed", remedy: .frontEnd("answer photos or delete"))
                    }
                }
                try vault.albums.deleteAlbum(name, items: choice == .delete ? .deleteItems : .moveItemsToPhotos)
                if output.json {
                    return try Output.json(Results.AlbumChange(album: name, renamedTo: nil, items: members,
                                                               itemsAction: choice == .delete ? "deleted" : "moved to photos"))
                }
                print("deleted album '\(Output.escaped(name))'\(choice == .delete ? " and its items" : "; its items are back in Photos")")
            }
        }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "move",
            abstract: "Move items into an album, or back to Photos with --photos. The ciphertext is not changed.")
        @OptionGroup var location: LocationOptions
        @OptionGroup var pin: PINOptions
        @Option(name: .long, help: ArgumentHelp("The target album.", valueName: "name")) var to: String?
        @Flag(name: .long, help: "Move back to Photos.") var photos = false
        @Argument(help: "Item IDs (or unique prefixes of 4+ hex digits).", transform: ItemRef.parse) var ids: [ItemRef]
        @OptionGroup var output: JSONOption

        func validate() throws {
            if (to == nil) == !photos { throw ValidationError("give either --to ALBUM or --photos") }
            if ids.isEmpty { throw ValidationError("give at least one item ID") }
        }

        func run() throws {
            try Failure.run {
                let vault = try openVault(location, pin)
                var moved: [String] = []
                for id in ids {
                    let full = try Results.fullID(vault, id)
                    try vault.albums.moveItem(id, toAlbum: to)
                    moved.append(full)
                    if !output.json { print("moved \(full) to \(to.map { "'\($0)'" } ?? "Photos")") }
                }
                if output.json { try Output.json(Results.AlbumChange(album: to, renamedTo: nil, items: moved, itemsAction: "moved")) }
            }
        }
    }
}
