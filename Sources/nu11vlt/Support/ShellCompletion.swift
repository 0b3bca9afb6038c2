// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Vault

/// Tab completion at the `nu11vlt>` prompt: the command (and subcommand) names, item and note
/// IDs (from the unlocked vault's index), and paths (with `~` for the home folder).
enum ShellCompletion {
    /// The commands one types, without the hidden ones.
    static var commands: [String] {
        Nu11vlt.configuration.subcommands.filter { $0.configuration.shouldDisplay }.map { $0._commandName }
    }

    /// What may replace the last word of `line` (whole words; the editor inserts their common prefix).
    static func candidates(_ line: String) -> [String] {
        let cut = line.lastIndex(of: " ").map { line.index(after: $0) } ?? line.startIndex
        let typing = String(line[cut...])
        let before = line[..<cut].split(separator: " ").map(String.init).filter { $0 != "nu11vlt" }
        if before.isEmpty { return (commands + ["exit", "help"]).filter { $0.hasPrefix(typing) }.sorted() }
        if before.count == 1, let parent = Nu11vlt.configuration.subcommands.first(where: { $0._commandName == before[0] }),
           !parent.configuration.subcommands.isEmpty {
            let subs = parent.configuration.subcommands.filter { $0.configuration.shouldDisplay }.map { $0._commandName }
            return subs.filter { $0.hasPrefix(typing) }.sorted()
        }
        var out: [String] = []
        if !typing.isEmpty, typing.allSatisfy(\.isHexDigit) { out += ids().filter { $0.hasPrefix(typing.lowercased()) } }
        if typing.isEmpty || typing.contains("/") || typing.hasPrefix("~") || typing.hasPrefix(".") || out.isEmpty {
            out += paths(typing)
        }
        return out
    }

    /// The visible items' and notes' IDs.
    static func ids() -> [String] {
        guard let vault = ShellSession.vault else { return [] }
        let items = (try? vault.exclusive { try vault.items.list(limit: Int.max) })?.items.map { $0.id.hex } ?? []
        let notes = (try? vault.exclusive { try vault.notes.list() })?.map { $0.id.hex } ?? []
        return (items + notes).sorted()
    }

    /// Files and folders that complete `typing` (a folder gets a trailing /); `~` stays as typed.
    static func paths(_ typing: String) -> [String] {
        let expanded = ShellWords.expandTilde(typing)
        let slash = expanded.lastIndex(of: "/")
        let dir = slash.map { String(expanded[...$0]) } ?? ""
        let stem = slash.map { String(expanded[expanded.index(after: $0)...]) } ?? expanded
        let shownDir = typing.lastIndex(of: "/").map { String(typing[...$0]) } ?? ""
        let listed = (try? FileManager.default.contentsOfDirectory(atPath: dir.isEmpty ? "." : dir)) ?? []
        return listed.filter { $0.hasPrefix(stem) && (stem.hasPrefix(".") || !$0.hasPrefix(".")) }.sorted().map { name in
            var isDir: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: (dir.isEmpty ? "" : dir) + name, isDirectory: &isDir)
            return shownDir + name + (isDir.boolValue ? "/" : "")
        }
    }

    /// The longest start all `words` share.
    static func commonPrefix(_ words: [String]) -> String {
        guard var prefix = words.first else { return "" }
        for word in words.dropFirst() {
            while !word.hasPrefix(prefix) { prefix.removeLast() }
        }
        return prefix
    }
}
