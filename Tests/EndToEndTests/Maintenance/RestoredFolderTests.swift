// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 55: the owner restoring the vault folder from a backup is an ordinary act. A folder
/// copied before a `rekey` and put back whole (index, sidecars, album names, recovery data)
/// is re-adopted under the current keys with the current credentials: every command names the
/// repair, `check --repair` brings back every item the copy holds and says what is gone, the
/// recovery data is made again under the current keys (the copy's, from before the rotation,
/// would leave new items uncovered), and the phrase goes on recovering everything.
@Suite("a vault folder restored from before a rotation")
struct RestoredFolderTests {
    @Test("restored from before a rekey: named repair, every item of the copy back, the item added since reported gone, recovery covers new items again")
    func restoredBeforeRekey() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let created = try cli.run(["album", "create", "Trip"], pinStdin: true)
        #expect(created.code == 0)
        let albumID = String(created.out.prefix(32))
        let ids = try cli.importIDs([cli.file("a.txt", Array("alpha".utf8))]) +
            (try cli.importIDs([cli.file("b.txt", Array("bravo".utf8))], extra: ["--album", "Trip"]))
        let copy = cli.root + "/backup-of-vault"
        #expect(Program.run("/bin/cp", ["-a", cli.vault, copy]) == 0)
        #expect(try cli.run(["rekey"], pinStdin: true).code == 0)
        let lost = try cli.importIDs([cli.file("c.txt", Array("charlie".utf8))])[0]
        // The owner restores the folder from the backup.
        try FileManager.default.removeItem(atPath: cli.vault)
        #expect(Program.run("/bin/cp", ["-a", copy, cli.vault]) == 0)

        // Every command names the repair in its one line.
        // The first command re-adopts the recovery data (its public key is the one the key
        // store commits to) and says so; the entries sealed before the rotation need the repair.
        let listed = try cli.run(["list"], pinStdin: true)
        #expect(listed.code != 0 && listed.stderr.contains("check --repair"), "list: \(listed.stderr)")
        #expect(listed.stderr.contains("recovery.n11r") && listed.stderr.contains("made again under the current keys"),
                "the renewed recovery data is not reported: \(listed.stderr)")
        let albums = try cli.run(["album", "list"], pinStdin: true)
        #expect(albums.code != 0 && albums.stderr.contains("check --repair"), "album list: \(albums.stderr)")
        let repaired = try cli.run(["check", "--repair"], pinStdin: true)
        #expect(repaired.code == 0, "check --repair: \(repaired.out) \(repaired.stderr)")
        #expect(repaired.out.contains(lost) && repaired.out.contains("key record without an item"), "the item added since the copy is not reported gone: \(repaired.out)")
        #expect(repaired.out.contains("rebuilt from its sidecar"), "\(repaired.out)")
        // The album's name was sealed under the retired keys: the album keeps its item under a
        // made-up name, and the report says so.
        let albumName = "Album " + String(albumID.prefix(8))
        #expect(repaired.out.contains("named \(albumName)"), "the album's lost name is not reported: \(repaired.out)")
        let again = try cli.run(["check"], pinStdin: true)
        #expect(again.code == 0 && !again.stderr.contains("warning"), "check after the repair: \(again.out) \(again.stderr)")
        for (id, text) in zip(ids, ["alpha", "bravo"]) {
            #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data(text.utf8), "\(text) does not export")
        }
        let inAlbum = try cli.listJSON(["--album", "Album " + String(albumID.prefix(8))]).compactMap { $0["id"] as? String }
        #expect(inAlbum == [ids[1]], "the album lost its item: \(inAlbum)")

        // An item added now is sealed to the phrase: it recovers with every other one.
        let later = try cli.importIDs([cli.file("d.txt", Array("delta".utf8))])[0]
        try FileManager.default.removeItem(atPath: cli.keystore)
        let recovered = try cli.recover(phrase: phrase, newPIN: "rebuilt pin 9")
        #expect(recovered.code == 0, "recover: \(recovered.out) \(recovered.stderr)")
        for (id, text) in zip(ids + [later], ["alpha", "bravo", "delta"]) {
            let r = try cli.spawn(CLI.binary, ["export", id, "-o", "-", "--pin-stdin"], input: Data("rebuilt pin 9\n".utf8))
            #expect(r.stdout == Data(text.utf8), "\(text) is not recovered by the phrase: \(r.stderr)")
        }
    }

    @Test("restored from before a recovery setup: the old recovery data is refused, never renewed, and new items are not sealed to the old phrase")
    func restoredBeforeRecoverySetup() throws {
        let cli = try CLI()
        let oldPhrase = try cli.initWithPhrase()
        _ = try cli.importIDs([cli.file("a.txt", Array("alpha".utf8))])
        let oldRecovery = try Data(contentsOf: URL(fileURLWithPath: cli.vault + "/recovery.n11r"))
        #expect(try cli.run(["recovery", "setup"], pinStdin: true).code == 0)
        try oldRecovery.write(to: URL(fileURLWithPath: cli.vault + "/recovery.n11r"))
        let r = try cli.run(["import", cli.file("b.txt", Array("bravo".utf8))], pinStdin: true)
        #expect(r.code == 0 && r.stderr.contains("recovery.n11r") && !r.stderr.contains("made again"), "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.vault + "/recovery.n11r")) == oldRecovery, "the old phrase's recovery data was rewritten")
        let later = String(r.out.prefix(32))
        try FileManager.default.removeItem(atPath: cli.keystore)
        let recovered = try cli.recover(phrase: oldPhrase, newPIN: "rebuilt pin 9")
        let opened = recovered.code == 0 ? try cli.spawn(CLI.binary, ["export", later, "-o", "-", "--pin-stdin"], input: Data("rebuilt pin 9\n".utf8)) : nil
        #expect(opened?.stdout != Data("bravo".utf8), "the old phrase recovered an item added after the recovery setup")
    }

    /// The adversary review: a Fade row counts as this PIN's only when its metadata opens, so a
    /// Fade item of an index put back from before a `pin change` vanished from every listing,
    /// unreported, and the repair skipped it.
    @Test("an index from before a pin change put back: the repair brings the Fade item back with its deadline, and check names it")
    func fadeItemOfOldIndex() throws {
        let cli = try CLI()
        try cli.initVault()
        let plain = try cli.importIDs([cli.file("a.txt", Array("alpha".utf8))])[0]
        let fading = try cli.importIDs([cli.file("doc.txt", Array("fades".utf8))], extra: ["--fade", "7d"])[0]
        let oldIndex = try Data(contentsOf: URL(fileURLWithPath: cli.vault + "/index.sqlite"))
        let changed = try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(cli.pin)\nnew pin 4242\n".utf8))
        #expect(changed.code == 0, "\(changed.stderr)")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cli.vault + "/index.sqlite" + suffix) }
        try oldIndex.write(to: URL(fileURLWithPath: cli.vault + "/index.sqlite"))
        let pin = Data("new pin 4242\n".utf8)
        let checked = try cli.spawn(CLI.binary, ["check", "--pin-stdin"], input: pin)
        #expect(checked.code != 0 && checked.out.contains(fading), "check does not name the Fade item: \(checked.out)")
        let repaired = try cli.spawn(CLI.binary, ["check", "--repair", "--pin-stdin"], input: pin)
        #expect(repaired.code == 0 && repaired.out.contains(fading), "\(repaired.out) \(repaired.stderr)")
        let listed = try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: pin)
        #expect(listed.out.contains(plain) && listed.out.contains(fading), "after the repair: \(listed.out) \(listed.stderr)")
        let exported = try cli.spawn(CLI.binary, ["export", fading, "-o", "-", "--pin-stdin"], input: pin)
        #expect(exported.stdout == Data("fades".utf8), "the Fade item does not export: \(exported.stderr)")
        let status = try cli.spawn(CLI.binary, ["status", "--pin-stdin"], input: pin)
        #expect(status.out.range(of: "fading +1", options: .regularExpression) != nil, "status: \(status.out)")
    }
}
