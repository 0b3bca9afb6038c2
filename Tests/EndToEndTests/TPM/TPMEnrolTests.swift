// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Enrolling an existing vault (with its backup PIN), removing the TPM, PCR binding, and the
/// system calls of a TPM session.
@Suite("TPM 2.0: enrol and remove with other PINs, PCRs, no network", .enabled(if: SoftwareTPM.available))
struct TPMEnrolTests {
    @Test("tpm enroll keeps the backup PIN working (given on --other-pins-fd); without a TPM it is refused; tpm remove returns to version 1")
    func enrolAndRemove() throws {
        let tpm = try SoftwareTPM()
        let cli = try CLI()
        try cli.initVault()
        let id = try #require(try cli.importIDs([cli.file("a.bin", [5, 6, 7])]).first)
        try Data("backup pin 42\n".utf8).write(to: URL(fileURLWithPath: cli.root + "/bpin"))
        let backup = try cli.spawn("/bin/sh", ["-c", "exec \"$1\" pin set-backup --new-pin-fd 4 --pin-fd 3 3<<EOF 4<\"$0/bpin\"\n\(cli.pin)\nEOF\n",
                                               cli.root, CLI.binary])
        #expect(backup.code == 0, "set-backup: \(backup.stderr)")
        let backupID = try #require(try cli.runPinFD(["import", cli.file("b.bin", [8])], pin: "backup pin 42").out.split(separator: "\n").first.map { String($0.prefix(32)) })

        // No TPM reachable: refused, nothing changed.
        cli.environment["NU11VLT_TPM_TCTI"] = "swtpm:path=" + cli.root + "/none"
        expectCleanError(try cli.run(["tpm", "enroll", "--other-pins-fd", "0"], stdin: Data("\n".utf8), pinStdin: true),
                         code: 9, mentions: "could not be reached")
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))[4] == 3)  // version 1 with slot 0's pepper

        cli.environment["NU11VLT_TPM_TCTI"] = tpm.tcti
        let enrol = try cli.spawn("/bin/sh", ["-c", "exec \"$1\" tpm enroll --other-pins-fd 4 --pin-fd 3 3<<EOF 4<\"$0/bpin\"\n\(cli.pin)\nEOF\n",
                                              cli.root, CLI.binary])
        #expect(enrol.code == 0, "enroll: \(enrol.stderr)")
        #expect(enrol.out.contains("Recovery key"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))[4] == 4)  // version 2 with slot 0's pepper
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data([5, 6, 7]))
        // The backup PIN opens the backup vault only, through the TPM.
        let listed = try cli.runPinFD(["list"], pin: "backup pin 42")
        #expect(listed.code == 0 && listed.out.contains(backupID) && !listed.out.contains(id), "\(listed.out) \(listed.stderr)")
        expectCleanError(try cli.run(["tpm", "enroll", "--other-pins-fd", "0"], stdin: Data("\n".utf8), pinStdin: true),
                         code: 64, mentions: "already bound")

        // Remove: both PINs keep working without the TPM.
        let boundCopy = cli.root + "/bound-keystore"
        #expect(Program.run("/bin/cp", ["-a", cli.keystore, boundCopy]) == 0)
        let remove = try cli.spawn("/bin/sh", ["-c", "exec \"$1\" tpm remove --other-pins-fd 4 --pin-fd 3 3<<EOF 4<\"$0/bpin\"\n\(cli.pin)\nEOF\n",
                                               cli.root, CLI.binary])
        #expect(remove.code == 0, "remove: \(remove.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/master.n11k"))[4] == 3)
        cli.environment["NU11VLT_TPM_TCTI"] = "swtpm:path=" + cli.root + "/none"
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data([5, 6, 7]))
        #expect(try cli.runPinFD(["list"], pin: "backup pin 42").out.contains(backupID))
        #expect(try cli.run(["tpm", "status"]).out.contains("not bound"))
        // A revocation (issue 55): the key store copy still bound to the TPM, with the PIN and the
        // TPM, opens nothing added after the removal — the keys rotated.
        let added = try #require(try cli.importIDs([cli.file("after.bin", [3, 3])]).first)
        cli.environment["NU11VLT_TPM_TCTI"] = tpm.tcti
        // Today's key packs (with the new item's record) in the bound copy: only the keys differ.
        try FileManager.default.removeItem(atPath: boundCopy + "/keys")
        #expect(Program.run("/bin/cp", ["-a", cli.keystore + "/keys", boundCopy + "/keys"]) == 0)
        let viaOld = try cli.spawn(CLI.binary, ["export", added, "-o", "-", "--keystore", boundCopy, "--pin-stdin"], input: Data((cli.pin + "\n").utf8))
        #expect(viaOld.stdout != Data([3, 3]) && viaOld.code != 0, "the key store bound to the removed TPM opened an item added after: \(viaOld.stderr)")
    }

    @Test("on a TPM-bound vault: set-backup and set-duress work through the TPM; a PIN that would share an entry is refused cleanly")
    func backupAndDuress() throws {
        let tpm = try SoftwareTPM()
        let cli = try CLI()
        try tpm.lockout(maxTries: 50, recoverySeconds: 1)
        _ = try cli.initTPMVault(tpm)
        let primaryItem = try #require(try cli.importIDs([cli.file("p.bin", [1])]).first)
        /// Sets a PIN with `command`, trying candidates until one is accepted (1 in 16 may share
        /// a TPM entry with another PIN: refused with a clear error, nothing changed).
        func set(_ command: String, opener: String, prefix: String) throws -> String {
            for n in 1...8 {
                let candidate = "\(prefix) \(n)"
                let r = try cli.spawn(CLI.binary, ["pin", command, "--pin-stdin", "--new-pin-fd", "0", "--replace"].filter { command == "set-backup" || $0 != "--replace" },
                                      input: Data("\(opener)\n\(candidate)\n".utf8))
                if r.code == 0 { return candidate }
                expectCleanError(r, code: 64, mentions: "choose a different PIN")
            }
            Issue.record("no candidate accepted for \(command)")
            return ""
        }
        let backupPIN = try set("set-backup", opener: cli.pin, prefix: "backup pin")
        let backupItem = try #require(try cli.runPinFD(["import", cli.file("b.bin", [2])], pin: backupPIN).out.split(separator: "\n").first.map { String($0.prefix(32)) })
        let asBackup = try cli.runPinFD(["list"], pin: backupPIN)
        #expect(asBackup.code == 0 && asBackup.out.contains(backupItem) && !asBackup.out.contains(primaryItem), "\(asBackup.out) \(asBackup.stderr)")
        // set-duress answers the same whether or not the PIN was taken (it must not reveal
        // other PINs): a candidate is known to be set when it opens. The duress PIN shows the
        // backup vault and silently destroys the primary one.
        var duressOpened = false
        for n in 1...4 where !duressOpened {
            let candidate = "duress pin \(n)"
            let r = try cli.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"],
                                  input: Data("\(backupPIN)\n\(candidate)\n".utf8))
            #expect(r.code == 0, "set-duress: \(r.stderr)")
            let asDuress = try cli.runPinFD(["list"], pin: candidate)
            duressOpened = asDuress.code == 0 && asDuress.out.contains(backupItem)
        }
        #expect(duressOpened, "no duress PIN took")
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 3, mentions: "wrong")
        #expect(try cli.runPinFD(["list"], pin: backupPIN).out.contains(backupItem))
    }

    @Test("--tpm-pcrs 7: a changed PCR 7 makes the TPM refuse, the message names it, the recovery key re-enrols")
    func pcrBinding() throws {
        let tpm = try SoftwareTPM()
        let cli = try CLI()
        let recovery = try cli.initTPMVault(tpm, extra: ["--tpm-pcrs", "7"])
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        #expect(try cli.run(["tpm", "status"]).out.contains("PCRs       7"))
        let extend = try tpm.tool("tpm2_pcrextend", ["7:sha256=" + String(repeating: "ab", count: 32)])
        #expect(extend.code == 0, "\(extend.out)")
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 9, mentions: "PCR 7 (Secure Boot policy) changed")
        let recovered = try cli.runPinFD(["tpm", "recover", "--recovery-key-fd", "0"], stdin: Data((recovery + "\n").utf8))
        #expect(recovered.code == 0, "recover: \(recovered.stderr)")
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        expectCleanError(try cli.run(["init", "--tpm-pcrs", "7"], pinStdin: true), code: 64, mentions: "needs --tpm")
        expectCleanError(try cli.run(["tpm", "enroll", "--tpm-pcrs", "24"], pinStdin: true), code: 64, mentions: "0–23")
    }

    @Test("a TPM session opens no socket but the TPM's Unix socket (strace)")
    func unixSocketOnly() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else {
            Issue.record("strace is not installed (make test installs it)")
            return
        }
        let tpm = try SoftwareTPM()
        let cli = try CLI()
        cli.environment["NU11VLT_TPM_TCTI"] = tpm.tcti
        let file = cli.file("x.bin", Array(repeating: 3, count: 20_000))
        var all = ""
        for (i, args) in [["init", "--tpm", "--kdf-memory", "19", "--kdf-iterations", "2"], ["import", file], ["list"],
                          ["skeleton", "enable", "--interval", "2h"], ["checkin"]].enumerated() {
            let log = cli.root + "/net-\(i)"
            let r = try cli.spawn("/usr/bin/strace", ["-f", "-qq", "-e", "trace=network", "-o", log, CLI.binary] + args + ["--pin-stdin"],
                                  input: Data((cli.pin + "\n").utf8))
            #expect(r.code == 0, "\(args): \(r.stderr)")
            all += try String(contentsOfFile: log, encoding: .utf8)
        }
        let sockets = all.split(separator: "\n").filter { $0.contains("socket(") }
        #expect(!sockets.isEmpty, "the TPM was reached through its socket")
        #expect(sockets.allSatisfy { $0.contains("AF_UNIX") }, "\(sockets.filter { !$0.contains("AF_UNIX") }.prefix(3))")
        #expect(!all.contains("AF_INET"), "an IP socket was used")
        let connects = all.split(separator: "\n").filter { $0.contains("connect(") }
        #expect(connects.allSatisfy { $0.contains(tpm.dir) }, "\(connects.prefix(3))")
    }
}
