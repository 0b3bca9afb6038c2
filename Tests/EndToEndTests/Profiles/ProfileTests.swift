// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

extension CLI {
    func with(_ pin: String, _ args: [String], stdin: Data? = nil) throws -> CLI.Outcome {
        try spawn(CLI.binary, args + ["--pin-stdin"], input: Data((pin + "\n").utf8) + (stdin ?? Data()))
    }

    func setBackup(_ backup: String) throws {
        let r = try spawn(CLI.binary, ["pin", "set-backup", "--pin-stdin", "--new-pin-fd", "0"],
                          input: Data("\(pin)\n\(backup)\n".utf8))
        #expect(r.code == 0, "set-backup: \(r.stderr)")
    }

    /// Every file of the key store with its size, relative; random hex names (the logs'
    /// IDs, different in every key store) are masked.
    func keyStoreShape() throws -> [String] {
        try spawn("/usr/bin/find", [keystore, "-printf", "%P %s %y\n"]).out.split(separator: "\n")
            .map { String($0).replacingOccurrences(of: "[0-9a-f]{32}", with: "<id>", options: .regularExpression) }.sorted()
    }
}

@Suite("backup PIN, duress PIN, Skeleton Switch")
struct ProfileTests {
    @Test("the backup PIN opens a complete, separate vault; the primary is untouched and invisible")
    func backupVault() throws {
        let cli = try CLI()
        try cli.initVault()
        let primaryID = try cli.importIDs([cli.file("primary.jpg", [1, 1, 1])])[0]
        #expect(try cli.run(["album", "create", "P-Album"], pinStdin: true).code == 0)
        try cli.setBackup("backup-pin-2")
        let b = "backup-pin-2"
        #expect(try cli.with(b, ["list"]).out.isEmpty, "backup vault starts empty")
        #expect(try cli.with(b, ["album", "list"]).out.isEmpty)
        let imported = try cli.with(b, ["import", cli.file("backup.jpg", [2, 2])])
        #expect(imported.code == 0, "\(imported.stderr)")
        let backupID = String(imported.out.prefix(32))
        #expect(cli.exists(cli.vault + "/Backup/\(backupID).n11"))
        #expect(try cli.with(b, ["album", "create", "B-Album"]).code == 0)
        let note = try cli.spawn("/bin/sh", ["-c", "printf 'decoy note' | \"$0\" note add --title decoy --pin-fd 3 3<<EOF\n\(b)\nEOF\n",
                                             CLI.binary])
        #expect(note.code == 0, "\(note.stderr)")
        let fadeB = try cli.with(b, ["import", "--fade", "1h", cli.file("bfade.jpg", [3])])
        #expect(fadeB.code == 0)
        let fadeP = try cli.importIDs([cli.file("pfade.jpg", [4])], extra: ["--fade", "1h"])[0]
        // Same commands, same output shape; nothing of the other vault.
        let backupList = try cli.with(b, ["list", "--json"]).out
        #expect(backupList.contains(backupID) && !backupList.contains(primaryID) && !backupList.contains(fadeP))
        let primaryList = try cli.run(["list", "--json"], pinStdin: true).out
        #expect(primaryList.contains(primaryID) && primaryList.contains(fadeP) && !primaryList.contains(backupID))
        #expect(!(try cli.with(b, ["album", "list"]).out.contains("P-Album")))
        #expect(!(try cli.run(["album", "list"], pinStdin: true).out.contains("B-Album")))
        #expect(try cli.with(b, ["note", "list"]).out.contains("decoy"))
        #expect(!(try cli.run(["note", "list"], pinStdin: true).out.contains("decoy")))
        expectCleanError(try cli.with(b, ["export", primaryID, "-o", "-"]), code: 4)
        expectCleanError(try cli.with(b, ["export", fadeP, "-o", "-"]), code: 4)
        #expect(try cli.with(b, ["export", backupID, "-o", "-"]).stdout == Data([2, 2]))
        #expect(try cli.with(b, ["delete", backupID]).code == 0)
        #expect(try cli.run(["export", primaryID, "-o", "-"], pinStdin: true).stdout == Data([1, 1, 1]))
        let status = try cli.with(b, ["status", "--json"]).out
        #expect(status.contains("\"items\" : 2"), "backup counts: \(status)")
    }

    @Test("key stores with and without a backup PIN have identical size and structure")
    func indistinguishable() throws {
        let plain = try CLI()
        try plain.initVault()
        // As many logged events as set-backup makes (an unlock and a change), so only the
        // backup PIN differs.
        #expect(try plain.run(["settings", "set", "deletion.mode", "standard"], pinStdin: true).code == 0)
        let withBackup = try CLI()
        try withBackup.initVault()
        try withBackup.setBackup("another-pin")
        #expect(try plain.keyStoreShape() == withBackup.keyStoreShape())
        #expect(FileManager.default.fileExists(atPath: plain.vault + "/Backup"))
    }

    @Test("duress PIN: destroys the primary silently and behaves exactly like the backup PIN")
    func duress() throws {
        let cli = try CLI()
        try cli.initVault()
        let primaryID = try cli.importIDs([cli.file("p.jpg", [9, 9])])[0]
        _ = try cli.importIDs([cli.file("pf.jpg", [8])], extra: ["--fade", "1h"])
        try cli.setBackup("backup-pin")
        let backupID = String(try cli.with("backup-pin", ["import", cli.file("b.jpg", [7])]).out.prefix(32))
        let set = try cli.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"],
                                input: Data("backup-pin\nduress-pin\n".utf8))
        #expect(set.code == 0, "\(set.stderr)")
        let normal = try cli.with("backup-pin", ["list"])
        let forced = try cli.with("duress-pin", ["list"])
        #expect(forced.code == 0 && forced.out == normal.out && forced.stderr == normal.stderr)
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 3)
        #expect(!cli.hasKeyRecord(primaryID) && !cli.exists(cli.vault + "/Vault/Photos/\(primaryID).n11"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Fade").isEmpty)
        #expect(try cli.with("backup-pin", ["export", backupID, "-o", "-"]).stdout == Data([7]))
        #expect(try cli.with("duress-pin", ["export", backupID, "-o", "-"]).stdout == Data([7]))
    }

    @Test("Skeleton Switch: fires after its interval, never with check-ins, and cannot be postponed")
    func skeleton() throws {
        // Fires: the next command of any kind wipes first and says so.
        for next in [["status"], ["sweep"], ["list", "--pin-stdin"], ["settings", "list"]] {
            let cli = try CLI()
            try cli.initVault()
            #expect(try cli.run(["skeleton", "enable", "--interval", "2s", "--short-interval"], pinStdin: true).code == 0)
            #expect(try cli.run(["skeleton", "status"]).out.contains("armed"))
            cli.clockAhead = "+1h"  // the interval passes (faketime: no sleep)
            let r = try cli.spawn(ClockTests.faketime, ["-f", "+1h", CLI.binary] + next, input: Data((cli.pin + "\n").utf8))
            #expect(r.code != 0 && r.stderr.contains("Skeleton Switch fired"), "\(next): \(r.stderr)")
            #expect(!cli.exists(cli.keystore + "/master.n11k"))
            expectCleanError(try cli.run(["list"], pinStdin: true), code: 4)
        }
        // With check-ins it never fires.
        let kept = try CLI()
        try kept.initVault()
        #expect(try kept.run(["skeleton", "enable", "--interval", "3s", "--short-interval"], pinStdin: true).code == 0)
        for step in 1...5 {
            kept.clockAhead = "+\(step)s"  // 1 s (plus the command's own time) between check-ins, 5 s in all: more than the interval
            #expect(try kept.run(["checkin"], pinStdin: true).code == 0)
        }
        #expect(try kept.run(["list"], pinStdin: true).code == 0)
        #expect(try kept.run(["skeleton", "disable"], pinStdin: true).code == 0)
        kept.clockAhead = "+1h"
        #expect(try kept.run(["list"], pinStdin: true).code == 0, "disarmed switch fired")
        // Editing or deleting the state does not postpone it.
        for tamper in ["delete", "edit"] {
            let cli = try CLI()
            try cli.initVault()
            #expect(try cli.run(["skeleton", "enable", "--interval", "1h"], pinStdin: true).code == 0)
            let state = cli.keystore + "/state.n11s"
            var r: CLI.Outcome
            switch tamper {
            case "delete":
                try FileManager.default.removeItem(atPath: state)
                r = try cli.run(["skeleton", "status"])
            default:
                var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: state)))
                bytes[bytes.count / 2] ^= 1
                try Data(bytes).write(to: URL(fileURLWithPath: state))
                r = try cli.run(["skeleton", "status"])
            }
            #expect(r.stderr.contains("Skeleton Switch fired"), "\(tamper): \(r.stderr)")
            #expect(!cli.exists(cli.keystore + "/master.n11k"), "\(tamper): not wiped")
        }
        // Clearing the armed flag in the master record leaves the primary PIN opening nothing.
        let flag = try CLI()
        try flag.initVault()
        #expect(try flag.run(["skeleton", "enable", "--interval", "1h"], pinStdin: true).code == 0)
        var master = try [UInt8](Data(contentsOf: URL(fileURLWithPath: flag.keystore + "/master.n11k")))
        master[6] = 0
        try Data(master).write(to: URL(fileURLWithPath: flag.keystore + "/master.n11k"))
        expectCleanError(try flag.run(["list"], pinStdin: true), code: 3)
    }
}
