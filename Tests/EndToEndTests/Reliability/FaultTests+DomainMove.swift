// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// `fade set` and `fade set off` keep the item's ID (issue 58): the new copy is made beside the
/// old one and swapped at one commit point (FORMAT.md §4.6, `moving`). Killed (SIGKILL, the
/// fault shim's kill mode) at the steps that matter — the marker, the deadline, the new key
/// record, each sync, each rename, the index commit, and each step of the shredding after it —
/// the next command leaves exactly one readable item with that ID: the old copy before the
/// commit point, the new one after; `check` passes; and the README's next `fade set ID 7d` works.
@Suite("fault injection: fade set keeps the ID through a kill at each step")
struct DomainMoveFaultTests {
    /// The calls of a `fade set` run worth a kill: every rename, sync, unlink and key-pack
    /// write, and the index's WAL writes and syncs (the commit point). Dozens, not the hundreds
    /// of every call.
    static func steps(_ log: FaultLog) -> [Int] {
        // From the move's marker to its removal (before it: the unlock, which the move does not touch).
        let marker = log.calls.filter { $0.path.hasPrefix("keystore/pending/") }
        guard let first = marker.first(where: { $0.op.hasPrefix("rename") })?.n,
              let last = marker.last(where: { $0.op.hasPrefix("unlink") })?.n else { return [] }
        return log.calls.filter { call in
            guard call.n >= first && call.n <= last else { return false }
            return ["rename", "syncfs", "unlink", "fdatasync"].contains(call.op)
                || (call.op.hasPrefix("pwrite") && call.path.hasPrefix("keystore/keys/"))
                || (call.path.hasSuffix("index.sqlite-wal") && (call.op == "fsync" || call.op.hasPrefix("write") || call.op.hasPrefix("pwrite")))
        }.map(\.n)
    }

    /// `rollBack`: after the kill, the index from before the move is put back (a sync peer or a
    /// backup restoring an older `index.sqlite`, or one lost and rebuilt) before the next command,
    /// then `check --repair` runs: a committed move must not be undone by it (a Fade item kept
    /// past its deadline and sealed to the phrase again), nor leave no copy.
    func trial(into fade: Bool, rollBack: Bool = false) throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let template = try CLI()
        try template.initVault()
        #expect(try template.run(["album", "create", "Trip"], pinStdin: true).code == 0)
        let id = try template.importIDs([template.file("p.jpg", Array(FaultTests.payload))],
                                        extra: fade ? ["--album", "Trip"] : ["--fade", "2h"])[0]
        let prepared = template.root + "/prepared"
        try FileManager.default.createDirectory(atPath: prepared, withIntermediateDirectories: true)
        for part in ["vault", "keystore"] { try FileManager.default.copyItem(atPath: template.root + "/" + part, toPath: prepared + "/" + part) }
        let args = [CLI.binary, "fade", "set", "--pin-stdin", id, fade ? "1h" : "off"]
        let input = Data((template.pin + "\n").utf8)
        let log = template.root + "/.log"
        let dry = try FaultShim.run(template, args, input: input, at: 0, log: log)
        #expect(dry.code == 0, "without faults: \(dry.stderr)")
        let picked = Self.steps(FaultLog(text: (try? String(contentsOfFile: log, encoding: .utf8)) ?? "", root: template.root))
        #expect(picked.count >= 10, "only \(picked.count) steps picked")
        var outcomes: Set<Bool> = []
        for at in picked {
            let cli = try CLI()
            for part in ["vault", "keystore"] { try FileManager.default.copyItem(atPath: prepared + "/" + part, toPath: cli.root + "/" + part) }
            let place = "fade set \(fade ? "1h" : "off"), killed at call \(at)\(rollBack ? ", the older index put back" : "")"
            let r = try FaultShim.run(cli, args, input: input, at: at, kill: true)
            #expect(r.code != 0, "\(place): the kill did not happen")
            if rollBack {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cli.root + "/vault/index.sqlite" + suffix) }
                try FileManager.default.copyItem(atPath: prepared + "/vault/index.sqlite", toPath: cli.root + "/vault/index.sqlite")
                _ = try cli.run(["list"], pinStdin: true)  // settles the move
                let repair = try cli.run(["check", "--repair"], pinStdin: true)
                #expect(!repair.out.contains("sealed afresh to the current recovery phrase") || !fade, "\(place): \(repair.out)")
            }
            let items = try cli.listJSON()
            #expect(items.compactMap { $0["id"] as? String } == [id], "\(place): \(items)")
            let fading = items.first?["fadesAt"] is String
            outcomes.insert(fading)
            #expect(try IDStabilityTests.recordDomains(cli, id) == [fading ? 2 : 1], "\(place): key records")
            let content = fading ? "Fade/\(id).n11" : (fade ? "Vault/Albums/" : "Vault/Photos/")
            let files = IDStabilityTests.files(cli, naming: id)
            #expect(files.count == 3 && files.contains { $0.hasPrefix(content) } && files.contains("Meta/\(id).n11m")
                    && files.contains("Thumbnails/\(id).n11thumb"), "\(place): \(files)")
            #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == FaultTests.payload, "\(place): export")
            let tile = try cli.run(["thumbnail", id, "-o", cli.root + "/tile.jpg"], pinStdin: true)
            #expect(tile.code == 0, "\(place): thumbnail: \(tile.stderr)")
            let check = try cli.run(["check"], pinStdin: true)
            #expect(check.code == 0, "\(place): check: \(check.out) \(check.stderr)")
            let next = try cli.run(["fade", "set", id, "7d"], pinStdin: true)
            #expect(next.code == 0, "\(place): the next fade set by the same ID: \(next.stderr)")
        }
        // The kills fell both before and after the commit point.
        #expect(outcomes == [false, true], "outcomes: \(outcomes)")
    }

    @Test("a move whose marker was lost (an older program discards it) after its commit point: check names the copy left in the other domain; --repair sets it aside, never destroys it")
    func lostMarker() throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("p.jpg", Array(FaultTests.payload))])[0]
        let args = [CLI.binary, "fade", "set", "--pin-stdin", id, "1h"]
        let input = Data((cli.pin + "\n").utf8)
        let prepared = cli.root + "/prepared"
        try FileManager.default.createDirectory(atPath: prepared, withIntermediateDirectories: true)
        for part in ["vault", "keystore"] { try FileManager.default.copyItem(atPath: cli.root + "/" + part, toPath: prepared + "/" + part) }
        let log = cli.root + "/.log"
        #expect(try FaultShim.run(cli, args, input: input, at: 0, log: log).code == 0)
        // Killed after the commit point and the sidecar's rename, before the old key record goes.
        let calls = FaultLog(text: (try? String(contentsOfFile: log, encoding: .utf8)) ?? "", root: cli.root).calls
        let renamed = try #require(calls.first { $0.op.hasPrefix("rename") && $0.path == "vault/Meta/\(id).n11m" }?.n)
        let shred = try #require(calls.first { $0.n > renamed && $0.op.hasPrefix("pwrite") && $0.path.hasPrefix("keystore/keys/") }?.n)
        for part in ["vault", "keystore"] {
            try FileManager.default.removeItem(atPath: cli.root + "/" + part)
            try FileManager.default.copyItem(atPath: prepared + "/" + part, toPath: cli.root + "/" + part)
        }
        #expect(try FaultShim.run(cli, args, input: input, at: shred, kill: true).code != 0)
        let pending = cli.keystore + "/pending"
        let markers = try FileManager.default.contentsOfDirectory(atPath: pending)
        #expect(markers.count == 1, "\(markers)")
        for marker in markers { try FileManager.default.removeItem(atPath: pending + "/" + marker) }
        #expect(try IDStabilityTests.recordDomains(cli, id).sorted() == [1, 2], "both copies' key records")
        #expect(cli.exists(cli.vault + "/Vault/Photos/\(id).n11") && cli.exists(cli.vault + "/Fade/\(id).n11"))
        let check = try cli.run(["check"], pinStdin: true)
        #expect(check.out.contains("a key record of its copy in another domain") && check.out.contains("a copy in another domain"),
                "\(check.out) \(check.stderr)")
        let repair = try cli.run(["check", "--repair"], pinStdin: true)
        #expect(repair.code == 0, "\(repair.out) \(repair.stderr)")
        #expect(try IDStabilityTests.recordDomains(cli, id) == [2], "the Fade copy's record alone stays in the packs")
        #expect(cli.exists(cli.keystore + "/quarantine/\(id).key") && cli.exists(cli.vault + "/Quarantine/\(id).n11"), "set aside, not destroyed")
        let again = try cli.run(["check"], pinStdin: true)
        #expect(again.code == 0 && !again.out.contains("another domain"), "\(again.out) \(again.stderr)")
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == FaultTests.payload)
        #expect(try cli.listJSON().first?["fadesAt"] is String)
    }

    @Test("fade set 1h (an album's photo into Fade)") func intoFade() throws { try trial(into: true) }
    @Test("fade set off (a fade photo back to Photos)") func outOfFade() throws { try trial(into: false) }
    @Test("fade set 1h killed at each step, then the index from before it put back: one copy, never undone after its commit point")
    func intoFadeIndexRolledBack() throws { try trial(into: true, rollBack: true) }
}
