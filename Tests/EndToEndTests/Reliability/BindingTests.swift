// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// What binds a sealed value to its place, checked by moving it as someone who can edit the
/// files would: a key record's nonce is fresh at every re-wrap, and an album's sealed name
/// opens only for its own album.
@Suite("sealed values stay bound to their place")
struct BindingTests {
    /// The nonce of each item key record (bytes 24..<36: after the clear fields, ItemKeyRecord).
    static func recordNonces(_ cli: CLI) throws -> [String: [UInt8]] {
        try cli.allKeyRecords().mapValues { Array($0[24..<36]) }
    }

    @Test("rekey re-wraps every item key record with a nonce of its own, none repeated, none kept from before")
    func rekeyNonces() throws {
        let cli = try CLI()
        try cli.initVault()
        let ids = try cli.importIDs((0..<12).map { cli.file("f\($0).txt", [UInt8($0)]) })
        let before = try Self.recordNonces(cli)
        #expect(before.count == 12)
        for _ in 0..<2 { #expect(try cli.run(["rekey"], pinStdin: true).code == 0) }
        let after = try Self.recordNonces(cli)
        #expect(Set(after.keys) == Set(before.keys))
        #expect(Set(after.values).count == after.count, "two re-wrapped records share a nonce")
        #expect(Set(after.values).isDisjoint(with: Set(before.values)), "a re-wrapped record kept its old nonce")
        for (i, id) in ids.enumerated() { #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data([UInt8(i)])) }
    }

    @Test("two albums' sealed names swapped in the index: reported as damage, never shown swapped")
    func swappedAlbumNames() throws {
        let cli = try CLI()
        try cli.initVault()
        for album in ["Holidays", "Taxes"] { #expect(try cli.run(["album", "create", album], pinStdin: true).code == 0) }
        let index = cli.vault + "/index.sqlite"
        let rows = try cli.spawn("/usr/bin/sqlite3", [index, "SELECT id || ' ' || hex(name) FROM album ORDER BY id"]).out
            .split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        try #require(rows.count == 2 && rows.allSatisfy { $0.count == 2 }, "albums: \(rows)")
        let swap = "UPDATE album SET name = X'\(rows[1][1])' WHERE id = '\(rows[0][0])'; UPDATE album SET name = X'\(rows[0][1])' WHERE id = '\(rows[1][0])';"
        #expect(try cli.spawn("/usr/bin/sqlite3", [index, swap]).code == 0)
        let listed = try cli.run(["album", "list"], pinStdin: true)
        expectCleanError(listed, code: 5, mentions: "authentication")
        #expect(!listed.out.contains("Holidays") && !listed.out.contains("Taxes"), "names shown: \(listed.out)")
    }
}
