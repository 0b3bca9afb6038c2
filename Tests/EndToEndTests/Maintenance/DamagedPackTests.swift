// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// The adversary review of issue 56: a key pack whose header is damaged made `check` stop at
/// once with "run `nu11vlt check`" — a loop, and no item was checked. Now the pack is named, the
/// items whose keys it held are each reported, every other item is checked, and the phrase
/// still brings the lost keys back.
@Suite("a damaged key pack")
struct DamagedPackTests {
    @Test("a key pack with its header destroyed: check names it and its items, checks the rest, and recover with the phrase brings them back")
    func damagedPackHeader() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let first = try cli.importIDs([cli.file("a.txt", Array("alpha".utf8))])[0]
        let second = try cli.importIDs([cli.file("b.txt", Array("bravo".utf8))])[0]
        // One item's pack (its ID's first byte), unless both share it.
        let pack = cli.keystore + "/keys/\(first.prefix(2)).n11p"
        try #require(first.prefix(2) != second.prefix(2), "both items share a pack; run again")
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: pack))
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: Data([0xFF, 0xFF, 0xFF, 0xFF]))
        try handle.close()
        let checked = try cli.run(["check"], pinStdin: true)
        #expect(checked.code == 5, "check: exit \(checked.code) \(checked.stderr)")
        #expect(checked.out.contains("\(first.prefix(2)).n11p") && checked.out.contains(first), "the pack and its item are not named: \(checked.out)")
        #expect(checked.out.contains("checked 2 item(s): 1 sound"), "the other item was not checked: \(checked.out)")
        #expect(!checked.stderr.contains("hint: a key pack was altered; run `nu11vlt check`"), "check sends to itself: \(checked.stderr)")
        #expect(try cli.run(["export", second, "-o", "-"], pinStdin: true).stdout == Data("bravo".utf8))
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/damaged-keystore")
        let recovered = try cli.recover(phrase: phrase, newPIN: "rebuilt pin 9")
        #expect(recovered.code == 0, "recover: \(recovered.stderr)")
        let r = try cli.spawn(CLI.binary, ["export", first, "-o", "-", "--pin-stdin"], input: Data("rebuilt pin 9\n".utf8))
        #expect(r.stdout == Data("alpha".utf8), "the phrase does not bring the lost key back: \(r.stderr)")
    }
}
