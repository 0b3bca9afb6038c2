// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

/// `nu11vlt import FILE.age`: a share sent to this vault (or a file made with `age -p`),
/// opened with the vault's age identities (or its passphrase, asked like the PIN) and
/// imported all or nothing.
extension Import {
    func importAge(_ path: String, album: String?) throws {
        if fade != nil { throw Nu11Error(.invalidArgument, "the items of an age file cannot fade on import", remedy: .frontEnd("import it without --fade, then use `nu11vlt fade`")) }
        if albumsFromFolders { throw Nu11Error(.invalidArgument, "--albums-from-folders does not apply to an age file", remedy: .frontEnd("leave out --albums-from-folders")) }
        let vault = try openVault(location, pin)
        DecoderSandbox.warnIfWeaker()
        let source: PINReader.Source = passphraseFD.map { .fd($0) } ?? .terminal
        let ask = !skipDuplicates && isatty(0) == 1 && PINReader.hasTerminal
        var answerAll: Bool?
        let decide: ((String, DuplicateFinder.Match) -> Bool)? = skipDuplicates || ask ? { name, match in
            let what = "\(Output.escaped(name)) is already in the vault as \(match.id) (\(Output.escaped(match.name)))"
            if skipDuplicates || answerAll == false { return false }
            if answerAll == true { return true }
            Output.stderr("\(what). Import it again? [y]es, [n]o, [a]ll, [s]kip all: ")
            switch readLine()?.trimmingCharacters(in: .whitespaces).lowercased().first {
            case "y": return true
            case "a":
                answerAll = true
                return true
            case "s":
                answerAll = false
                return false
            default: return false
            }
        } : nil
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0
        let line = ProgressLine("importing", items: 1, bytes: size, quiet: quiet.quiet || output.json)
        let report = try vault.sharing.importShare(from: path, album: album,
                                                   passphrase: { try PINReader.read(prompt: "Passphrase of \(Output.escaped(path)): ", from: source) },
                                                   keepDuplicate: decide) { _, bytes in
            line.update(bytes: bytes)
            try AgentInterruption.check()
        }
        line.finish()
        for (name, match) in report.duplicates {
            Output.note("nu11vlt: skipped \(Output.escaped(name)), already in the vault as \(match.id) (\(Output.escaped(match.name)))")
        }
        if report.skipped > 0 {
            Output.note("nu11vlt: skipped \(report.skipped) entr(ies) of the age file that are not regular files (links, devices)")
        }
        if output.json {
            try Output.json(ItemJSON.all(report.imported))
        } else {
            for item in report.imported { print("\(item.id)  \(Output.escaped(item.name))") }
        }
    }
}
