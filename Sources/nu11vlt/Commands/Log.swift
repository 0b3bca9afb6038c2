// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Nu11Format
import Nu11Vault

struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show the vault's audit log of security events (never names or content).",
        discussion: """
            Every unlock, wrong PIN, PIN change, rekey, import, export, delete, archive export \
            and import, fade change and expiry, Skeleton arm and check-in, settings change and \
            check is recorded with its time, counts and item IDs. Entries are sealed and hash-\
            chained under the vault's keys; --verify authenticates every entry and names the \
            first one that was edited, removed, reordered or cut off (exit 5). What happened \
            before a PIN was typed (wrong PINs, fade expiries, warnings) is folded into the \
            primary vault's log at its next unlock. The backup PIN sees only its own vault's log. \
            The log proves nothing against someone who holds the keys: they can write a new, \
            consistent one (docs/THREAT-MODEL.md).
            """)
    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions
    @Option(name: .long, help: ArgumentHelp("Only entries newer than this (e.g. 24h, 7d).", valueName: "duration"))
    var since: String?
    @Flag(name: .long, help: "Authenticate every entry and the chain; exit 5 naming the first bad entry.") var verify = false
    @OptionGroup var output: JSONOption

    struct Listing: Encodable {
        var verified: Bool
        var compacted: AuditCheckpoint
        var entries: [Entry]
    }

    struct Entry: Encodable {
        var seq: UInt64
        var time: Date
        var event: String
        var count: Int?
        var items: [String]?
        var detail: String?
    }

    func validate() throws {
        if let since, (try? DurationText.parse(since)) == nil {
            throw ValidationError("--since takes a duration such as 30m, 24h or 7d, not '\(since)'")
        }
    }

    func run() throws {
        try Failure.run {
            let vault = try openVault(location, pin)
            let (log, setAside) = try vault.auditLog()
            if verify, let rollback = vault.logRollback {
                throw Nu11Error(.corrupted, "audit log: " + rollback,
                                remedy: .frontEnd("compare it with your own copies; the log now says so in an entry of its own"))
            }
            let cutoff = try since.map { vault.now - (try DurationText.parse($0)) } ?? -Double.infinity
            let entries = log.entries.filter { $0.time >= cutoff }.map {
                Entry(seq: $0.seq, time: Date(timeIntervalSince1970: $0.time), event: $0.event, count: $0.count, items: $0.items, detail: $0.detail)
            }
            if verify, let first = setAside.first {
                throw Nu11Error(.corrupted, "audit log: the log was restarted; the earlier one \(first.problem.hasPrefix("audit log: ") ? String(first.problem.dropFirst(11)) : first.problem)",
                                remedy: .frontEnd("keep \(first.name) as evidence; once reviewed, remove it from the key store's log/ folder"))
            }
            for (name, problem) in setAside {
                Output.note("an earlier log of this vault was set aside as damaged (\(problem)); it is kept as \(name) in the key store's log/ folder")
            }
            if output.json {
                try Output.json(Listing(verified: true, compacted: log.checkpoint, entries: entries))
                return
            }
            if log.checkpoint.through > 0 && since == nil {
                let summary = log.checkpoint.events.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
                print("#1–\(log.checkpoint.through)  compacted: \(summary)")
            }
            for e in entries {
                var line = "#\(e.seq)  \(Output.localTime.string(from: e.time))  \(e.event)"
                if let count = e.count { line += "  \(count) item(s)" }
                if let items = e.items, !items.isEmpty {
                    line += "  " + items.prefix(3).joined(separator: " ") + (items.count > 3 ? " …" : "")
                }
                if let detail = e.detail { line += "  (\(Output.escaped(detail)))" }
                print(line)
            }
            if verify {
                print("log verified: \(log.entries.count) entr\(log.entries.count == 1 ? "y" : "ies") after the checkpoint (#\(log.checkpoint.through)), chain and head intact")
            }
        }
    }
}
