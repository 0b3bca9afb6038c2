// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 57, secondary read paths as a class: every way the CLI reads an item (listings, text
/// and JSON, by date, with tiles; export of one, all, by date; view; thumbnails; archives; the
/// shell; notes) against an expired Fade photo and an expired Fade note — each path on a fresh
/// copy of the same vault, since the first path that meets the item destroys it. The item is
/// expired the way only the read-time check can see: its schedule entry is gone (the device
/// state put back from before it was imported), so no start-up sweep removes it first.
/// `nu11vlt --help`'s commands are each either a read path here or named as not one, so a new
/// command fails this test until it is placed.
@Suite("every read path against an expired Fade item")
struct FadeReadPathsTests {
    /// Commands that read no item's content, name or thumbnail, with why.
    static let notReadPaths: [String: String] = [
        "init": "makes a vault", "import": "writes items", "delete": "destroys items", "album": "album names only; fade items are never in an album",
        "sweep": "the sweep itself", "wipe": "destroys everything", "settings": "settings only", "pin": "credentials",
        "skeleton": "the switch", "checkin": "the switch", "log": "the audit log (IDs only; AuditKindsTests)", "tpm": "credentials",
        "recovery": "credentials", "recover": "rebuilds a key store", "backup": "markers", "fido2": "credentials",
        "status": "counts only", "rekey": "re-wraps keys (rekey --content re-encrypts, checked in FadeNotesTests)",
        "check": "verifies files (names no item's name)", "help": "help",
        "identity": "prints the vault's own age recipients (no item)", "unlock": "starts the agent, which runs the commands tried here",
        "lock": "ends the agent",
        "device": "pairs devices: key files of the primary vault's items only (a move into Fade removes one, DeviceTests), device names",
    ]

    struct Setup {
        let cli: CLI
        let fadeID: String
        let noteID: String
        let marker: String
        let snapshot: String
        /// An age recipient and the key file that opens what is shared to it (age-keygen's).
        let recipient: String
        let ageKey: String
    }

    /// A vault with a kept photo, a Fade photo and a Fade note, whose schedule is then put back
    /// to before the Fade ones existed; copied aside so each path starts from the same state.
    func setUp() throws -> Setup {
        let cli = try CLI()
        try cli.initVault()
        let marker = "FADEPATH" + UUID().uuidString.prefix(6)
        let keep = cli.root + "/keep.jpg", fade = cli.root + "/\(marker).jpg"
        for (path, seed) in [(keep, "1"), (fade, "2")] {
            try #require(Program.run("/usr/bin/convert", ["-seed", seed, "-size", "64x48", "plasma:fractal", path]) == 0, "ImageMagick")
        }
        _ = try cli.importIDs([keep])
        let state = cli.keystore + "/state.n11s"
        let before = try Data(contentsOf: URL(fileURLWithPath: state))
        let fadeID = try cli.importIDs([fade], extra: ["--fade", "1h"])[0]
        let note = try cli.runPinFD(["note", "add", "--title", marker + "-title", "--fade", "1h"], stdin: Data("\(marker) body".utf8))
        #expect(note.code == 0, "\(note.stderr)")
        let noteID = note.out.trimmingCharacters(in: .whitespacesAndNewlines)
        try before.write(to: URL(fileURLWithPath: state))
        let snapshot = cli.root + "/snapshot"
        try FileManager.default.createDirectory(atPath: snapshot, withIntermediateDirectories: true)
        #expect(try cli.spawn("/bin/cp", ["-a", cli.vault, cli.keystore, snapshot]).code == 0)
        let ageKey = cli.root + "/age-key.txt"
        let keygen = try cli.spawn("/usr/bin/age-keygen", ["-o", ageKey])
        let recipient = try #require(keygen.stderr.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) },
                                     "age-keygen: \(keygen.stderr)")
        return Setup(cli: cli, fadeID: fadeID, noteID: noteID, marker: marker, snapshot: snapshot, recipient: recipient, ageKey: ageKey)
    }

    func restore(_ s: Setup) throws {
        let r = try s.cli.spawn("/bin/sh", ["-c", "rm -rf \"$0\" \"$1\" && cp -a \"$2/vault\" \"$2/keystore\" \"$3\"",
                                            s.cli.vault, s.cli.keystore, s.snapshot, s.cli.root])
        #expect(r.code == 0, "restore: \(r.stderr)")
    }

    /// One read path: its command line, the environment it needs, and whether it names the
    /// item itself (then it must fail), or reads many (then it must succeed without it).
    struct ReadPath {
        let name: String
        let args: (Setup) -> [String]
        var environment: [String: String] = [:]
        var namesTheItem = false
        var input: String?
        /// Files it wrote (a folder or a file), to be searched too.
        var output: ((Setup) -> String)?
    }

    static var paths: [ReadPath] { [
        ReadPath(name: "list", args: { _ in ["list"] }),
        ReadPath(name: "list --json", args: { _ in ["list", "--json"] }),
        ReadPath(name: "list --all --sort taken", args: { _ in ["list", "--all", "--sort", "taken"] }),
        ReadPath(name: "list --taken-from", args: { _ in ["list", "--taken-from", "2000-01-01", "--json"] }),
        ReadPath(name: "list --thumbnails", args: { _ in ["list", "--thumbnails"] }, environment: ["TERM": "xterm-kitty"]),
        ReadPath(name: "export ID", args: { s in ["export", s.fadeID, "-o", "-"] }, namesTheItem: true),
        ReadPath(name: "export ID to a file", args: { s in ["export", s.fadeID, "-o", s.cli.root + "/one.out"] }, namesTheItem: true,
                 output: { s in s.cli.root + "/one.out" }),
        ReadPath(name: "export --all", args: { s in ["export", "--all", "-o", s.cli.root + "/all"] }, output: { s in s.cli.root + "/all" }),
        ReadPath(name: "export --taken-from", args: { s in ["export", "--taken-from", "2000-01-01", "-o", s.cli.root + "/dated"] },
                 output: { s in s.cli.root + "/dated" }),
        ReadPath(name: "view --inline", args: { s in ["view", "--inline", s.fadeID] }, environment: ["TERM": "xterm-kitty"], namesTheItem: true),
        ReadPath(name: "view (viewer)", args: { s in ["view", "--no-inline", s.fadeID] }, environment: ["NU11VLT_VIEWER": "/bin/cat"], namesTheItem: true),
        ReadPath(name: "thumbnail (grid)", args: { s in ["thumbnail", s.fadeID, "-o", "-"] }, namesTheItem: true),
        ReadPath(name: "thumbnail (preview)", args: { s in ["thumbnail", s.fadeID, "--size", "preview", "-o", "-"] }, namesTheItem: true),
        ReadPath(name: "thumbnails (backfill)", args: { _ in ["thumbnails", "--missing"] }),
        ReadPath(name: "rotate", args: { s in ["rotate", s.fadeID] }, namesTheItem: true),
        ReadPath(name: "fade set", args: { s in ["fade", "set", s.fadeID, "2h"] }, namesTheItem: true),
        ReadPath(name: "fade set off", args: { s in ["fade", "set", s.fadeID, "off"] }, namesTheItem: true),
        ReadPath(name: "archive export", args: { s in ["archive", "export", "--secure", "-o", s.cli.root + "/a.nu11vlt"] },
                 output: { s in s.cli.root + "/a.nu11vlt" }),
        ReadPath(name: "note list", args: { _ in ["note", "list", "--json"] }),
        ReadPath(name: "note show", args: { s in ["note", "show", s.noteID] }, namesTheItem: true),
        ReadPath(name: "share ID", args: { s in ["share", "--to", s.recipient, s.fadeID, "-o", s.cli.root + "/one.age"] },
                 namesTheItem: true, output: { s in s.cli.root + "/one.age" }),
        ReadPath(name: "share --taken-from", args: { s in ["share", "--to", s.recipient, "--taken-from", "2000-01-01", "-o", s.cli.root + "/dated.age"] },
                 output: { s in s.cli.root + "/dated.age" }),
        ReadPath(name: "shell", args: { _ in ["shell"] }, input: "list\nthumbnail {ID} -o -\nexport {ID} -o -\nnote list\n"),
    ] }

    /// The first words of `nu11vlt --help`'s subcommands.
    func commands(_ cli: CLI) throws -> [String] {
        let help = try cli.run(["--help"]).out
        guard let start = help.range(of: "SUBCOMMANDS:") else { return [] }
        return help[start.upperBound...].split(separator: "\n").compactMap { line in
            guard line.hasPrefix("  "), !line.hasPrefix("      "), !line.hasPrefix("  See "),
                  let word = line.split(separator: " ").first else { return nil }
            return String(word)
        }
    }

    @Test("list (text, JSON, by date, tiles), export (one, all, by date), view, thumbnail, backfill, fade set, archive export, notes, shell: none shows an expired Fade item, its name, content or thumbnail; every command is placed")
    func everyReadPath() throws {
        let s = try setUp()
        let fadeBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: s.cli.root + "/\(s.marker).jpg")))
        let covered = Set(Self.paths.map { String($0.name.split(separator: " ")[0]) })
        let listed = try commands(s.cli)
        #expect(listed.count > 20, "could not read the commands from --help: \(listed)")
        let unplaced = listed.filter { !covered.contains($0) && Self.notReadPaths[$0] == nil }
        #expect(unplaced.isEmpty, "commands neither tried as a read path here nor named in notReadPaths: \(unplaced)")

        for path in Self.paths {
            try restore(s)
            let args = path.args(s)
            let r: CLI.Outcome
            if let input = path.input {
                let lines = input.replacingOccurrences(of: "{ID}", with: s.fadeID)
                r = try s.cli.runPinFD(args, stdin: Data(lines.utf8))
            } else {
                r = try s.cli.run(args, pinStdin: true, environment: path.environment)
            }
            let out = r.stdout
            if path.namesTheItem {
                #expect(r.code != 0, "\(path.name): an expired Fade item was read (exit 0)")
            } else {
                #expect(r.code == 0, "\(path.name): \(r.stderr)")
            }
            #expect(!r.out.contains(s.fadeID) && !r.out.contains(s.noteID), "\(path.name) shows the expired item's ID: \(r.out.prefix(600))")
            #expect(!r.out.contains(s.marker) && !r.stderr.contains(s.marker), "\(path.name) shows the expired item's name, title or body")
            #expect(out.range(of: Data(fadeBytes.prefix(4096))) == nil, "\(path.name) wrote the expired photo's content")
            if path.namesTheItem && path.input == nil {
                #expect(out.isEmpty, "\(path.name) wrote \(out.count) bytes of an expired item")
            }
            if let output = path.output?(s) {
                let found = try s.cli.spawn("/bin/sh", ["-c", "find \"$0\" -type f 2>/dev/null | xargs -r grep -laF \"$1\"; find \"$0\" -name \"*$1*\" 2>/dev/null; true",
                                                        output, s.marker])
                #expect(found.out.isEmpty, "\(path.name) wrote the expired item: \(found.out)")
                let bytes = try s.cli.spawn("/bin/sh", ["-c", "find \"$0\" -type f -size +0 2>/dev/null | while read f; do cmp -s \"$f\" \"$1\" && echo \"$f\"; done; true",
                                                        output, s.cli.root + "/\(s.marker).jpg"])
                #expect(bytes.out.isEmpty, "\(path.name) exported the expired photo: \(bytes.out)")
                try? FileManager.default.removeItem(atPath: output)
            }
            // Whatever the path did, the item is gone for good after it or stays unreadable.
            let again = try s.cli.run(["export", s.fadeID, "-o", "-"], pinStdin: true)
            #expect(again.code != 0 && again.stdout.isEmpty, "\(path.name): after it, the expired item exports")
        }
        if let archive = Self.paths.first(where: { $0.name == "archive export" }) {
            try restore(s)
            let file = s.cli.root + "/a.nu11vlt"
            #expect(try s.cli.run(archive.args(s), pinStdin: true).code == 0)
            let inspect = try s.cli.run(["archive", "inspect", file])
            #expect(inspect.out.contains("items      1\n"), "the archive holds more than the kept photo: \(inspect.out) \(inspect.stderr)")
        }
        // A share is encrypted: what it holds is read with the recipient's key, as its receiver would.
        try restore(s)
        let share = s.cli.root + "/dated.age"
        let made = try s.cli.run(["share", "--to", s.recipient, "--taken-from", "2000-01-01", "-o", share], pinStdin: true)
        #expect(made.code == 0, "\(made.stderr)")
        let listing = try s.cli.spawn("/bin/sh", ["-c", "/usr/bin/age -d -i \"$0\" \"$1\" | tar -t", s.ageKey, share])
        #expect(listing.code == 0 && listing.out.contains("keep.jpg"), "the share does not hold the kept photo: \(listing.out) \(listing.stderr)")
        #expect(!listing.out.contains(s.marker), "the share holds the expired item: \(listing.out)")
        let plain = try s.cli.spawn("/bin/sh", ["-c", "/usr/bin/age -d -i \"$0\" \"$1\"", s.ageKey, share])
        #expect(plain.stdout.range(of: Data(fadeBytes.prefix(4096))) == nil, "the share holds the expired photo's content")
    }
}
