// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 17: the first run, strength estimates, half vaults, the safety rails around the
/// backup PIN, and a real terminal (tmux).
@Suite("first run, strength, half vaults, tmux")
struct FirstRunTests {
    @Test("init says where things are, what to back up and never back up, what is lost with the PIN, and what to run next")
    func firstRun() throws {
        let cli = try CLI()
        let r = try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true)
        #expect(r.code == 0, "\(r.stderr)")
        for part in [cli.vault, cli.keystore, "Never back up or sync the key store", "nu11vlt backup enable",
                     "Recovery phrase", "nu11vlt recover", "Lose the PIN, the key store and the recovery phrase",
                     "nu11vlt import", "nu11vlt list", "nu11vlt export"] {
            #expect(r.out.contains(part), "init does not say \(part): \(r.out)")
        }
        let json = try CLI()
        let j = try json.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2", "--json"], pinStdin: true)
        #expect((try? JSONSerialization.jsonObject(with: j.stdout)) != nil, "init --json is not one document: \(j.out)")
    }

    @Test("a weak PIN gets a warning that says what an offline guesser needs; a strong passphrase none")
    func weakPIN() throws {
        for (pin, warned) in [("7306", true), ("20481", true), ("password1", true), ("correct horse", true),
                              ("violet quartz tulip orbit canyon", false), ("k7#Rq!v9Zp@2mW", false)] {
            let cli = try CLI(pin: pin)
            let r = try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true)
            #expect(r.code == 0, "\(pin): \(r.stderr)")
            #expect(r.stderr.contains("warning: this PIN is weak") == warned, "\(pin): \(r.stderr)")
            if warned { #expect(r.stderr.contains("offline in "), "\(pin): the warning does not say how long: \(r.stderr)") }
        }
    }

    @Test("a weak archive password is refused before anything is written; --generate-password makes one that opens the archive")
    func archivePasswords() throws {
        let cli = try CLI()
        try cli.initVault()
        _ = try cli.importIDs([cli.file("a.jpg", [1, 2, 3])])
        let file = cli.root + "/a.nu11vlt"
        for weak in ["password", "archive password", "qwerty123"] {
            let r = try cli.spawn(CLI.binary, ["archive", "export", "--portable", "-o", file, "--kdf-memory", "19", "--kdf-iterations", "2",
                                               "--pin-stdin", "--password-fd", "0"], input: Data("\(cli.pin)\n\(weak)\n".utf8))
            expectCleanError(r, code: 64, mentions: "too weak")
            #expect(!cli.exists(file), "a refused export left a file")
        }
        let made = try cli.spawn(CLI.binary, ["archive", "export", "--portable", "-o", file, "--kdf-memory", "19", "--kdf-iterations", "2",
                                              "--pin-stdin", "--generate-password"], input: Data("\(cli.pin)\n".utf8))
        #expect(made.code == 0, "\(made.stderr)")
        let line = try #require(made.stderr.split(separator: "\n").first { $0.contains("archive password (shown once") })
        let password = String(line.split(separator: ":").last ?? "").trimmingCharacters(in: .whitespaces)
        #expect(password.split(separator: "-").count == 8 && password.count == 47, "not 8 words of 5 letters: \(password)")
        let other = try CLI()
        try other.initVault()
        let imported = try other.spawn(CLI.binary, ["archive", "import", file, "--pin-stdin", "--password-fd", "0"],
                                       input: Data("\(other.pin)\n\(password)\n".utf8))
        #expect(imported.code == 0, "the generated password does not open the archive: \(imported.stderr)")
    }

    @Test("with half a vault, status, init and unlock give the same one-line answer; a key-store path that is a file leaves nothing behind")
    func halfVaults() throws {
        let cli = try CLI()
        try cli.initVault()
        try FileManager.default.removeItem(atPath: cli.keystore)
        let status = try cli.run(["status"])
        let initAgain = try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true)
        let list = try cli.run(["list"], pinStdin: true)
        for r in [status, initAgain, list] {
            expectCleanError(r, code: 4, mentions: "has no key store at \(cli.keystore)")
            #expect(r.stderr.contains("nu11vlt status --search"), "no way forward: \(r.stderr)")
            #expect(!r.stderr.contains("wipe"), "a hint leads to wipe: \(r.stderr)")
        }
        #expect(status.out.contains("incomplete"), "\(status.out)")
        // Half a vault is wiped only with its vault ID typed back.
        let halfWipe = try cli.run(["wipe", "--yes"])
        expectCleanError(halfWipe, code: 64, mentions: "unrecoverable")
        #expect(cli.exists(cli.vault + "/index.sqlite"), "the refused wipe removed the vault")
        let id = try #require(halfWipe.stderr.firstMatch(of: /half of vault ([0-9a-f]+)/)?.1, "no vault ID: \(halfWipe.stderr)")
        expectCleanError(try cli.run(["wipe", "--yes", "--i-know", "0123abcd"]), code: 64, mentions: "unrecoverable")
        #expect(try cli.run(["wipe", "--yes", "--i-know", String(id)]).code == 0, "wipe cannot clear half a vault with its ID")
        #expect(!cli.exists(cli.vault))
        // init where the key-store path is a file: refused, and nothing is created.
        let fresh = try CLI()
        _ = FileManager.default.createFile(atPath: fresh.keystore, contents: Data("not a folder".utf8))
        let refused = try fresh.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true)
        expectCleanError(refused, code: 64, mentions: "should be a folder")
        #expect(!fresh.exists(fresh.vault), "init left the vault folder behind")
        #expect(try String(contentsOfFile: fresh.keystore, encoding: .utf8) == "not a folder")
    }

    @Test("setting the backup PIN again asks first when the backup vault holds items; scripts pass --replace")
    func replaceBackup() throws {
        let cli = try CLI()
        try cli.initVault()
        try cli.setBackup("backup-pin-2")
        #expect(try cli.with("backup-pin-2", ["import", cli.file("b.jpg", [7])]).code == 0)
        let refused = try cli.spawn(CLI.binary, ["pin", "set-backup", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(cli.pin)\nother-pin-3\n".utf8))
        expectCleanError(refused, code: 64, mentions: "holds 1 item")
        #expect(try cli.with("backup-pin-2", ["list"]).out.contains("b.jpg"), "the refused set-backup destroyed the backup vault")
        let replaced = try cli.spawn(CLI.binary, ["pin", "set-backup", "--replace", "--pin-stdin", "--new-pin-fd", "0"],
                                     input: Data("\(cli.pin)\nother-pin-3\n".utf8))
        #expect(replaced.code == 0, "\(replaced.stderr)")
        #expect(try cli.with("other-pin-3", ["list"]).out.isEmpty)
    }

    @Test("tmux: the PIN prompt hides what is typed, the progress line redraws in place, and the final screen is clean")
    func tmux() throws {
        let cli = try CLI()
        try cli.initVault()
        let files = (0..<4).map { cli.file("t\($0).bin", [UInt8](repeating: UInt8($0), count: 4 << 20)) }
        let env = "NU11VLT_VAULT=\(cli.vault) NU11VLT_KEYSTORE=\(cli.keystore)"
        let session = try TmuxSession(cli, command: "env \(env) \(CLI.binary) import \(files.joined(separator: " ")); sleep 30")
        let prompt = try session.screen { $0.contains("PIN") }
        #expect(prompt.contains("PIN or passphrase"), "no prompt: \(prompt)")
        try session.send([cli.pin, "Enter"])
        let final = try session.screen(until: { $0.contains("t3.bin") }, seconds: 15)
        #expect(!final.contains(cli.pin), "the PIN was echoed: \(final)")
        #expect(final.contains("t0.bin") && final.contains("t3.bin"), "import did not finish: \(final)")
        // The progress line was redrawn in place and cleared: no "importing" left on screen.
        #expect(!final.contains("importing "), "the progress line was left behind: \(final)")
    }
}
