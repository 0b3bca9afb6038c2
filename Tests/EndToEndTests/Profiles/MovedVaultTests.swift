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
}
