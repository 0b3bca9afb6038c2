// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 60: `status` (and `init`) say when the vault folder sits in a Syncthing folder, warn when
/// Syncthing keeps old copies of its files (file versioning: a deleted item's files stay in
/// `.stversions`, and the recovery phrase still opens them), and warn when the Syncthing folder's
/// `.stignore` — the only one Syncthing reads, at its root — lacks the vault's device-local
/// lines (a vault in a subfolder: its index would sync). The config is one `syncthing generate`
/// wrote (Debian's Syncthing), its folder pointed at the test's folder.
@Suite("the vault folder in a Syncthing folder: status says where, and warns of versioning and of files that would sync")
struct SyncthingFolderTests {
    /// A Syncthing config made by Syncthing itself under `home`/.config/syncthing (where Debian's
    /// 1.19 keeps it), its default folder moved to `folder`, with `versioning` ("" for none).
    static func configure(_ cli: CLI, home: String, folder: String, versioning: String, label: String = "Phone & laptop") throws {
        let dir = home + "/.config/syncthing"
        let made = try cli.spawn("/usr/bin/syncthing", ["generate", "--home", dir, "--no-default-folder"])
        #expect(made.code == 0, "syncthing generate: \(made.stderr)")
        var xml = try String(contentsOfFile: dir + "/config.xml", encoding: .utf8)
        // The defaults' template folder (path "~", which holds the vault's folder) stays as it
        // is, with versioning turned on: it is not a folder, and must never be taken for one.
        xml = xml.replacingOccurrences(of: "<versioning>", with: "<versioning type=\"trashcan\">")
        let escaped = label.replacingOccurrences(of: "&", with: "&amp;")
        let element = """
            <folder id="n11" label="\(escaped)" path="\(folder)" type="sendreceive" rescanIntervalS="3600" fsWatcherEnabled="false">
                    <filesystemType>basic</filesystemType>
                    <versioning\(versioning.isEmpty ? "" : " type=\"\(versioning)\"")>
                        <cleanupIntervalS>3600</cleanupIntervalS>
                        <fsPath></fsPath>
                        <fsType>basic</fsType>
                    </versioning>
                </folder>
            """
        let start = try #require(xml.range(of: "<configuration"))
        let tagEnd = try #require(xml.range(of: ">", range: start.upperBound..<xml.endIndex))
        xml.insert(contentsOf: "\n    " + element, at: tagEnd.upperBound)
        try xml.write(toFile: dir + "/config.xml", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: folder + "/.stfolder", withIntermediateDirectories: true)
    }

    static func status(_ cli: CLI, home: String) throws -> (CLI.Outcome, [String: Any]?) {
        let env = ["HOME": home, "XDG_CONFIG_HOME": "", "XDG_STATE_HOME": ""]
        let text = try cli.run(["status"], environment: env)
        #expect(text.code == 0, "status: \(text.stderr)")
        let json = try cli.run(["status", "--json"], environment: env)
        #expect(json.code == 0, "status --json: \(json.stderr)")
        let object = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        #expect(json.stderr == text.stderr, "status and status --json warn alike")
        return (text, object?["sync"] as? [String: Any])
    }

    @Test("the vault folder is the Syncthing folder, versioning off: one line, no warning; versioning on: a warning naming .stversions and what it holds")
    func versioning() throws {
        let cli = try CLI()
        let home = cli.root + "/home"
        try cli.initVault()
        try Self.configure(cli, home: home, folder: cli.vault, versioning: "")
        var (r, sync) = try Self.status(cli, home: home)
        #expect(r.out.contains("sync       Syncthing folder \"Phone & laptop\" (\(cli.vault)); no file versioning"), "\(r.out)")
        #expect(!r.stderr.contains("warning"), "a warning without versioning: \(r.stderr)")
        #expect(sync?["root"] as? String == cli.vault && sync?["versioning"] is NSNull && (sync?["missingIgnores"] as? [String]) == [],
                "\(String(describing: sync))")

        // Versioning on: the next status warns, before any old copy is there.
        try FileManager.default.removeItem(atPath: home)
        try Self.configure(cli, home: home, folder: cli.vault, versioning: "staggered")
        (r, sync) = try Self.status(cli, home: home)
        #expect(r.out.contains("file versioning \"staggered\""), "\(r.out)")
        let warnings = r.stderr.split(separator: "\n").filter { $0.hasPrefix("nu11vlt: warning: Syncthing keeps old copies") }
        #expect(warnings.count == 1 && warnings[0].contains(cli.vault + "/.stversions") && warnings[0].contains("hint:")
                && warnings[0].contains("recovery phrase"), "\(r.stderr)")
        #expect(sync?["versioning"] as? String == "staggered" && sync?["keptVersions"] as? Int == 0, "\(String(describing: sync))")

        // Versioning turned off again, with old copies left: still a warning, counting them.
        try FileManager.default.removeItem(atPath: home)
        try Self.configure(cli, home: home, folder: cli.vault, versioning: "")
        let kept = cli.vault + "/.stversions/Meta"
        try FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: true)
        for name in ["a~20261129-101010.n11m", "b~20261129-101011.n11m"] { FileManager.default.createFile(atPath: kept + "/" + name, contents: Data([1])) }
        (r, sync) = try Self.status(cli, home: home)
        #expect(r.stderr.contains("Syncthing keeps old copies") && r.stderr.contains("2 of this vault's files there now"), "\(r.stderr)")
        #expect(sync?["keptVersions"] as? Int == 2, "\(String(describing: sync))")
    }

    @Test("what the versioning warning says is true: a deleted item's files, put back from a peer's .stversions, open with the recovery phrase — never with the PIN")
    func versionsOpenWithThePhrase() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let kept = try cli.importIDs([cli.file("kept.txt", Array("kept".utf8))])[0]
        let gone = try cli.importIDs([cli.file("secret.txt", Array("deleted but versioned".utf8))])[0]
        // What another device's Syncthing moves into .stversions when this device deletes it.
        let versions = cli.root + "/stversions"
        let files = (FileManager.default.enumerator(atPath: cli.vault)?.allObjects as? [String] ?? []).filter { $0.contains(gone) }
        #expect(!files.isEmpty, "no file names item \(gone)")
        for rel in files {
            try FileManager.default.createDirectory(atPath: versions + "/" + (rel as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: cli.vault + "/" + rel, toPath: versions + "/" + rel)
        }
        #expect(try cli.run(["delete", gone], pinStdin: true).code == 0)
        // The old copies come back into the folder (a peer, or the owner restoring them).
        for rel in files { try FileManager.default.copyItem(atPath: versions + "/" + rel, toPath: cli.vault + "/" + rel) }
        let withPIN = try cli.run(["export", gone, "-o", "-"], pinStdin: true)
        #expect(withPIN.code != 0 && withPIN.stdout.isEmpty, "the PIN opened a deleted item from its old copies")
        // The phrase, on a new key store, opens them.
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/old-keystore")
        let r = try cli.recover(phrase: phrase, newPIN: "recovered pin")
        #expect(r.code == 0, "recover: \(r.stderr)")
        #expect(try cli.with("recovered pin", ["export", kept, "-o", "-"]).stdout == Data("kept".utf8))
        #expect(try cli.with("recovered pin", ["export", gone, "-o", "-"]).stdout == Data("deleted but versioned".utf8),
                "the deleted item's old copies did not open with the phrase: the warning would overstate")
    }

    @Test("a vault in a subfolder of the Syncthing folder: its own .stignore is not read, so status names the lines the root's lacks; once added, no warning")
    func nested() throws {
        let cli = try CLI()
        let home = cli.root + "/home"
        let synced = cli.root + "/Sync"
        let vault = synced + "/Private/vault"
        try FileManager.default.createDirectory(atPath: synced + "/Private", withIntermediateDirectories: true)
        try Self.configure(cli, home: home, folder: synced, versioning: "")
        cli.environment["NU11VLT_VAULT"] = vault
        // init warns as status does, as soon as the vault is made there.
        let made = try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true,
                               environment: ["HOME": home, "XDG_CONFIG_HOME": "", "XDG_STATE_HOME": ""])
        #expect(made.code == 0 && made.stderr.contains("would sync this device's own files"), "init: \(made.stderr)")
        var (r, sync) = try Self.status(cli, home: home)
        #expect(r.out.contains("this vault in it as Private/vault"), "\(r.out)")
        let wanted = ["/Private/vault/index.sqlite*", "/Private/vault/.lock", "/Private/vault/CACHEDIR.TAG", "(?d).n11tmp-*"]
        #expect(sync?["missingIgnores"] as? [String] == wanted, "\(String(describing: sync))")
        let warning = r.stderr.split(separator: "\n").first { $0.contains("would sync this device's own files") }
        #expect(warning.map { w in wanted.allSatisfy { w.contains("`\($0)`") } && w.contains(synced + "/.stignore") && w.contains("hint:") } == true,
                "\(r.stderr)")
        // The owner adds the lines (one of them through an #include): the warning goes.
        try "// mine\n*.tmp\n#include .stglobalignore\n/Private/vault/index.sqlite*\n/Private/vault/.lock\n".write(toFile: synced + "/.stignore", atomically: true, encoding: .utf8)
        try "/Private/vault/CACHEDIR.TAG\n(?d).n11tmp-*\n".write(toFile: synced + "/.stglobalignore", atomically: true, encoding: .utf8)
        (r, sync) = try Self.status(cli, home: home)
        #expect(!r.stderr.contains("would sync"), "\(r.stderr)")
        #expect(sync?["missingIgnores"] as? [String] == [], "\(String(describing: sync))")
    }

    @Test("outside any Syncthing folder (the defaults' template folder, path ~ with versioning, is not one): no sync line, sync null, no warning; a .stfolder marker alone is one")
    func outside() throws {
        let cli = try CLI()
        let home = cli.root
        try cli.initVault()
        try Self.configure(cli, home: home, folder: cli.root + "/elsewhere", versioning: "simple")
        var (r, sync) = try Self.status(cli, home: home)
        #expect(!r.out.contains("sync ") && !r.stderr.contains("Syncthing"), "\(r.out) \(r.stderr)")
        #expect(sync == nil, "\(String(describing: sync))")

        // No config names it, but Syncthing's marker is above it, with old copies beside.
        try FileManager.default.createDirectory(atPath: cli.root + "/.stfolder", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: cli.root + "/.stversions/vault/Vault/Photos", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: cli.root + "/.stversions/vault/Vault/Photos/x~20261129-101010.n11", contents: Data([1]))
        (r, sync) = try Self.status(cli, home: home)
        #expect(r.out.contains("Syncthing folder (\(cli.root), this vault in it as vault); file versioning unknown"), "\(r.out)")
        #expect(r.stderr.contains("Syncthing keeps old copies") && r.stderr.contains("1 of this vault's files"), "\(r.stderr)")
        #expect(r.stderr.contains("would sync"), "the root has no .stignore: \(r.stderr)")
    }

    @Test("files a sync peer or another process can write around the folder: a path with glob characters is escaped, a negation before the lines counts them missing, an include outside the folder or over 256 KiB is not read, and a config with comments, spaced or single-quoted attributes is read as Syncthing reads it")
    func hostileSurroundings() throws {
        let cli = try CLI()
        let home = cli.root + "/home"
        let synced = cli.root + "/Sync"
        let vault = synced + "/Photos [2024]/vault"
        try FileManager.default.createDirectory(atPath: synced + "/Photos [2024]", withIntermediateDirectories: true)
        try Self.configure(cli, home: home, folder: synced, versioning: "")
        cli.environment["NU11VLT_VAULT"] = vault
        _ = try cli.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"], pinStdin: true, environment: ["HOME": home])
        var (r, sync) = try Self.status(cli, home: home)
        let escaped = #"/Photos \[2024\]/vault"#
        let wanted = ["\(escaped)/index.sqlite*", "\(escaped)/.lock", "\(escaped)/CACHEDIR.TAG", "(?d).n11tmp-*"]
        #expect(sync?["missingIgnores"] as? [String] == wanted, "the vault's name read as a glob: \(String(describing: sync))")
        // Lines present, but a negation Syncthing meets first (from an include a peer synced).
        try ("#include .peer\n" + wanted.joined(separator: "\n") + "\n").write(toFile: synced + "/.stignore", atomically: true, encoding: .utf8)
        try "!\(escaped)/index.sqlite*\n".write(toFile: synced + "/.peer", atomically: true, encoding: .utf8)
        (r, sync) = try Self.status(cli, home: home)
        #expect(!((sync?["missingIgnores"] as? [String]) ?? []).isEmpty && r.stderr.contains("would sync"), "a negation ahead was not seen: \(String(describing: sync))")
        // The lines only in an include outside the folder, or in one over 256 KiB: not read.
        let outside = cli.root + "/outside-ignore"
        try (wanted.joined(separator: "\n") + "\n").write(toFile: outside, atomically: true, encoding: .utf8)
        try (wanted.joined(separator: "\n") + "\n" + String(repeating: "// padding\n", count: 30_000)).write(toFile: synced + "/.big", atomically: true, encoding: .utf8)
        try "#include ../outside-ignore\n#include .big\n".write(toFile: synced + "/.stignore", atomically: true, encoding: .utf8)
        let started = Date()
        (r, sync) = try Self.status(cli, home: home)
        #expect((sync?["missingIgnores"] as? [String]) == wanted, "an include outside the folder or too large was read: \(String(describing: sync))")
        #expect(Date().timeIntervalSince(started) < 10)
        // A config as a person or another program may write it: a comment holding a fake folder
        // first, attributes spaced, on lines of their own, single-quoted; an empty <versioning>
        // before the one that counts.
        let config = home + "/.config/syncthing/config.xml"
        let xml = """
            <configuration version="37">
                <!-- <folder id="x" label="FAKE" path="\(synced)"><versioning type=""></versioning></folder> -->
                <folder id = 'n11'
                        label = 'Real'
                        path = '\(synced)'>
                    <versioning></versioning>
                    <versioning type = "staggered"><fsPath></fsPath></versioning>
                </folder>
            </configuration>
            """
        try xml.write(toFile: config, atomically: true, encoding: .utf8)
        (r, sync) = try Self.status(cli, home: home)
        #expect(sync?["label"] as? String == "Real" && sync?["versioning"] as? String == "staggered", "\(String(describing: sync))")
        #expect(r.stderr.contains("Syncthing keeps old copies"), "\(r.stderr)")
    }
}
