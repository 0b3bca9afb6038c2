// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct IdentityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        abstract: "Print the vault's age recipients, for others to share files with it.",
        discussion: """
            Two recipients: post-quantum (age1pq1…, ML-KEM-768 + X25519; for age 1.3 or later) \
            and classical (age1…, X25519; for any age). Give one of them to whoever sends you \
            files; `nu11vlt import FILE.age` opens what they send. A key rotation (`rekey`) \
            gives new recipients; files sent to the old ones still import here.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Flag(name: .customLong("post-quantum"), help: "Print only the post-quantum recipient.")
    var postQuantum = false
    @Flag(name: .long, help: "Print only the classical (X25519) recipient.")
    var classical = false
    @OptionGroup var json: JSONOption

    func validate() throws {
        if postQuantum && classical { throw ValidationError("use either --post-quantum or --classical") }
    }

    func run() throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            let (pq, x25519) = try vault.sharing.recipients()
            if json.json {
                try Output.json(["postQuantum": pq.encoded, "classical": x25519.encoded])
            } else if postQuantum {
                print(pq.encoded)
            } else if classical {
                print(x25519.encoded)
            } else {
                print("# post-quantum (age 1.3 or later)")
                print(pq.encoded)
                print("# classical (X25519, any age)")
                print(x25519.encoded)
            }
        }
    }
}

struct ShareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Encrypt items into one age file for other people's age recipients.",
        discussion: """
            The file is a tar of the items (names and modification dates), encrypted with age \
            (c2sp.org/age): the recipient opens it with `age -d -i key.txt FILE | tar x`, or \
            imports it into their own vault with `nu11vlt import FILE`. Locations are removed \
            from photos and videos unless --keep-location. Post-quantum (age1pq1…) and \
            classical (age1…) recipients cannot be mixed in one file. The file reveals the \
            total size, not the names or how many items. The audit log records the share \
            (recipient fingerprints and the count, never names).
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Option(name: .customLong("to"), help: ArgumentHelp("An age recipient (age1pq1… or age1…); repeat for several.", valueName: "recipient"))
    var to: [String] = []
    @Option(name: .customLong("to-file"), help: ArgumentHelp("A file of recipients, one per line (# comments).", valueName: "file"),
            completion: .file())
    var toFile: String?
    @Option(name: .short, help: ArgumentHelp("The age file to write (it must not exist).", valueName: "file"), completion: .file())
    var output: String
    @Flag(name: .shortAndLong, help: "Write ASCII armor (PEM text) instead of binary.")
    var armor = false
    @Flag(name: .customLong("keep-location"), help: "Keep the location of photos and videos (it is removed by default).")
    var keepLocation = false
    @Option(name: .long, help: ArgumentHelp("Every item of this album.", valueName: "name"))
    var album: String?
    @OptionGroup var taken: TakenRangeOptions
    @Argument(help: "Item IDs (see `nu11vlt list`), or unique prefixes of 4+ hex digits.", transform: ItemRef.parse)
    var ids: [ItemRef] = []
    @OptionGroup var json: JSONOption
    @OptionGroup var quiet: QuietOption

    func validate() throws {
        let selections = [!ids.isEmpty, album != nil, taken.given].filter { $0 }.count
        if selections == 0 { throw ValidationError("give item IDs, --album NAME or --taken-from/--taken-to DATE") }
        if selections > 1 { throw ValidationError("give one of: item IDs, --album, --taken-from/--taken-to") }
        if to.isEmpty && toFile == nil { throw ValidationError("give a recipient with --to age1… or --to-file FILE") }
        if output == "-" { throw ValidationError("a share is written to a file: give -o FILE.age") }
        if FileManager.default.fileExists(atPath: output) { throw ValidationError("\(output) already exists; choose another -o path") }
    }

    /// Every recipient, parsed before the PIN is asked: a bad one is one line naming it.
    func recipients() throws -> [AgeRecipient] {
        var list = try to.enumerated().map { n, text in
            do { return try AgeRecipient(parsing: text) } catch let error as Nu11Error {
                throw error.about(to.count > 1 ? "--to #\(n + 1)" : "--to")
            }
        }
        if let toFile {
            let text: String
            do { text = try String(contentsOfFile: toFile, encoding: .utf8) } catch {
                throw Nu11Error(.notFound, "\(toFile) cannot be read as a text file", remedy: .advice(.checkPath), item: toFile)
            }
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
                do { list.append(try AgeRecipient(parsing: trimmed)) } catch let error as Nu11Error {
                    throw error.about("\(toFile) line \(n + 1)")
                }
            }
        }
        guard !list.isEmpty else { throw Nu11Error(.invalidArgument, "no recipient given", remedy: .advice(.ageRecipientFormat)) }
        if Set(list.map(\.isPostQuantum)).count > 1 {
            throw Nu11Error(.invalidArgument, "post-quantum (age1pq1…) and classical (age1…) recipients cannot share one file",
                            remedy: .frontEnd("make one share for each kind: classical recipients would undo the post-quantum protection"))
        }
        return list
    }

    private var selection: ExportSelection {
        if let album { return .album(album) }
        if let range = taken.range { return .taken(from: range.from, to: range.to) }
        return .items(ids)
    }

    func run() throws {
        try Failure.run {
            let recipients = try recipients()
            let vault = try openVault(location, pin)
            let items = try vault.items.select(selection)
            guard !items.isEmpty else {
                throw Nu11Error(.notFound, "no item matches; nothing was written", remedy: .frontEnd("see the items with `nu11vlt list`"))
            }
            let total = items.reduce(0) { $0 + $1.size }
            let line = ProgressLine("sharing", items: items.count, bytes: total, quiet: quiet.quiet || json.json)
            let report = try vault.sharing.share(items, to: recipients, output: output, armor: armor, stripLocation: !keepLocation) { done, bytes in
                line.update(items: done, bytes: bytes)
                try AgentInterruption.check()
            }
            line.finish()
            let kind = report.postQuantum ? "post-quantum" : "classical"
            if json.json {
                try Output.json(Results.Shared(items: report.items, bytes: report.bytes, output: output, recipients: recipients.count,
                                               postQuantum: report.postQuantum, strippedLocation: !keepLocation))
            } else if !quiet.quiet {
                Output.note("shared \(report.items) item(s), \(Output.size(report.bytes)), with \(recipients.count) \(kind) recipient(s)"
                    + (keepLocation ? ", locations kept" : ", location removed from \(report.stripped) photo(s) and video(s)")
                    + ": \(Output.escaped(output))")
            }
        }
    }
}
