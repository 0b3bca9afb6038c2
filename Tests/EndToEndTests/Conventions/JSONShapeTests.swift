// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// docs/JSON.md is the contract: every command's `--json` output has exactly the keys its
/// section shows, and every section is exercised.
@Suite("--json output matches docs/JSON.md")
struct JSONShapeTests {
    enum Shape: Equatable {
        case object(Set<String>)
        case array(Set<String>)
    }

    /// command ("note delete") → shape, read from docs/JSON.md.
    static func documented() throws -> [String: Shape] {
        let url = Repo.root.appendingPathComponent("docs/JSON.md")
        let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        var sections: [(heading: String, block: String)] = []
        for line in lines {
            if line.hasPrefix("## ") {
                sections.append((line, ""))
            } else if line.hasPrefix("    "), !sections.isEmpty {
                sections[sections.count - 1].block += line + "\n"
            } else if line.hasPrefix("| `"), sections.last?.heading == "## The item object" {
                // "| `album`, `albumID` | …": every backticked name of the first cell is a key.
                let first = line.split(separator: "|")[0]
                for (i, name) in first.components(separatedBy: "`").enumerated() where i % 2 == 1 {
                    sections[sections.count - 1].block += "\"\(name)\": 0\n"
                }
            }
        }
        func keys(_ block: String, depth wanted: Int) -> Set<String> {
            var out = Set<String>()
            var depth = 0
            var inString = false
            var current = ""
            var pending: String?
            for ch in block {
                if inString {
                    if ch == "\"" { inString = false; pending = current } else { current.append(ch) }
                    continue
                }
                switch ch {
                case "\"": inString = true; current = ""
                case "{", "[": depth += 1; pending = nil
                case "}", "]": depth -= 1; pending = nil
                case ":": if let key = pending, depth == wanted { out.insert(key) }; pending = nil
                case " ", "\n": break
                default: pending = nil
                }
            }
            return out
        }
        var objects: [String: Set<String>] = [:]
        for (heading, block) in sections {
            if heading == "## The item object" { objects["item"] = keys("{" + block.replacingOccurrences(of: "\n", with: ",") + "}", depth: 1) }
            if heading == "## The note object" { objects["note"] = keys(block, depth: 1) }
            if heading == "## The album object" { objects["album"] = keys(block, depth: 1) }
        }
        var out: [String: Shape] = [:]
        for (heading, block) in sections where heading.contains("--json") {
            let text = block.trimmingCharacters(in: .whitespacesAndNewlines)
            let shape: Shape
            if let named = objects[text] {
                shape = .object(named)
            } else if text.hasPrefix("["), let named = objects[String(text.dropFirst().prefix { $0.isLetter })] {
                shape = .array(named)
            } else if text.hasPrefix("[") {
                shape = .array(keys(text, depth: 2))
            } else {
                shape = .object(keys(text, depth: 1))
            }
            let commands = heading.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }
                .map { $0.element.replacingOccurrences(of: " --json", with: "").replacingOccurrences(of: " --missing", with: "") }
            for command in commands { out[command] = shape }
        }
        return out
    }

    static func shape(of data: Data) -> Shape? {
        guard let parsed = try? JSONSerialization.jsonObject(with: data) else { return nil }
        if let object = parsed as? [String: Any] { return .object(Set(object.keys)) }
        if let array = parsed as? [[String: Any]] { return .array(Set(array.first?.keys.map { $0 } ?? [])) }
        return nil
    }

    @Test("every documented command, run with --json, prints the documented keys")
    func shapes() throws {
        let documented = try Self.documented()
        #expect(documented.count >= 35, "docs/JSON.md lists only \(documented.count) commands")
        let cli = try CLI()
        try Data((cli.pin + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/pin"))
        try Data("backup-pin-2\n".utf8).write(to: URL(fileURLWithPath: cli.root + "/bpin"))
        var seen = Set<String>()
        /// Runs `nu11vlt args… --json` with the PIN (file `pinFile`) on descriptor 3 and `extra`
        /// shell redirections; checks the output's keys against the section of `command`.
        @discardableResult
        func check(_ command: String, _ args: [String], pinFile: String? = "pin", extra: String = "", stdin: Data = Data()) throws -> [String: Any] {
            let pinPart = pinFile.map { " --pin-fd 3 3<\"$ROOT/\($0)\"" } ?? ""
            let r = try cli.spawn("/bin/sh", ["-c", "ROOT=\"$0\"; exec \"$@\" --json\(pinPart) \(extra)", cli.root, CLI.binary] + args,
                                  input: stdin)
            #expect(r.code == 0, "\(command): \(r.stderr)")
            let expected = try #require(documented[command], "docs/JSON.md has no section for \(command)")
            #expect(Self.shape(of: r.stdout) == expected, "\(command): printed \(r.out), documented \(expected)")
            seen.insert(command)
            return (try? JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]) ?? [:]
        }
        let photo = cli.file("p.jpg", Array(FaultTests.payload))
        try check("init", ["init", "--kdf-memory", "19", "--kdf-iterations", "2"], extra: "")
        try check("status", ["status"], pinFile: nil)
        let imported = try cli.spawn("/bin/sh", ["-c", "exec \"$1\" import \"$2\" --json --pin-fd 3 3<\"$0/pin\"", cli.root, CLI.binary, photo])
        #expect(Self.shape(of: imported.stdout) == documented["import"], "import: \(imported.out)")
        seen.insert("import")
        let id = try #require((try JSONSerialization.jsonObject(with: imported.stdout) as? [[String: Any]])?.first?["id"] as? String)
        try check("list", ["list"])
        try check("export", ["export", id, "-o", cli.root + "/out.jpg"])
        try check("export -o FOLDER", ["export", "--all", "-o", cli.root + "/out-folder"])
        let identity = try check("identity", ["identity"])
        try check("share", ["share", "--to", try #require(identity["postQuantum"] as? String), "-o", cli.root + "/s.age", id])
        try check("album create", ["album", "create", "Trip"])
        try check("album list", ["album", "list"])
        try check("album move", ["album", "move", "--to", "Trip", id])
        try check("album rename", ["album", "rename", "Trip", "Journey"])
        try check("album delete", ["album", "delete", "Journey", "--items", "photos"])
        let note = try check("note add", ["note", "add", "--title", "memo"], stdin: Data("body".utf8))
        let noteID = try #require(note["id"] as? String)
        try check("note list", ["note", "list"])
        try check("note show", ["note", "show", noteID])
        let edited = try check("note edit", ["note", "edit", noteID], stdin: Data("new body".utf8))
        try check("note delete", ["note", "delete", try #require(edited["id"] as? String)])
        let faded = try check("fade set", ["fade", "set", id, "1h"])
        let fadedID = try #require(faded["id"] as? String)
        try check("fade set", ["fade", "set", fadedID, "off"])
        try check("thumbnails", ["thumbnails", "--missing"])
        try check("check", ["check"])
        try check("rekey", ["rekey"])
        try check("log", ["log"])
        try check("settings list", ["settings", "list"], pinFile: nil)
        try check("settings get", ["settings", "get", "deletion.mode"], pinFile: nil)
        try check("settings set", ["settings", "set", "deletion.mode", "standard"])
        try check("sweep", ["sweep"], pinFile: nil)
        try check("skeleton enable", ["skeleton", "enable", "--interval", "7d"])
        try check("skeleton status", ["skeleton", "status"], pinFile: nil)
        try check("checkin", ["checkin"])
        try check("skeleton disable", ["skeleton", "disable"])
        try check("pin set-backup", ["pin", "set-backup", "--new-pin-fd", "4"], extra: "4<\"$ROOT/bpin\"")
        try Data("duress-pin-3\n".utf8).write(to: URL(fileURLWithPath: cli.root + "/dpin"))
        try check("pin set-duress", ["pin", "set-duress", "--new-pin-fd", "4"], pinFile: "bpin", extra: "4<\"$ROOT/dpin\"")
        try Data("violet quartz tulip orbit canyon\n".utf8).write(to: URL(fileURLWithPath: cli.root + "/apw"))
        try check("archive export", ["archive", "export", "--portable", "-o", cli.root + "/a.nu11vlt", "--kdf-memory", "19",
                                     "--kdf-iterations", "2", "--password-fd", "4"], extra: "4<\"$ROOT/apw\"")
        try check("archive inspect", ["archive", "inspect", cli.root + "/a.nu11vlt"], pinFile: nil)
        try check("delete", ["delete", try #require(try cli.listJSON().first?["id"] as? String)])
        try check("archive import", ["archive", "import", cli.root + "/a.nu11vlt", "--password-fd", "4"], extra: "4<\"$ROOT/apw\"")
        // Two devices (FORMAT.md § 9.6): an offer, then a second device joins with the code.
        try check("device pair", ["device", "pair", "--name", "laptop"])
        try Data((try DeviceTests.pair(cli) + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/code"))
        try DeviceTests.sync(cli.vault, cli.root + "/vb")
        try check("device add", ["device", "add", "--vault", cli.root + "/vb", "--keystore", cli.root + "/kb", "--name", "phone",
                                 "--kdf-memory", "19", "--kdf-iterations", "2", "--code-fd", "5"], extra: "5<\"$ROOT/code\"")
        try check("device list", ["device", "list"])
        // A security key (the project's software authenticator), so the listing has a row to show.
        let key = try SoftwareFIDO2()
        #expect(try cli.runWithKey(["fido2", "enroll", "--name", "json key"], key: key, pinStdin: true).code == 0)
        try check("fido2 status", ["fido2", "status"], pinFile: nil)
        try Data("new-primary-9\n".utf8).write(to: URL(fileURLWithPath: cli.root + "/npin"))
        try check("pin change", ["pin", "change", "--new-pin-fd", "4"], extra: "4<\"$ROOT/npin\"")
        try check("tpm status", ["tpm", "status"], pinFile: nil)
        try check("wipe", ["wipe", "--yes"], pinFile: nil)
        #expect(Set(documented.keys).subtracting(seen).isEmpty, "documented but not exercised: \(Set(documented.keys).subtracting(seen).sorted())")
    }
}
