// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 56: backups mean what the screen says. The README's own commands, read from the
/// README and run as printed (only the repository and restore paths replaced), over a home
/// that holds the vault folder and the key store at their default places: restic brings every
/// item back with the phrase, and neither restic nor borg ever stores a key-store file.
@Suite("the README's backup commands (restic, borg) over a home")
struct BackupCommandsTests {
    static let resticRepo = "/media/usb/vault-backup"
    static let borgRepo = "/media/usb/vault-borg"
    static let restoreTarget = "/tmp/restored"

    /// The README's command lines that start with `prefix`, without their comments.
    static func readme(_ prefix: String) throws -> [String] {
        let text = try String(contentsOfFile: Repo.path("README.md"), encoding: .utf8)
        return text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix(prefix) }.map { line in
            (line.range(of: " #").map { String(line[..<$0.lowerBound]) } ?? line).trimmingCharacters(in: .whitespaces)
        }
    }

    /// The one README line that starts with `prefix`, its placeholders replaced.
    static func command(_ prefix: String, _ replacing: [String: String]) throws -> String {
        let lines = try readme(prefix)
        #expect(lines.count == 1, "the README has \(lines.count) lines starting with \(prefix): \(lines)")
        var line = try #require(lines.first, "the README has no command starting with \(prefix)")
        for (from, to) in replacing { line = line.replacingOccurrences(of: from, with: to) }
        return line
    }

    static let tools = ["RESTIC_PASSWORD": "restic test repository", "BORG_PASSPHRASE": "borg test repository"]

    @discardableResult
    func run(_ cli: CLI, _ line: String) throws -> CLI.Outcome {
        let r = try cli.shell(line, environment: Self.tools)
        #expect(r.code == 0, "\(line): \(r.stderr)")
        return r
    }

    /// The key store's files among `paths` (absolute paths, or borg's without the leading /);
    /// its CACHEDIR.TAG and the folder itself name no key.
    func keyStoreFiles(_ paths: [String], _ cli: CLI) -> [String] {
        let store = cli.defaultKeyStore
        return paths.map { $0.hasPrefix("/") ? $0 : "/" + $0 }
            .filter { $0.hasPrefix(store + "/") && $0 != store + "/CACHEDIR.TAG" }
    }

    /// A vault made as a script makes it, with backups chosen, at the default places in a
    /// fresh home; a few items, one in an album, and a note.
    func makeVault(_ cli: CLI) throws -> (phrase: String, originals: [String: Data]) {
        try cli.useDefaultsInHome()
        let phrase = try cli.initWithPhrase(["--backups", "yes"])
        #expect(!cli.exists(cli.defaultVault + "/CACHEDIR.TAG"), "backups were chosen, yet the vault folder is excluded")
        #expect(cli.exists(cli.defaultKeyStore + "/CACHEDIR.TAG"), "the key store lost its exclusion")
        let status = try cli.run(["status"])
        #expect(status.out.contains("vault folder backup-friendly"), "\(status.out)")
        #expect(try cli.run(["album", "create", "Trips"], pinStdin: true).code == 0)
        var originals: [String: Data] = [:]
        for (i, name) in ["one.bin", "two.bin", "three.bin"].enumerated() {
            let bytes = (0..<(30_000 * (i + 1))).map { UInt8(truncatingIfNeeded: $0 &* (i + 7)) }
            _ = try cli.importIDs([cli.file(name, bytes)], extra: i == 1 ? ["--album", "Trips"] : [])
            originals[name] = Data(bytes)
        }
        #expect(try cli.runPinFD(["note", "add", "--title", "backed-up note"], stdin: Data("in the snapshot".utf8)).code == 0)
        return (phrase, originals)
    }

    @Test("init --backups yes; the README's restic backup of ~; home lost; the README's restore; recover with the phrase: every item, album and note; no key-store file in the snapshot")
    func resticAsTheReadmeSays() throws {
        let cli = try CLI()
        let (phrase, originals) = try makeVault(cli)
        let repo = cli.root + "/restic-repo"
        try run(cli, Self.command("restic -r \(Self.resticRepo) init", [Self.resticRepo: repo]))
        try run(cli, Self.command("restic -r \(Self.resticRepo) backup", [Self.resticRepo: repo]))
        let listed = try run(cli, "restic -r \(repo) ls latest").out.split(separator: "\n").map(String.init).filter { $0.hasPrefix("/") }
        #expect(listed.contains(cli.defaultVault + "/index.sqlite") && listed.contains(cli.defaultVault + "/recovery.n11r"),
                "the README's restic command did not store the vault folder: \(listed.filter { $0.contains("nu11vlt") })")
        #expect(keyStoreFiles(listed, cli).isEmpty, "the README's restic command stored the key store: \(keyStoreFiles(listed, cli))")

        // The laptop is lost: the whole home with it.
        try FileManager.default.removeItem(atPath: cli.home)
        let target = cli.root + "/restored"
        try run(cli, Self.command("restic -r \(Self.resticRepo) restore", [Self.resticRepo: repo, Self.restoreTarget: target]))
        let vault = target + cli.defaultVault
        let keystore = cli.root + "/new-keystore"
        #expect(!cli.exists(target + cli.defaultKeyStore + "/master.n11k"), "the restore brought a key store back")
        let r = try cli.recover(phrase: phrase, newPIN: "after the laptop was lost", extra: ["--vault", vault, "--keystore", keystore])
        #expect(r.code == 0, "\(r.stderr)")
        let open = ["--vault", vault, "--keystore", keystore]
        let items = try cli.with("after the laptop was lost", ["list", "--json"] + open)
        let document = try #require(try JSONSerialization.jsonObject(with: items.stdout) as? [String: Any], "\(items.out) \(items.stderr)")
        let rows = try #require(document["items"] as? [[String: Any]], "\(items.out)")
        for (name, bytes) in originals {
            let id = try #require(rows.first { $0["name"] as? String == name }?["id"] as? String, "\(name) is not in the recovered vault: \(rows)")
            #expect(try cli.with("after the laptop was lost", ["export", id, "-o", "-"] + open).stdout == bytes, "\(name) differs")
        }
        #expect(try cli.with("after the laptop was lost", ["album", "list"] + open).out.contains("Trips"))
        #expect(try cli.with("after the laptop was lost", ["note", "list"] + open).out.contains("backed-up note"))
    }

    @Test("borg create as the README shows it stores the vault folder and no key-store file; with backups off, nothing of the vault; a plain `restic backup ~` (the README's warning) does store the key store")
    func borgAndTheWarning() throws {
        let cli = try CLI()
        _ = try makeVault(cli)
        let repo = cli.root + "/borg-repo"
        try run(cli, Self.command("borg init", [Self.borgRepo: repo]))
        try run(cli, Self.command("borg create", [Self.borgRepo: repo]))
        func lastArchive() throws -> [String] {
            let names = try run(cli, "borg list --short \(repo)").out.split(separator: "\n").map(String.init)
            let name = try #require(names.last, "borg made no archive")
            return try run(cli, "borg list --short \(repo)::\(name)").out.split(separator: "\n").map(String.init)
        }
        let archived = try lastArchive()
        let vault = String(cli.defaultVault.dropFirst())
        #expect(archived.contains(vault + "/index.sqlite"), "the README's borg command did not store the vault folder: \(archived.filter { $0.contains("nu11vlt") })")
        #expect(keyStoreFiles(archived, cli).isEmpty, "the README's borg command stored the key store: \(keyStoreFiles(archived, cli))")

        // Backups off again: the same command stores nothing of the vault folder.
        #expect(try cli.run(["backup", "disable"], pinStdin: true).code == 0)
        try run(cli, "sleep 1")  // borg's {now} names the archive to the second
        try run(cli, Self.command("borg create", [Self.borgRepo: repo]))
        let off = try lastArchive().filter { $0.hasPrefix(vault + "/") && $0 != vault + "/CACHEDIR.TAG" }
        #expect(off.isEmpty, "with backups off, borg stored the vault folder: \(off)")

        // The control: without --exclude-caches restic takes the key store, as the README warns.
        let plain = cli.root + "/restic-plain"
        try run(cli, "restic -r \(plain) init")
        try run(cli, "restic -r \(plain) backup ~")
        let listed = try run(cli, "restic -r \(plain) ls latest").out.split(separator: "\n").map(String.init).filter { $0.hasPrefix("/") }
        #expect(listed.contains(cli.defaultKeyStore + "/master.n11k"), "the control stored no key store: the check above proves nothing")
    }
}
