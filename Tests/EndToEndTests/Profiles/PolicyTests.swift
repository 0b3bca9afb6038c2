// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

@Suite("settings, failed-PIN policy, backup exclusion")
struct PolicyTests {
    @Test("settings: list, get, set with validation; set needs the PIN")
    func settings() throws {
        let cli = try CLI()
        try cli.initVault()
        let list = try cli.run(["settings", "list"])
        for key in ["deletion.mode", "fade.default", "kdf.memory_mib", "kdf.iterations", "pin.erase_after",
                    "preview.cache_mib", "backup.allow"] {
            #expect(list.out.contains(key), "\(key) missing")
        }
        #expect(try cli.run(["settings", "get", "deletion.mode"]).out == "standard\n")
        #expect(try cli.run(["settings", "set", "fade.default", "10m"], pinStdin: true).code == 0)
        #expect(try cli.run(["settings", "get", "fade.default"]).out == "10m\n")
        expectCleanError(try cli.run(["settings", "set", "preview.cache_mib", "5000"], pinStdin: true), code: 64,
                         mentions: "1 … 1024")
        expectCleanError(try cli.run(["settings", "set", "deletion.mode", "shred"], pinStdin: true), code: 64,
                         mentions: "standard | secure")
        expectCleanError(try cli.run(["settings", "set", "pin.erase_after", "1"], pinStdin: true), code: 64, mentions: "3 … 100")
        expectCleanError(try cli.run(["settings", "get", "nope"]), code: 64, mentions: "known:")
        let wrong = try cli.spawn(CLI.binary, ["settings", "set", "backup.allow", "true", "--pin-stdin"], input: Data("bad\n".utf8))
        expectCleanError(wrong, code: 3)
        #expect(try cli.run(["settings", "get", "backup.allow"]).out == "false\n")
        // --fade default uses the setting.
        let id = try cli.importIDs([cli.file("d.jpg", [1])], extra: ["--fade", "default"])[0]
        let listed = try cli.listJSON().first { $0["id"] as? String == id }
        #expect(listed?["fadesAt"] is String, "the default fade gave no deadline: \(String(describing: listed))")
    }

    @Test("the failed-PIN delay survives restarts and deleting the counter file")
    func failedPIN() throws {
        let cli = try CLI()
        try cli.initVault()
        for attempt in 1...5 {
            let r = try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data("wrong \(attempt)\n".utf8))
            expectCleanError(r, code: 3)
        }
        // A new process, with the right PIN: still delayed.
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 6, mentions: "try again in")
        // Deleting the counter does not reset it (it makes it stricter).
        try FileManager.default.removeItem(atPath: cli.keystore + "/state.n11s")
        let after = try cli.run(["list"], pinStdin: true)
        #expect(after.code == 6 && after.stderr.contains("altered"), "\(after.stderr)")
        // Editing it neither.
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: cli.keystore + "/state.n11s")))
        bytes[bytes.count - 3] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: cli.keystore + "/state.n11s"))
        #expect(try cli.run(["list"], pinStdin: true).code == 6)
    }

    @Test("erase after N wrong PINs (opt-in)")
    func eraseAfter() throws {
        let cli = try CLI()
        try cli.initVault()
        _ = try cli.importIDs([cli.file("x.jpg", [1])])
        #expect(try cli.run(["settings", "set", "pin.erase_after", "3"], pinStdin: true).code == 0)
        for attempt in 1...3 {
            _ = try cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data("wrong \(attempt)\n".utf8))
        }
        #expect(!FileManager.default.fileExists(atPath: cli.keystore + "/master.n11k"))
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 4, mentions: "no vault")
    }

    @Test("tar --exclude-caches leaves the vault and key store out; backup.allow lets the vault folder in, never the key store")
    func backupExclusion() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try cli.importIDs([cli.file("b.jpg", [1, 2])])[0]
        #expect(FileManager.default.fileExists(atPath: cli.vault + "/CACHEDIR.TAG"))
        #expect(FileManager.default.fileExists(atPath: cli.keystore + "/CACHEDIR.TAG"))
        func archived() throws -> String {
            let r = try cli.spawn("/bin/sh", ["-c", "tar --exclude-caches -cf - -C \"$0\" vault keystore | tar -tf -", cli.root])
            return r.out
        }
        let excluded = try archived()
        #expect(!excluded.contains("master.n11k") && !excluded.contains("\(id).n11") && !excluded.contains(".key") && !excluded.contains(".n11p"),
                "backed up: \(excluded)")
        #expect(try cli.run(["settings", "set", "backup.allow", "true"], pinStdin: true).stderr.contains("crypto-shredding holds"))
        let included = try archived()
        #expect(included.contains("\(id).n11") && included.contains("recovery.n11r"), "\(included)")
        #expect(!included.contains("master.n11k") && !included.contains(".key") && !included.contains(".n11p"), "the key store was backed up: \(included)")
        #expect(FileManager.default.fileExists(atPath: cli.keystore + "/CACHEDIR.TAG"))
        #expect(try cli.run(["settings", "set", "backup.allow", "false"], pinStdin: true).code == 0)
        #expect(!(try archived()).contains("master.n11k"))
    }
}
