// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 57, tamper evidence as a class: every KIND of audit-log entry the sources can write is
/// made once through the CLI with distinctive names (files, albums, notes, output paths), then
/// the decrypted log and the raw files of the key store are scanned for those names. A kind the
/// sources gain that this table does not name fails the test (so a new entry kind cannot slip
/// past the scan); a device journal that no longer opens must leave a "damaged" entry.
@Suite("audit log: every entry kind against the forbidden fields")
struct AuditKindsTests {
    /// Kinds this test does not make, each with where it is made and why not here.
    static let madeElsewhere: [String: String] = [
        "tpm enroll": "needs swtpm (TPM/)",
        "tpm remove": "needs swtpm (TPM/)",
        "tpm recover": "needs swtpm (TPM/)",
        "state counter ahead": "needs swtpm: the TPM's counter (TPM/)",
        "TPM counter missing": "needs swtpm: the TPM's counter (TPM/)",
        "log rolled back": "needs swtpm: the log mark under the TPM's counter (TPM/)",
        "security key enroll": "needs the software authenticator (SecurityKeys/)",
        "security key remove": "needs the software authenticator (SecurityKeys/)",
        "wrong security key": "needs the software authenticator (SecurityKeys/)",
        "recover": "a rebuilt key store's first entry (RecoveryTests)",
        "recover finished": "a recovery cut short (RecoverPartialTests)",
        "rekey finished": "a rotation cut short (RotationKillTests)",
        "sidecars written": "an index made before sidecars (IndexRebuildTests)",
        "log re-keyed": "an archive key rotation's log move (ArchiveKeyRotationTests)",
        "agent-refused": "a process of another user at the unlock agent's socket (AgentTests)",
    ]

    /// Every audit event kind named in the sources: `audit("…"`, `event: "…"` and the
    /// `let event = … ? "…" : "…"` of the wrong-credential journal entry.
    static func kindsInSources() throws -> Set<String> {
        var kinds = Set<String>()
        for folder in ["Sources/Nu11Vault", "Sources/nu11vlt", "Sources/nu11vlt-app"] {
            let root = Repo.path(folder)
            guard let walker = FileManager.default.enumerator(atPath: root) else { continue }
            for case let file as String in walker where file.hasSuffix(".swift") {
                let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let s = String(line)
                    if s.trimmingCharacters(in: .whitespaces).hasPrefix("//") || s.contains("func audit") { continue }
                    for anchor in ["audit(", "event: ", "let event = "] {
                        var rest = s[...]
                        while let r = rest.range(of: anchor) {
                            var span = rest[r.upperBound...]
                            // Up to the first comma outside a string literal.
                            var inString = false
                            var end = span.endIndex
                            for i in span.indices {
                                if span[i] == "\"" { inString.toggle() } else if span[i] == "," && !inString { end = i; break }
                            }
                            span = span[..<end]
                            let literals = span.split(separator: "\"", omittingEmptySubsequences: false)
                            for (n, part) in literals.enumerated() where n % 2 == 1 { kinds.insert(String(part)) }
                            rest = rest[r.upperBound...]
                        }
                    }
                }
            }
        }
        return kinds
    }

    func entries(_ cli: CLI, pin: String) throws -> (kinds: Set<String>, text: String) {
        // Through `run`, so a clock moved ahead (faketime) applies to it too.
        let r = try cli.run(["log", "--json", "--pin-stdin"], stdin: Data((pin + "\n").utf8))
        #expect(r.code == 0, "log: \(r.stderr)")
        let all = ((try? JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
        return (Set(all.compactMap { $0["event"] as? String }), r.out)
    }

    func ok(_ r: CLI.Outcome, _ what: String) {
        #expect(r.code == 0, "\(what): \(r.stderr)")
    }

    @Test("every entry kind, made once through the CLI with distinctive names: none of the names, titles or paths in the decrypted log or the raw files; an unlisted kind fails")
    func everyKind() throws {
        let sourceKinds = try Self.kindsInSources()
        // The scan itself must see the kinds it is meant to see.
        for known in ["import", "export", "thumbnail export", "note add", "device journal damaged", "wrong PIN", "fade expired", "warning"] {
            #expect(sourceKinds.contains(known), "the source scan missed \(known): \(sourceKinds.sorted())")
        }
        let cli = try CLI()
        let m = "AUDK" + UUID().uuidString.prefix(8)
        try cli.initVault()
        ok(try cli.run(["album", "create", m + "-album"], pinStdin: true), "album create")
        let photo = cli.root + "/\(m)-photo.jpg"
        try #require(Program.run("/usr/bin/convert", ["-size", "64x48", "plasma:fractal", photo]) == 0, "ImageMagick")
        let ids = try cli.importIDs([photo, cli.file(m + "-two.bin", Array((m + " content").utf8))], extra: ["--album", m + "-album"])
        // A single item through the one-item path (stdin, named), and a single file alone.
        let one = try cli.runPinFD(["import", "--name", m + "-stdin.bin", "-"], stdin: Data("single \(m)".utf8))
        ok(one, "import -")
        let single = try cli.importIDs([cli.file(m + "-single.bin", [1, 2, 3])])[0]
        let outs = cli.root + "/\(m)-out"
        try FileManager.default.createDirectory(atPath: outs, withIntermediateDirectories: true)
        ok(try cli.run(["export", ids[1], "-o", outs + "/\(m)-one.bin"], pinStdin: true), "export one")
        ok(try cli.run(["export", "--album", m + "-album", "-o", outs], pinStdin: true), "export album")
        ok(try cli.run(["thumbnail", ids[0], "-o", outs + "/\(m)-thumb.jpg"], pinStdin: true), "thumbnail")
        ok(try cli.run(["rotate", ids[0]], pinStdin: true), "rotate")
        let note = try cli.runPinFD(["note", "add", "--title", m + "-title"], stdin: Data("\(m) body".utf8))
        ok(note, "note add")
        let noteID = note.out.trimmingCharacters(in: .whitespacesAndNewlines)
        ok(try cli.run(["note", "show", noteID], pinStdin: true), "note show")
        ok(try cli.runPinFD(["note", "edit", noteID, "--title", m + "-title2"], stdin: Data("\(m) body 2".utf8)), "note edit")
        let faded = try cli.run(["fade", "set", single, "1h"], pinStdin: true)
        ok(faded, "fade set")
        let fadeID = String(faded.out.prefix(32))
        ok(try cli.run(["fade", "set", fadeID, "off"], pinStdin: true), "fade cancel")
        ok(try cli.run(["settings", "set", "fade.default", "2h"], pinStdin: true), "settings set")
        ok(try cli.run(["archive", "export", "--secure", "-o", outs + "/\(m).nu11vlt", "--album", m + "-album"], pinStdin: true), "archive export")
        ok(try cli.run(["archive", "import", outs + "/\(m).nu11vlt"], pinStdin: true), "archive import")
        // A share to the vault's own classical recipient, its item deleted, then the share imported.
        let me = try cli.run(["identity", "--classical"], pinStdin: true)
        ok(me, "identity")
        let shared = try cli.importIDs([cli.file(m + "-shared.bin", Array((m + " shared").utf8))])[0]
        ok(try cli.run(["share", "--to", me.out.trimmingCharacters(in: .whitespacesAndNewlines), shared, "-o", outs + "/\(m).age"],
                       pinStdin: true), "share")
        ok(try cli.run(["delete", shared], pinStdin: true), "delete the shared item")
        ok(try cli.run(["import", outs + "/\(m).age"], pinStdin: true), "share import")
        ok(try cli.run(["delete", ids[1]], pinStdin: true), "delete")
        ok(try cli.run(["check"], pinStdin: true), "check")
        ok(try cli.run(["check", "--repair"], pinStdin: true), "check --repair")
        ok(try cli.run(["rekey"], pinStdin: true), "rekey")
        ok(try cli.run(["rekey", "--content"], pinStdin: true), "rekey --content")
        ok(try cli.run(["recovery", "setup"], pinStdin: true), "recovery setup")
        ok(try cli.spawn(CLI.binary, ["pin", "set-backup", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(cli.pin)\n\(m)-backup-pin\n".utf8)), "set-backup")
        ok(try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(cli.pin)\n\(m)-new-pin\n".utf8)), "pin change")
        ok(try cli.spawn(CLI.binary, ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: Data("\(m)-new-pin\n\(cli.pin)\n".utf8)), "pin change back")
        ok(try cli.run(["skeleton", "enable", "--interval", "7d"], pinStdin: true), "skeleton enable")
        ok(try cli.run(["list"], pinStdin: true), "list (a check-in)")
        ok(try cli.run(["skeleton", "disable"], pinStdin: true), "skeleton disable")

        // Two devices (FORMAT.md § 9.6), their names distinctive: a pairing, a join, an item
        // taken in from the other device, then deleted there.
        let code = try DeviceTests.pair(cli, name: m + "-laptop")
        let b = try CLI(pin: m + "-phone-pin")
        try DeviceTests.sync(cli.vault, b.vault)
        ok(try DeviceTests.add(b, code: code, name: m + "-phone"), "device add")
        let fromB = try b.importIDs([b.file(m + "-from-phone.bin", [7, 7])])[0]
        try DeviceTests.sync(b.vault, cli.vault)
        ok(try cli.run(["list"], pinStdin: true), "list (takes in the phone's item)")
        ok(try b.run(["delete", fromB], pinStdin: true), "delete on the phone")
        try DeviceTests.sync(b.vault, cli.vault)
        ok(try cli.run(["list"], pinStdin: true), "list (the phone's delete)")
        let phone = try entries(b, pin: b.pin)

        // The device journal: a wrong PIN, then the journal no longer opens (one byte flipped):
        // the next unlock must say so ("device journal damaged"), never drop it silently.
        #expect(try cli.with(m + "-wrong-pin", ["list"]).code != 0)
        let journal = cli.keystore + "/log/device.n11l"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: journal)))
        bytes[bytes.count / 2] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: journal))
        let damaged = try entries(cli, pin: cli.pin)
        #expect(damaged.kinds.contains("device journal damaged"), "a journal that no longer opens was dropped without a trace: \(damaged.kinds.sorted())")
        // Written to again: it starts over and says so, and the wrong PIN after it is folded in.
        #expect(try cli.with(m + "-wrong-pin", ["list"]).code != 0)
        ok(try cli.run(["list"], pinStdin: true), "list")

        // Before the PIN: a fade item expires and the device state goes missing (the gate's warning).
        _ = try cli.importIDs([cli.file(m + "-fade.bin", [9])], extra: ["--fade", "2s"])
        cli.clockAhead = "+30m"
        ok(try cli.run(["sweep"]), "sweep")
        try FileManager.default.removeItem(atPath: cli.keystore + "/state.n11s")
        ok(try cli.run(["sweep"]), "sweep after the state was deleted")
        cli.clockAhead = "+3h"  // past the hour the missing state imposes

        let laptop = try entries(cli, pin: cli.pin)
        let made = (kinds: laptop.kinds.union(phone.kinds), text: laptop.text + phone.text)
        let excluded = Set(Self.madeElsewhere.keys)
        let unlisted = sourceKinds.subtracting(made.kinds).subtracting(excluded)
        #expect(unlisted.isEmpty, "audit entry kinds neither made by this test nor listed in madeElsewhere (add them to one or the other): \(unlisted.sorted())")
        let stale = excluded.subtracting(sourceKinds)
        #expect(stale.isEmpty, "madeElsewhere names kinds the sources no longer write: \(stale.sorted())")
        #expect(!made.text.contains(m), "a decrypted log entry carries a name, title or path: \(made.text.split(separator: "\n").filter { $0.contains(m) })")
        #expect(!damaged.text.contains(m))
        let backupLog = try cli.run(["log", "--json", "--pin-stdin"], stdin: Data((m + "-backup-pin\n").utf8))
        #expect(backupLog.code == 0 && !backupLog.out.contains(m), "\(backupLog.stderr)")
        let scan = try cli.spawn("/bin/grep", ["-rlaF", m, cli.keystore])
        #expect(scan.out.isEmpty && scan.code == 1, "a name reached the key store's files: \(scan.out)")
    }
}
