// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// A moved folder plus the hints must never lose a vault: every hint a command gives for
/// half a vault is followed literally, a plain `wipe --yes` is tried too, then the folder is
/// put back and everything opens.
@Suite("Moved vault: no hint destroys anything")
struct MovedVaultTests {
    /// The `nu11vlt …` commands named in backticks in a command's output.
    static func hintedCommands(_ text: String) -> [[String]] {
        text.matches(of: /`nu11vlt ([^`]+)`/).map { $0.1.split(separator: " ").map(String.init) }
    }

    @Test("move the vault folder, or the key store; follow every hint; status --search finds the moved half; restore: every item opens",
          arguments: ["vault", "keystore"])
    func followEveryHint(moved: String) throws {
        let cli = try CLI()
        try cli.initVault()
        let files = [cli.file("a.txt", Array("first item".utf8)), cli.file("b.txt", Array("second item".utf8))]
        let ids = try cli.importIDs(files)
        let original = moved == "vault" ? cli.vault : cli.keystore
        let elsewhere = cli.root + "/home/Documents/old stuff/" + moved
        try FileManager.default.createDirectory(atPath: cli.root + "/home/Documents/old stuff", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: original, toPath: elsewhere)
        let home = ["HOME": cli.root + "/home"]
        // Everything a user might run next, and what each says.
        var outputs: [String] = []
        for args in [["status"], ["list"], ["import", files[0]], ["init", "--kdf-memory", "19", "--kdf-iterations", "2"], ["wipe", "--yes"], ["wipe"]] {
            let r = try cli.run(args, pinStdin: !args.contains("wipe") && args != ["status"], environment: home)
            #expect(r.code != 0, "\(args) succeeded on half a vault: \(r.out)")
            #expect(!r.stderr.contains("`nu11vlt wipe"), "\(args): a hint leads to wipe: \(r.stderr)")
            outputs.append(r.stderr + r.out)
        }
        let hinted = outputs.flatMap(Self.hintedCommands)
        #expect(!hinted.isEmpty, "no hint names a command: \(outputs)")
        var searched = false
        for command in Set(hinted.map { $0.joined(separator: " ") }).sorted() {
            let args = command.split(separator: " ").map { $0 == "~" ? cli.root + "/home" : String($0) }
            let r = try cli.run(args, environment: home)
            if args.first == "status" && args.contains("--search") {
                searched = true
                #expect(r.code == 0 && r.out.contains(elsewhere), "status --search did not find the moved \(moved): \(r.out) \(r.stderr)")
            }
        }
        #expect(searched, "no hint names status --search: \(hinted)")
        // The hint's way forward: point at the moved half.
        let option = moved == "vault" ? "--vault" : "--keystore"
        let pointed = try cli.run(["list", option, elsewhere], pinStdin: true)
        #expect(pointed.code == 0 && ids.allSatisfy { pointed.out.contains($0) }, "pointing at the moved half: \(pointed.stderr)")
        // Put it back: everything opens, byte for byte.
        try FileManager.default.moveItem(atPath: elsewhere, toPath: original)
        for (id, file) in zip(ids, files) {
            let r = try cli.run(["export", id, "-o", "-"], pinStdin: true)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(r.code == 0 && r.stdout == bytes, "\(id) after the round trip: \(r.stderr)")
        }
    }

    /// The command lines `status --search` printed (after "use it:" or "check:"), as printed.
    static func printedCommands(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            guard let at = line.range(of: #"(use it|check): +"#, options: .regularExpression) else { return nil }
            var command = String(line[at.upperBound...])
            if let note = command.range(of: "   (") { command = String(command[..<note.lowerBound]) }
            return command.trimmingCharacters(in: .whitespaces)
        }
    }

    @Test("issue 56: a vault folder moved from its default place is found by status --search, recorded in the key store and used from then on; every printed command runs as pasted")
    func rememberedAfterSearch() throws {
        let cli = try CLI()
        try cli.useDefaultsInHome()
        try cli.initVault()
        let ids = try cli.importIDs([cli.file("a.txt", Array("first item".utf8)), cli.file("b.txt", Array("second item".utf8))])
        let elsewhere = cli.home + "/Documents/old stuff/nu11vlt"
        try FileManager.default.createDirectory(atPath: cli.home + "/Documents/old stuff", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: cli.defaultVault, toPath: elsewhere)
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 4, mentions: "status --search")

        let search = try cli.run(["status", "--search", cli.home])
        #expect(search.code == 0 && search.out.contains(elsewhere), "\(search.out) \(search.stderr)")
        let printed = Self.printedCommands(search.out)
        #expect(printed.count == 2, "status --search printed \(printed.count) commands: \(search.out)")
        for command in printed {
            #expect(command.hasPrefix("nu11vlt "), "not a command: \(command)")
            let r = try cli.shell(command)
            #expect(r.code == 0, "`\(command)`, pasted, fails: \(r.stderr)")
            #expect(r.out.contains(elsewhere), "`\(command)` does not show the moved vault: \(r.out)")
        }
        #expect(cli.exists(cli.defaultKeyStore + "/vault-folder.n11l"), "nothing was recorded in the key store")

        // From now on, without --vault: the recorded folder.
        let list = try cli.run(["list"], pinStdin: true)
        #expect(list.code == 0 && ids.allSatisfy { list.out.contains($0) }, "the moved vault is not used without --vault: \(list.stderr)")
        let status = try cli.run(["status"])
        #expect(status.code == 0 && status.out.contains("vault      \(elsewhere)"), "\(status.out) \(status.stderr)")
        // A path given (or NU11VLT_VAULT) still wins: the record moves nothing that was named.
        expectCleanError(try cli.run(["list", "--vault", cli.defaultVault], pinStdin: true), code: 4)
        expectCleanError(try cli.run(["list"], pinStdin: true, environment: ["NU11VLT_VAULT": cli.defaultVault]), code: 4)

        // Moved back to its default place: the default wins again.
        try FileManager.default.moveItem(atPath: elsewhere, toPath: cli.defaultVault)
        #expect(try cli.run(["status"]).out.contains("vault      \(cli.defaultVault)"))
        try FileManager.default.moveItem(atPath: cli.defaultVault, toPath: elsewhere)
    }

    @Test("issue 56: the recorded place is only a hint: pointing it at another vault, at a folder with no vault, or filling it with junk opens nothing else and crashes nothing")
    func recordIsOnlyAHint() throws {
        let cli = try CLI()
        try cli.useDefaultsInHome()
        try cli.initVault()
        _ = try cli.importIDs([cli.file("mine.txt", Array("mine".utf8))])
        let stranger = try CLI()
        try stranger.initVault()
        let theirs = try stranger.importIDs([stranger.file("theirs.txt", Array("theirs".utf8))])
        try FileManager.default.moveItem(atPath: cli.defaultVault, toPath: cli.home + "/moved")
        #expect(try cli.run(["status", "--search", cli.home]).code == 0)
        let record = cli.defaultKeyStore + "/vault-folder.n11l"
        let recorded = try #require(FileManager.default.contents(atPath: record))
        #expect(recorded.prefix(5) == Data("N11L".utf8 + [1]), "not a version-1 record: \(Array(recorded.prefix(8)))")

        func pointAt(_ path: String) throws {
            let bytes = Array(path.utf8)
            try Data("N11L".utf8 + [1, UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)] + bytes).write(to: URL(fileURLWithPath: record))
        }
        // Another vault (its own key store, its own vault ID): not opened, not touched.
        try pointAt(stranger.vault)
        let foreign = try cli.run(["list"], pinStdin: true)
        #expect(foreign.code != 0 && !theirs.contains { foreign.out.contains($0) }, "the record opened a stranger's vault: \(foreign.out)")
        expectCleanError(foreign, code: 4)
        #expect(try stranger.run(["list"], pinStdin: true).out.contains(theirs[0]), "the stranger's vault was changed")
        // A folder with no vault, a relative path, junk, an empty file: ignored, one clean line.
        for junk in [Data("N11L".utf8 + [1, 0, 4] + Array("/tmp".utf8)), Data("N11L".utf8 + [1, 0, 3] + Array("tmp".utf8)),
                     Data("N11L".utf8 + [2, 0, 1] + Array("/".utf8)), Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) }), Data()] {
            try junk.write(to: URL(fileURLWithPath: record))
            expectCleanError(try cli.run(["list"], pinStdin: true), code: 4, mentions: "status --search")
        }
        // The real place again, recorded by the search: it opens.
        #expect(try cli.run(["status", "--search", cli.home]).code == 0)
        #expect(try cli.run(["list"], pinStdin: true).out.contains("mine.txt"))
    }
}

