// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// `recovery.n11r` (domain keys sealed to the recovery phrase) is a secret file like the key
/// records: every path that removes or replaces it overwrites its blocks before they are
/// unlinked (issue 57). As in ShredderTests, a hard link made beforehand (the witness) keeps
/// the old inode: after the command it must hold other bytes of the same length, not the old
/// record. The paths: the duress PIN (destroys it), `wipe` (destroys it), `rekey` (replaces
/// it twice: old and new keys, then the new keys alone), and a second `recovery setup` (a new
/// phrase replaces it).
@Suite("secure deletion of recovery.n11r: every removal and replacement overwrites")
struct RecoveryShredTests {
    func setUp() throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        _ = try cli.importIDs([cli.file("a.jpg", [4, 4, 4])])
        let setup = try cli.run(["recovery", "setup"], pinStdin: true)
        #expect(setup.code == 0, "recovery setup: \(setup.stderr)")
        try #require(cli.exists(recoveryPath(cli)), "recovery setup wrote no recovery.n11r")
        return cli
    }

    func recoveryPath(_ cli: CLI) -> String { cli.vault + "/recovery.n11r" }

    /// Links recovery.n11r to a witness; returns the witness's path and the old bytes.
    func witness(_ cli: CLI, _ tag: String) throws -> (String, Data) {
        let before = try Data(contentsOf: URL(fileURLWithPath: recoveryPath(cli)))
        let link = cli.root + "/witness-recovery-\(tag)"
        try #require(Foundation.link(recoveryPath(cli), link) == 0)
        return (link, before)
    }

    func expectOverwritten(_ w: (String, Data), _ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let after = try Data(contentsOf: URL(fileURLWithPath: w.0))
        #expect(after.count == w.1.count, "\(what): the old recovery.n11r changed size", sourceLocation: sourceLocation)
        #expect(after != w.1, "\(what): recovery.n11r was unlinked with its old bytes in place (no overwrite)", sourceLocation: sourceLocation)
        // Not merely another valid record: random bytes, no magic left.
        #expect(after.prefix(4) != w.1.prefix(4), "\(what): the old inode still starts like a recovery record", sourceLocation: sourceLocation)
    }

    @Test("the duress PIN destroys recovery.n11r with an overwrite")
    func duress() throws {
        let cli = try setUp()
        try cli.setBackup("backup-pin")
        let set = try cli.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"],
                                input: Data("backup-pin\nduress-pin\n".utf8))
        #expect(set.code == 0, "\(set.stderr)")
        let w = try witness(cli, "duress")
        #expect(try cli.with("duress-pin", ["list"]).code == 0)
        #expect(!cli.exists(recoveryPath(cli)), "the duress PIN left recovery.n11r")
        try expectOverwritten(w, "duress")
    }

    @Test("wipe (without --secure) destroys recovery.n11r with an overwrite")
    func wipe() throws {
        let cli = try setUp()
        let w = try witness(cli, "wipe")
        let r = try cli.run(["wipe", "--yes"])
        #expect(r.code == 0, "\(r.stderr)")
        try expectOverwritten(w, "wipe")
    }

    @Test("rekey replaces recovery.n11r: the replaced record is overwritten, not only unlinked by the rename")
    func rekey() throws {
        let cli = try setUp()
        let w = try witness(cli, "rekey")
        let r = try cli.run(["rekey"], pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(cli.exists(recoveryPath(cli)))
        try expectOverwritten(w, "rekey")
    }

    @Test("a second recovery setup (a new phrase) overwrites the record it replaces")
    func newPhrase() throws {
        let cli = try setUp()
        let w = try witness(cli, "setup")
        let r = try cli.run(["recovery", "setup"], pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(cli.exists(recoveryPath(cli)))
        try expectOverwritten(w, "second recovery setup")
    }
}
