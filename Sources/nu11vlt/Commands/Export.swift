// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Storage
import Nu11Vault

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Decrypt items: one to a file (or to stdout with -o -), or several into a folder.",
        discussion: """
            With one ID, -o is the file to write (or a folder to write it into). With several IDs, \
            --album, --taken-from/--taken-to or --all, -o is a folder (made if missing): each item \
            keeps its name, made safe for a file name, and a name already taken there gets " (2)", \
            so nothing is ever replaced. One unlock for the whole export. A file is written \
            atomically (0600): a damaged item leaves no partial file, and the others go on.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Option(name: .short, help: ArgumentHelp("Where to write: a file, a folder, or - for stdout.", valueName: "path"), completion: .file())
    var output: String
    @Flag(name: .long, help: "Replace the output file if it exists (one item to a file only).")
    var force = false
    @Flag(name: .customLong("strip-location"), help: "Remove the location of a photo (EXIF GPS, XMP) or a video (MP4/MOV/Matroska tags) without re-encoding it; refused when it cannot be removed.")
    var stripLocation = false
    @Flag(name: .customLong("keep-location"), help: "Keep the location even when the export.strip_location setting is on.")
    var keepLocation = false
    @Option(name: .long, help: ArgumentHelp("Every item of this album.", valueName: "name"))
    var album: String?
    @OptionGroup var taken: TakenRangeOptions
    @Flag(name: .long, help: "Every item of the vault.")
    var all = false
    @Argument(help: "Item IDs (see `nu11vlt list`), or unique prefixes of 4+ hex digits.", transform: ItemRef.parse)
    var ids: [ItemRef] = []
    @OptionGroup var json: JSONOption
    @OptionGroup var quiet: QuietOption

    /// Several items (or a selection) go into a folder; one ID goes to a file unless -o is a folder.
    var intoFolder: Bool {
        var isFolder: ObjCBool = false
        return ids.count != 1 || FileManager.default.fileExists(atPath: output, isDirectory: &isFolder) && isFolder.boolValue
    }

    /// What needs no PIN is checked before the prompt.
    func validate() throws {
        let selections = [!ids.isEmpty, album != nil, taken.given, all].filter { $0 }.count
        if selections == 0 { throw ValidationError("give item IDs, --album NAME, --taken-from/--taken-to DATE or --all") }
        if selections > 1 { throw ValidationError("give one of: item IDs, --album, --taken-from/--taken-to, --all") }
        if stripLocation && keepLocation { throw ValidationError("use either --strip-location or --keep-location") }
        if intoFolder { return try validateFolder() }
        if json.json && output == "-" { throw ValidationError("--json describes an export to a file; with -o - stdout carries the item itself") }
        if output == "-" {
            if isatty(1) == 1 { throw ValidationError("refusing to write an item's bytes to the terminal; redirect stdout or pass -o FILE") }
            return
        }
        if FileManager.default.fileExists(atPath: output) && !force {
            throw ValidationError("\(output) already exists; choose another -o path or pass --force")
        }
        try parentExists(output)
    }

    private func validateFolder() throws {
        if output == "-" { throw ValidationError("several items go into a folder: give -o DIR") }
        if force { throw ValidationError("--force does not apply to a folder: nothing there is replaced, a taken name gets \" (2)\"") }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: output, isDirectory: &isFolder) {
            if !isFolder.boolValue { throw ValidationError("\(output) is a file; several items go into a folder (-o DIR)") }
            return
        }
        try parentExists(output)
    }

    private func parentExists(_ path: String) throws {
        var isFolder: ObjCBool = false
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && !FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder) {
            throw ValidationError("the folder \(parent) does not exist; create it first or choose another -o path")
        }
    }

    func run() throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            let strip = stripLocation || (vault.photos.stripsLocationByDefault && !keepLocation)
            if intoFolder { return try exportIntoFolder(vault, strip: strip) }
            let id = ids[0]
            if output == "-" {
                var sink = FileDescriptorStream(fd: 1, label: "stdout")
                try vault.items.export(id, to: &sink, stripLocation: strip)
                return
            }
            var line: ProgressLine?
            let bytes = try vault.items.export(id, toFile: output, overwrite: force, stripLocation: strip) { done, total in
                if line == nil { line = ProgressLine("exporting", items: 1, bytes: total, quiet: quiet.quiet || json.json) }
                line?.update(bytes: done)
                try AgentInterruption.check()
            }
            line?.finish()
            let item = try vault.items.item(id)
            let motion = try exportMotion(of: item, vault: vault, strip: strip)
            if json.json {
                try Output.json(Results.Exported(id: item.id.hex, name: item.name, bytes: bytes, output: output, strippedLocation: strip,
                                                 motion: motion))
            }
        }
    }

    /// A Live Photo's still exported to a file takes its motion along, beside it under the
    /// same name with the motion's extension (`trip.heic` → `trip.mov`); a file already there
    /// is never replaced without --force (the still is written; the motion is named, not lost).
    private func exportMotion(of item: ItemSummary, vault: Vault, strip: Bool) throws -> String? {
        guard let motionID = item.motion, let video = try? vault.items.item(ItemRef(motionID)) else { return nil }
        let ext = (video.name as NSString).pathExtension
        let base = (output as NSString).deletingPathExtension
        var path = base + "." + (ext.isEmpty ? "mov" : ext)
        if path == output { path = base + " (motion)." + (ext.isEmpty ? "mov" : ext) }
        if FileManager.default.fileExists(atPath: path) && !force {
            throw Nu11Error(.alreadyExists, "\(output) was written, but not the Live Photo's motion: \(path) already exists",
                            remedy: .frontEnd("export \(video.id.hex) -o ANOTHER_FILE, or export both into a folder: export \(item.id.hex) -o DIR"),
                            item: path)
        }
        _ = try vault.items.export(ItemRef(motionID), toFile: path, overwrite: force, stripLocation: strip) { _, _ in }
        if !json.json { Output.note("nu11vlt: the Live Photo's motion went beside it: \(Output.escaped(path))") }
        return path
    }

    private var selection: ExportSelection {
        if let album { return .album(album) }
        if all { return .all }
        if let range = taken.range { return .taken(from: range.from, to: range.to) }
        return .items(ids)
    }

    private func exportIntoFolder(_ vault: Vault, strip: Bool) throws {
        let items = try vault.items.select(selection)
        guard !items.isEmpty else {
            if let album {
                throw Nu11Error(.notFound, "the album \(album) holds no items; nothing was written",
                                remedy: .frontEnd("move items into it with `nu11vlt album move --to \(album) ID…`"))
            }
            if all { throw Nu11Error(.notFound, "the vault holds no items; nothing was written", remedy: .frontEnd("import files with `nu11vlt import`")) }
            throw Nu11Error(.notFound, "no item was taken in that range; nothing was written",
                            remedy: .frontEnd("see the capture dates with `nu11vlt list --sort taken`"))
        }
        if !FileManager.default.fileExists(atPath: output) { try ProtectedFiles.makeDirectory(output) }
        let plan = try ExportPlan(items: items, folder: output)
        let line = ProgressLine("exporting", items: plan.entries.count, bytes: plan.totalBytes, quiet: quiet.quiet || json.json)
        let report = try vault.items.export(plan, stripLocation: strip) { done, bytes in
            line.update(items: done, bytes: bytes)
            try AgentInterruption.check()
        }
        line.finish()
        for (entry, error) in report.failed {
            Output.note("nu11vlt: warning: not exported: \(Output.escaped(entry.item.name)) (\(entry.item.id)): \(Output.escaped(Remedies.line(error)))")
        }
        if json.json {
            try Output.json(Results.ExportedFolder(report: report, folder: output, strippedLocation: strip))
        } else if !quiet.quiet && report.failed.isEmpty {  // with failures, the error line below says the counts
            let renamed = report.written.filter(\.renamed)
            var text = "exported \(report.written.count) of \(plan.entries.count) item(s), \(Output.size(report.bytes)), to \(Output.escaped(output))"
            if let first = renamed.first {
                text += "; \(renamed.count) under another name, as a name was taken or unsafe (e.g. \(Output.escaped(first.item.name)) → \(Output.escaped(first.fileName)))"
            }
            Output.note(text)
        }
        if !report.failed.isEmpty {
            throw Nu11Error(.corrupted, "\(report.failed.count) of \(plan.entries.count) item(s) could not be read; the other \(report.written.count) were exported",
                            remedy: .check(reason: nil))
        }
    }
}
