// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// The leftover sweep at the start of every command (FORMAT.md § 4.6a `swept`): a folder whose
/// time is the one recorded after its last clean sweep is not listed again. The folders every
/// command changes (the vault's own, with the index's -wal and -shm; the audit log's; the key
/// store's) are listed every time and never recorded: recorded, their times never matched, and
/// the stamp was written again (an atomic write, two fsyncs) at both gates of every command.
/// Opening the index writes nothing either (FORMAT.md § 5.1).
@Suite("the leftover sweep's stamp")
struct SweepStampTests {
    @Test("a command on an unchanged vault writes neither the stamp nor the index; a temp file left in any swept folder (the vault's, the log's, the key store's, an item folder) is gone after the next command")
    func stampStaysPut() throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let cli = try CLI()
        try cli.initVault()
        _ = try cli.importIDs([cli.file("a.bin", [1, 2, 3])])
        for _ in 0..<2 { #expect(try cli.run(["list"], pinStdin: true).code == 0) }
        let log = cli.root + "/.log"
        let r = try FaultShim.run(cli, [CLI.binary, "list", "--pin-stdin"], input: Data((cli.pin + "\n").utf8), at: 0, log: log)
        #expect(r.code == 0, "\(r.stderr)")
        let calls = FaultLog(text: (try? String(contentsOfFile: log, encoding: .utf8)) ?? "", root: cli.root).calls
        #expect(calls.count > 10, "only \(calls.count) calls logged")
        let stamp = calls.filter { $0.path == "keystore/swept" }
        #expect(stamp.isEmpty, "list on an unchanged vault wrote the sweep's stamp: \(stamp.map { "\($0.n) \($0.op)" })")
        // Nor does it commit anything to the index (opening it set `auto_vacuum` again, which
        // wrote the header page into the WAL: a commit, fdatasynced, at both gates).
        let commits = calls.filter { ($0.path == "vault/index.sqlite" || $0.path == "vault/index.sqlite-wal") && $0.op != "chmod" && $0.op != "open" && $0.op != "unlink" }
        #expect(commits.isEmpty, "list on an unchanged vault wrote the index: \(commits.map { "\($0.n) \($0.op) \($0.path)" })")
        let temps = [cli.vault, cli.keystore + "/log", cli.keystore, cli.vault + "/Vault/Photos", cli.vault + "/Meta"]
            .map { $0 + "/.n11tmp-00112233445566aa" }
        for temp in temps { FileManager.default.createFile(atPath: temp, contents: Data([7])) }
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        let left = temps.filter { FileManager.default.fileExists(atPath: $0) }
        #expect(left.isEmpty, "temp files the sweep left: \(left)")
    }
}
