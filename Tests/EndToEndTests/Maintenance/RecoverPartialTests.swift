// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 55: `recover` brings back every item whose recovery seal opens with the phrase; one
/// stale or damaged seal no longer costs the others.
@Suite("recover, item by item")
struct RecoverPartialTests {
    /// Each item's seal is in two places (the index's `recovery` row and its sidecar, FORMAT.md
    /// §2.2): this overwrites the sidecar's copy with random bytes.
    static func alterSidecarSeal(_ cli: CLI, _ id: String) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: cli.vault + "/Meta/\(id).n11m"))
        try handle.seek(toOffset: 24)
        try handle.write(contentsOf: Data((0..<92).map { _ in UInt8.random(in: 0...255) }))
        try handle.close()
    }

    @Test("one item's seals altered (index row and sidecar): the others come back byte-identical — one whose index seal alone was altered from its sidecar — the bad one is named with its reason, exit 0")
    func oneSealAltered() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let contents: [[UInt8]] = [Array("first".utf8), (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }, Array("third".utf8)]
        let ids = try cli.importIDs(contents.enumerated().map { cli.file("f\($0.offset).bin", $0.element) })
        let bad = ids[1]
        let index = cli.vault + "/index.sqlite"
        _ = try cli.sqlite(index, "UPDATE recovery SET seal = randomblob(92) WHERE lower(id) = '\(bad)' OR lower(id) = '\(ids[2])'")
        try Self.alterSidecarSeal(cli, bad)
        #expect(try cli.sqlite(index, "SELECT count(*) FROM recovery WHERE lower(id) = '\(bad)' AND length(seal) = 92") == "1",
                "the row was not altered: the test proves nothing")
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost-keystore")

        let r = try cli.recover(phrase: phrase, newPIN: "new passphrase 1", extra: ["--json"])
        #expect(r.code == 0, "\(r.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any], "\(r.out)")
        #expect(report["recovered"] as? Int == 2, "\(r.out)")
        let unrecovered = try #require(report["unrecovered"] as? [[String: String]], "\(r.out)")
        #expect(unrecovered.count == 1 && unrecovered.first?["id"] == bad, "\(r.out)")
        #expect(unrecovered.first?["reason"]?.contains("does not open with this phrase") == true, "\(r.out)")
        for (id, bytes) in zip(ids, contents) where id != bad {
            #expect(try cli.with("new passphrase 1", ["export", id, "-o", "-"]).stdout == Data(bytes), "item \(id) differs after recovery")
        }
        #expect(try cli.with("new passphrase 1", ["export", bad, "-o", "-"]).code != 0)
        let log = try cli.with("new passphrase 1", ["log"]).out
        #expect(log.contains("whose seal did not open"), "\(log)")
    }

    @Test("every seal altered (index and sidecars): recover fails, names the reason, and writes no key store")
    func everySealAltered() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        _ = try cli.importIDs([cli.file("a.bin", [1]), cli.file("b.bin", [2])])
        let ids = try cli.listJSON().compactMap { $0["id"] as? String }
        _ = try cli.sqlite(cli.vault + "/index.sqlite", "UPDATE recovery SET seal = randomblob(92)")
        for id in ids { try Self.alterSidecarSeal(cli, id) }
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost-keystore")
        let r = try cli.recover(phrase: phrase, newPIN: "new passphrase 1")
        #expect(r.code != 0, "\(r.out)")
        #expect(r.stderr.contains("nothing was written") && r.stderr.contains("does not open with this phrase"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.keystore), "a failed recovery left a key store")
        #expect(!FileManager.default.fileExists(atPath: cli.keystore + ".recovering"))
    }
}
