// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 30: the commands whose report and effect disagreed under a fault (skeleton enable and
/// disable, settings set, pin set-backup) and the new ones (backup enable, recover), each
/// failed at every file-system call; after each trial the exit status says what happened.
extension FaultTests {
    func status(_ cli: CLI, _ args: [String]) throws -> String {
        try cli.run(args).out
    }

    @Test("skeleton enable") func skeletonEnable() throws {
        try run("skeleton enable", Scenario(
            prepare: { cli in [try cli.importIDs([cli.file("a.jpg", [1])])[0]: Data([1])] },
            command: { _ in [CLI.binary, "skeleton", "enable", "--interval", "1h", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let json = try status(cli, ["skeleton", "status", "--json"])
                let armed = json.contains("\"enabled\" : true") || json.contains("\"enabled\":true")
                #expect(armed == ok, "skeleton enable said \(ok ? "done" : "failed") but the switch is \(armed ? "armed" : "off"): \(json)")
                return cli.pin
            }))
    }

    @Test("skeleton disable") func skeletonDisable() throws {
        try run("skeleton disable", Scenario(
            prepare: { cli in
                #expect(try cli.run(["skeleton", "enable", "--interval", "1h"], pinStdin: true).code == 0)
                return [try cli.importIDs([cli.file("a.jpg", [2])])[0]: Data([2])]
            },
            command: { _ in [CLI.binary, "skeleton", "disable", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let json = try status(cli, ["skeleton", "status", "--json"])
                let armed = json.contains("\"enabled\" : true") || json.contains("\"enabled\":true")
                #expect(armed != ok, "skeleton disable said \(ok ? "done" : "failed") but the switch is \(armed ? "armed" : "off"): \(json)")
                return cli.pin
            }))
    }

    @Test("settings set") func settingsSet() throws {
        try run("settings set", Scenario(
            prepare: { cli in [try cli.importIDs([cli.file("a.jpg", [3])])[0]: Data([3])] },
            command: { _ in [CLI.binary, "settings", "set", "preview.cache_mib", "96", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let value = try status(cli, ["settings", "get", "preview.cache_mib"]).trimmingCharacters(in: .whitespacesAndNewlines)
                #expect((value == "96") == ok, "settings set said \(ok ? "done" : "failed") but the value is \(value)")
                return cli.pin
            }))
    }

    @Test("backup enable") func backupEnable() throws {
        try run("backup enable", Scenario(
            prepare: { cli in [try cli.importIDs([cli.file("a.jpg", [4])])[0]: Data([4])] },
            command: { _ in [CLI.binary, "backup", "enable", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let value = try status(cli, ["settings", "get", "backup.allow"]).trimmingCharacters(in: .whitespacesAndNewlines)
                #expect((value == "true") == ok, "backup enable said \(ok ? "done" : "failed") but backup.allow is \(value)")
                // Whatever happened, the next unlock leaves the folders as the setting says, and
                // the key store excluded.
                _ = try cli.run(["list"], pinStdin: true)
                #expect(FileManager.default.fileExists(atPath: cli.vault + "/CACHEDIR.TAG") == !ok)
                #expect(FileManager.default.fileExists(atPath: cli.keystore + "/CACHEDIR.TAG"), "the key store lost its exclusion")
                return cli.pin
            }))
    }

    @Test("pin set-backup") func pinSetBackup() throws {
        try run("pin set-backup", Scenario(
            prepare: { cli in [try cli.importIDs([cli.file("a.jpg", [5])])[0]: Data([5])] },
            command: { _ in [CLI.binary, "pin", "set-backup", "--pin-stdin", "--new-pin-fd", "0"] },
            input: { cli in Data("\(cli.pin)\nbackup-pin-9\n".utf8) },
            verify: { cli, ok in
                let opens = try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data("backup-pin-9\n".utf8)).code == 0
                #expect(opens == ok, "pin set-backup said \(ok ? "done" : "failed") but the backup PIN \(opens ? "opens" : "does not open")")
                return cli.pin
            }))
    }

    @Test("recover") func recoverFromPhrase() throws {
        try run("recover", Scenario(
            prepare: { cli in
                let id = try cli.importIDs([cli.file("a.jpg", [6, 6])])[0]
                let setup = try cli.run(["recovery", "setup"], pinStdin: true)
                let phrase = try #require(setup.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                    .first { $0.range(of: "^[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}$", options: .regularExpression) != nil })
                try Data((phrase + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/phrase"))
                // The key store is lost: an empty folder where it was.
                try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost-keystore")
                try FileManager.default.createDirectory(atPath: cli.keystore, withIntermediateDirectories: false)
                return [id: Data([6, 6])]
            },
            command: { _ in
                ["/bin/sh", "-c", "exec \"$0\" recover --kdf-memory 19 --kdf-iterations 2 --pin-stdin --phrase-fd 3 3<\"${NU11VLT_VAULT%/vault}/phrase\"",
                 CLI.binary]
            },
            input: { _ in Data("recovered-pin-1\n".utf8) },
            verify: { cli, ok in
                let rebuilt = FileManager.default.fileExists(atPath: cli.keystore + "/master.n11k")
                #expect(rebuilt == ok, "recover said \(ok ? "done" : "failed") but the key store is \(rebuilt ? "there" : "absent")")
                let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: cli.root))?.filter { $0.hasSuffix(".recovering") } ?? []
                #expect(leftovers.isEmpty, "a half-built key store was left: \(leftovers)")
                if !ok {
                    // A failed recovery can simply be run again.
                    let again = try cli.spawn("/bin/sh", ["-c", "exec \"$0\" recover --kdf-memory 19 --kdf-iterations 2 --pin-stdin --phrase-fd 3 3<\"$1\"",
                                                          CLI.binary, cli.root + "/phrase"], input: Data("recovered-pin-1\n".utf8))
                    #expect(again.code == 0, "recover after a failed one: \(again.stderr)")
                }
                return "recovered-pin-1"
            }))
    }
}
