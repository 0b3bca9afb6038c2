// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 57: recovery data attacked with the vault's OWN ID (a file of another vault is caught
/// by its vault ID before any binding is looked at). A vault-folder writer plants a
/// `recovery.n11r` with this vault's ID and (a) its own public key, or (b) the vault's public
/// key with a set of its own keys; or flips one byte of the binding, or cuts the file short.
/// The unlock must never seal anything to the attacker's key, and must make the file again
/// under the vault's own keys (or say it cannot be read): a binding not checked, or checked on
/// a prefix only, fails here.
@Suite("recovery data forged with this vault's own ID")
struct RecoveryBindingTests {
    static let forge = Repo.path("Tests/Fixtures/forge_recovery.py")
    static let binding = (56 + 188)..<(56 + 220)

    func recoveryFile(_ cli: CLI) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: cli.vault + "/recovery.n11r")))
    }

    @Test("this vault's ID with the attacker's public key: refused, said, and no item (old or new) is sealed to the attacker")
    func attackersOwnKey() throws {
        let cli = try CLI()
        _ = try cli.initWithPhrase()
        let old = try cli.importIDs([cli.file("old.bin", [1])])[0]
        let pristine = try recoveryFile(cli)
        let forged = try cli.spawn("/usr/bin/python3", [Self.forge, cli.vault + "/recovery.n11r", "--own-key"])
        try #require(forged.code == 0, "\(forged.stderr)")
        #expect(Array(try recoveryFile(cli)[8..<24]) == Array(pristine[8..<24]), "the forgery must keep this vault's ID")
        #expect(Array(try recoveryFile(cli)[24..<56]) != Array(pristine[24..<56]))
        let imported = try cli.run(["import", cli.file("new.bin", [2])], pinStdin: true)
        #expect(imported.code == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("recovery.n11r"), "the unlock did not say the recovery data is not used: \(imported.stderr)")
        let new = String(imported.out.prefix(32))
        for id in [old, new] {
            let opens = try cli.spawn("/usr/bin/python3", [Self.forge, "--seal-opens", cli.vault, id])
            #expect(opens.out.contains("does-not-open"), "item \(id)'s recovery seal opens with the attacker's key: \(opens.out) \(opens.stderr)")
        }
    }

    @Test("this vault's ID and public key with the attacker's set, or one binding byte flipped (first, fifth, middle, last): made again under the vault's keys; cut short: said")
    func bindingFlipsAndCuts() throws {
        let cli = try CLI()
        _ = try cli.initWithPhrase()
        _ = try cli.importIDs([cli.file("a.bin", [1])])
        let pristine = try recoveryFile(cli)
        let genuine = Array(pristine[Self.binding])

        var variants: [(String, [UInt8])] = []
        for i in [0, 3, 4, 16, 31] {
            var flipped = pristine
            flipped[Self.binding.lowerBound + i] ^= 0x01
            variants.append(("binding byte \(i) flipped", flipped))
        }
        let copy = cli.root + "/forged.n11r"
        try Data(pristine).write(to: URL(fileURLWithPath: copy))
        try #require(try cli.spawn("/usr/bin/python3", [Self.forge, copy]).code == 0)
        variants.append(("the attacker's set alone", [UInt8](try Data(contentsOf: URL(fileURLWithPath: copy)))))

        for (what, bytes) in variants {
            try Data(bytes).write(to: URL(fileURLWithPath: cli.vault + "/recovery.n11r"))
            let r = try cli.run(["list"], pinStdin: true)
            #expect(r.code == 0, "\(what): \(r.stderr)")
            #expect(r.stderr.contains("recovery.n11r"), "\(what): not said: \(r.stderr)")
            let now = try recoveryFile(cli)
            #expect(Array(now[Self.binding]) == genuine && now.count == pristine.count,
                    "\(what): the file was kept as planted instead of being made again under the vault's keys")
        }
        for cut in [1, 16, 32, 221] {
            try Data(pristine.dropLast(cut)).write(to: URL(fileURLWithPath: cli.vault + "/recovery.n11r"))
            let r = try cli.run(["list"], pinStdin: true)
            #expect(r.code == 0 && r.stderr.contains("recovery data"), "cut \(cut) bytes short, not said: \(r.stderr)")
        }
    }
}
