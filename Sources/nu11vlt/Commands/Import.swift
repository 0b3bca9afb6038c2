// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Encrypt files into the vault and print their new IDs.",
        discussion: """
            Each item is all-or-nothing. `-` reads one item from stdin (name it with --name). \
            Folders need -r (which skips .DS_Store, Thumbs.db and .thumbnails folders, and says so). The source files are left in place: delete them yourself when you \
            are sure (nu11vlt never deletes what it did not create).
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Option(name: .long, help: ArgumentHelp("Put the items into this album (it must exist). Other users can see it in /proc/PID/cmdline while the command runs; --album-fd keeps it out of argv.", valueName: "name"))
    var album: String?
    @Option(name: .customLong("album-fd"), help: ArgumentHelp("Read the album name from this descriptor (one line) instead of argv.", valueName: "n"))
    var albumFD: Int32?
    @Flag(name: [.short, .customLong("recursive")], help: "Import folders recursively (regular files only; symlinks are skipped).")
    var recursive = false
    @Option(name: .long, help: ArgumentHelp("Name for an item read from stdin.", valueName: "name"))
    var name = "stdin"
    @Option(name: .long, help: ArgumentHelp("Make the items fade (self-destruct) after this long: 30s, 10m, 24h, 7d, or default.",
                                            valueName: "duration"))
    var fade: String?
    @Flag(name: .customLong("albums-from-folders"),
          help: "With -r: put each folder's files into an album named after the folder's path (e.g. Trips, Trips/Rome), created when missing.")
    var albumsFromFolders = false
    @Flag(name: .customLong("skip-duplicates"),
          help: "Skip files whose content is already in the vault (compared byte for byte with the decrypted item). At a terminal you are asked instead.")
    var skipDuplicates = false
    @Option(name: .customLong("commit-every"),
            help: ArgumentHelp("Make the import durable every n files (default 256, at most 256 MiB): fewer loses less work to a crash or power cut, and syncs the disk more often.",
                               valueName: "n"))
    var commitEvery = ImportPlan.defaultCommitEvery
    @Option(name: .customLong("passphrase-fd"), help: ArgumentHelp("For an age file made with `age -p`: read its passphrase from this descriptor (one line) instead of the terminal.", valueName: "n"))
    var passphraseFD: Int32?
    @Flag(name: .customLong("as-file"), help: "Import an age file as it is (still encrypted), instead of opening it.")
    var asFile = false
    @OptionGroup var output: JSONOption
    @OptionGroup var quiet: QuietOption
    @Argument(help: ArgumentHelp("Files or folders to import, or - for stdin. An age file (a share sent to this vault's recipient, or made with `age -p`) is opened and what it holds imported.", valueName: "path"), completion: .file())
    var paths: [String]

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one file, folder or -") }
        if paths.filter({ $0 == "-" }).count > 1 { throw ValidationError("- (stdin) can be given only once") }
        if paths.contains("-") && pin.pinStdin { throw ValidationError("--pin-stdin cannot be used with - (stdin is the item)") }
        if let fade, fade != "default" { try Failure.usage { _ = try DurationText.parse(fade) } }
        if fade != nil && (album != nil || albumFD != nil) { throw ValidationError("fade items cannot go into an album") }
        if album != nil && albumFD != nil { throw ValidationError("use either --album or --album-fd") }
        if albumsFromFolders && !recursive { throw ValidationError("--albums-from-folders needs -r") }
        if albumsFromFolders && (album != nil || albumFD != nil || fade != nil) {
            throw ValidationError("--albums-from-folders chooses the albums itself; it cannot be combined with --album or --fade")
        }
        if !ImportPlan.commitEveryRange.contains(commitEvery) {
            throw ValidationError("--commit-every takes a number of files from \(ImportPlan.commitEveryRange.lowerBound) to \(ImportPlan.commitEveryRange.upperBound)")
        }
        if name != "stdin" && !paths.contains("-") {
            throw ValidationError("--name names the item read from stdin (-); files keep their own names")
        }
    }

    func run() throws {
        try Failure.run {
            let album = try albumFD.map { try PINReader.readName(fd: $0, what: "album name") } ?? self.album
            if !asFile, paths.count == 1, paths[0] != "-", Sharing.isAgeFile(paths[0]) {
                return try importAge(paths[0], album: album)
            }
            if !asFile, let age = paths.first(where: { $0 != "-" && Sharing.isAgeFile($0) }) {
                throw Nu11Error(.invalidArgument, "\(Output.escaped(age)) is an age file, which is imported on its own",
                                remedy: .frontEnd("import it with its own `nu11vlt import FILE.age`, or add --as-file to keep it encrypted"))
            }
            // Planned before the PIN is asked for: a missing file fails first.
            var plan = try ImportPlan(paths: paths, recursive: recursive, album: album, albumsFromFolders: albumsFromFolders,
                                     commitEvery: commitEvery)
            if !plan.skipped.isEmpty {
                let shown = plan.skipped.prefix(3).map { Output.escaped($0) }.joined(separator: ", ") + (plan.skipped.count > 3 ? ", …" : "")
                Output.note("nu11vlt: skipped \(plan.skipped.count) system file(s) and folder(s) (.DS_Store, Thumbs.db, .thumbnails/): \(shown)")
            }
            let vault = try openVault(location, pin)
            DecoderSandbox.warnIfWeaker()
            plan.fade = try fadeSeconds(fade, settings: vault.settings)
            var imported: [ItemSummary] = []
            if plan.files.contains("-") {
                let item = try vault.items.importStream(FileDescriptorStream(fd: 0, label: "stdin"), name: name, album: album, fade: plan.fade,
                                                  refuseEmpty: true)
                imported.append(item)
                if !output.json { print("\(item.id)  \(Output.escaped(item.name))") }
            }
            let candidates = plan.files.filter { $0 != "-" }
            plan.remove(Set(candidates).subtracting(try duplicatesRemoved(candidates, vault: vault)))
            try vault.items.prepare(plan)
            let regular = plan.files.filter { $0 != "-" }
            // The byte counts are for the progress line only: not asked of 10,000 files when
            // there is no line to show (stderr not a terminal, or --quiet).
            let sizes = !ProgressLine.shown(quiet: quiet.quiet) ? [] : regular.map { path -> UInt64 in
                var st = stat()
                return stat(path, &st) == 0 ? UInt64(st.st_size) : 0
            }
            var done: [UInt64] = [0]
            for size in sizes { done.append((done.last ?? 0) + size) }
            let line = ProgressLine("importing", items: regular.count, bytes: done.last ?? 0, quiet: quiet.quiet)
            var gone: [String] = []
            var batch: [ItemSummary] = []
            batch.reserveCapacity(regular.count)
            for group in plan.groups {
                let offset = batch.count + gone.count
                do {
                    batch += try vault.items.importGroup(group, of: plan, vanished: { path in
                        gone.append(path)
                        Output.note("nu11vlt: warning: \(Output.escaped(path)) vanished before it was imported; skipped")
                    }) { n, total in
                        // Ctrl-C at a client of the unlock agent: stop before the next file (not after the last).
                        if n < total { try AgentInterruption.check() }
                        line.update(items: offset + n, bytes: done[min(offset + n, done.count - 1)])
                    }
                } catch let stop as ImportStopped {
                    // Every file that fit is in the vault; say which one did not, and how many.
                    line.finish()
                    batch += stop.imported
                    if !output.json { for item in batch { print("\(item.id)  \(Output.escaped(item.name))") } }
                    let notImported = regular.count - batch.count - gone.count
                    guard stop.cause.diskFull else { throw partial(stop.cause, imported: batch.count, notImported: notImported, listed: !output.json) }
                    throw Nu11Error(.io, "the disk is full: \(stop.at) did not fit; \(batch.count) file(s) imported, \(notImported) not imported",
                                    remedy: .frontEnd("free some disk space, then import the rest again (--skip-duplicates skips what is already in)"),
                                    item: stop.at)
                } catch let error as Nu11Error where !batch.isEmpty {
                    // The groups before this one (other albums) are in the vault: listed, and counted.
                    line.finish()
                    if !output.json { for item in batch { print("\(item.id)  \(Output.escaped(item.name))") } }
                    throw partial(error, imported: batch.count, notImported: regular.count - batch.count - gone.count, listed: !output.json)
                } catch var error as Nu11Error where regular.count == 1 && error.code == .io && !error.message.contains(regular[0]) {
                    // One file: the error names it, whatever failed (e.g. a read-only vault folder).
                    line.finish()
                    error.message = "\(regular[0]) was not imported: \(error.message)"
                    throw error
                }
            }
            line.finish()
            if !output.json { for item in batch { print("\(item.id)  \(Output.escaped(item.name))") } }
            imported += batch
            if output.json { try Output.json(ItemJSON.all(imported)) }
            if !gone.isEmpty {
                throw Nu11Error(.notFound, "\(gone.count) of \(regular.count) file(s) vanished during the import; the other \(batch.count) were imported",
                                remedy: .frontEnd("check what moved or deleted them, and import them again"))
            }
        }
    }
}

extension Import {
    /// A folder import stopped by an error after some files went in (listed above it): the
    /// error, how many went in and how many did not, and a retry that does not import the
    /// ones already in a second time.
    func partial(_ error: Nu11Error, imported: Int, notImported: Int, listed: Bool) -> Nu11Error {
        var stopped = error
        stopped.message = "\(error.message); \(imported) file(s) imported\(listed ? " (listed above)" : ""), \(notImported) not imported"
        let retry = "import the rest with the same command and --skip-duplicates, which skips the \(imported) already in (without it they would be imported twice)"
        // An I/O error's own advice ("… and try again") would import them twice: the disk first, then the rest.
        let first = error.code == .io ? "check the disk" : error.remedy.map { Remedies.text($0) }
        stopped.remedy = .frontEnd(first.map { $0 + "; then " + retry } ?? retry)
        return stopped
    }

    /// Drops files already in the vault: with --skip-duplicates silently (a note says
    /// which), at a terminal after asking; elsewhere nothing is checked (it costs opening
    /// every item's metadata).
    func duplicatesRemoved(_ files: [String], vault: Vault) throws -> [String] {
        // Through the unlock agent, stdin is the client's terminal (the agent itself has none).
        let ask = !skipDuplicates && isatty(0) == 1 && (PINReader.hasTerminal || ShellSession.clientTerminal)
        guard skipDuplicates || ask, !files.isEmpty else { return files }
        let finder = try DuplicateFinder(vault)
        var kept: [String] = []
        var answerAll: Bool?
        for path in files {
            guard let match = try finder.match(path) else {
                kept.append(path)
                continue
            }
            let what = "\(Output.escaped(path)) is already in the vault as \(match.id) (\(Output.escaped(match.name)))"
            if skipDuplicates || answerAll == false {
                Output.note("nu11vlt: skipped \(what)")
                continue
            }
            if answerAll == true {
                kept.append(path)
                continue
            }
            Output.stderr("\(what). Import it again? [y]es, [n]o, [a]ll, [s]kip all: ")
            switch readLine()?.trimmingCharacters(in: .whitespaces).lowercased().first {
            case "y": kept.append(path)
            case "a":
                answerAll = true
                kept.append(path)
            case "s": answerAll = false
            default: break
            }
        }
        return kept
    }
}
