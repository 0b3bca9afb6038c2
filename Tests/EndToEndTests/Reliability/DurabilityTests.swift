// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// A power-loss model over the file-system calls of one command (recorded with strace):
/// after a power cut only what was fsynced survives — a file's content once the file (or
/// its file system, syncfs) was synced, a name (rename, create, unlink) once its folder
/// was. The state a cut would leave at each point must still satisfy the invariants:
///
/// * a file is renamed into place only after its content is durable (else a cut can leave
///   the final name on empty or partial content);
/// * at every commit point (the index's WAL fsync) and when the command ends, every name
///   the command renamed into place is durable (else a cut loses a committed item's key
///   record or file while the index keeps its row);
/// * a file is unlinked only after what was written to it is durable (a secure overwrite
///   fsynced before its unlink, else the cut can leave the old bytes), and when the command
///   ends every unlink is durable: its folder synced after it (else a shredded key record can
///   come back after a cut). SQLite's own -wal, -shm and -journal files are its business;
/// * a key pack (`.n11p`, changed in place) is durable at every commit point and when the
///   command ends (else a cut loses a committed item's key record, or brings back a
///   destroyed one).
enum PowerLossModel {
    struct Violation: CustomStringConvertible {
        let call: Int
        let text: String
        var description: String { "call \(call): \(text)" }
    }

    static func parent(_ path: String) -> String { (path as NSString).deletingLastPathComponent }

    /// The path inside `<…>` after a descriptor (strace -y).
    static func fdPath(_ args: String) -> String? {
        guard let open = args.firstIndex(of: "<"), let close = args[open...].firstIndex(of: ">") else { return nil }
        return String(args[args.index(after: open)..<close])
    }

    static func quoted(_ args: String) -> [String] {
        args.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// strace -f splits a call that another process or thread interrupts into
    /// "pid call(args <unfinished ...>" and "pid <... call resumed>rest"; joins them at the
    /// point where the call returned (its effect), so a busy machine reads like an idle one.
    static func joined(_ trace: String) -> [String] {
        var pending: [Substring: String] = [:]
        var lines: [String] = []
        for raw in trace.split(separator: "\n") {
            let pid = raw.prefix { $0.isNumber }
            let rest = raw.dropFirst(pid.count).drop { $0 == " " }
            if raw.hasSuffix(" <unfinished ...>") {
                pending[pid] = String(rest.dropLast(" <unfinished ...>".count))
            } else if rest.hasPrefix("<... "), let end = rest.range(of: " resumed>") {
                lines.append("\(pid) \(pending.removeValue(forKey: pid) ?? "")\(rest[end.upperBound...])")
            } else {
                lines.append(String(raw))
            }
        }
        return lines
    }

    static func check(trace: String, scope: String) -> [Violation] {
        var dirtyContent = Set<String>()
        var dirtyNames = Set<String>()  // folders with changes not yet durable
        var placed = Set<String>()      // final names this command renamed into place
        var unlinked = Set<String>()    // names this command unlinked, not yet durably gone
        var movedAway = Set<String>()   // old names of cross-folder moves, not yet durably gone
        func sqliteSidecar(_ p: String) -> Bool { ["-wal", "-shm", "-journal"].contains { p.hasSuffix($0) } }
        var violations: [Violation] = []
        let line = try? Regex(#"^\d+\s+(\w+)\((.*)\)\s+=\s+(\d+)"#)
        func commitCheck(_ n: Int, _ what: String) {
            for name in placed.sorted() where dirtyNames.contains(parent(name)) {
                violations.append(Violation(call: n, text: "\(what): \(name) was renamed into place but its folder was not synced"))
            }
            for name in movedAway.sorted() where dirtyNames.contains(parent(name)) {
                violations.append(Violation(call: n, text: "\(what): \(name) was moved to another folder but its own folder was not synced (the old name can come back)"))
            }
            for pack in dirtyContent.sorted() where pack.hasSuffix(".n11p") {
                violations.append(Violation(call: n, text: "\(what): key pack \(pack) was changed in place but not synced"))
            }
        }
        for (n, raw) in joined(trace).enumerated() {
            guard let line, let m = raw.firstMatch(of: line), let call = m.output[1].substring, let argsSub = m.output[2].substring else { continue }
            let args = String(argsSub)
            switch call {
            case "write", "pwrite64", "writev":
                if let p = fdPath(args), p.hasPrefix(scope) { dirtyContent.insert(p) }
            case "openat", "open":
                if args.contains("O_CREAT"), let p = quoted(args).first, p.hasPrefix(scope) { dirtyNames.insert(parent(p)) }
            case "fsync", "fdatasync":
                guard let p = fdPath(args) else { continue }
                dirtyContent.remove(p)
                if dirtyNames.remove(p) != nil {
                    // Every rename into this folder so far is durable now, whatever changes it later.
                    placed = placed.filter { parent($0) != p }
                }
                unlinked = unlinked.filter { parent($0) != p }
                movedAway = movedAway.filter { parent($0) != p }
                if p.hasSuffix("-wal") { commitCheck(n, "at the index commit") }
            case "syncfs":
                dirtyContent.removeAll()
                dirtyNames.removeAll()
                placed.removeAll()
                unlinked.removeAll()
                movedAway.removeAll()
            case "rename", "renameat", "renameat2":
                let paths = quoted(args)
                guard paths.count == 2, paths[1].hasPrefix(scope) else { continue }
                if dirtyContent.contains(paths[0]) {
                    violations.append(Violation(call: n, text: "\(paths[1]) was renamed into place before its content was synced"))
                }
                dirtyContent.remove(paths[0])
                dirtyNames.insert(parent(paths[0]))
                dirtyNames.insert(parent(paths[1]))
                placed.insert(paths[1])
                // A move between folders changes two folders: the old name is gone only once
                // ITS folder is synced too (syncing the destination alone can leave both names).
                if parent(paths[0]) != parent(paths[1]) && paths[0].hasPrefix(scope) { movedAway.insert(paths[0]) }
                movedAway.remove(paths[1])
            case "unlink", "unlinkat":
                if let p = quoted(args).first, p.hasPrefix(scope) {
                    if dirtyContent.remove(p) != nil && !sqliteSidecar(p) {
                        violations.append(Violation(call: n, text: "\(p) was unlinked before what was written to it was synced"))
                    }
                    dirtyNames.insert(parent(p))
                    placed.remove(p)
                    if !sqliteSidecar(p) { unlinked.insert(p) }
                }
            default:
                break
            }
        }
        commitCheck(Int.max, "when the command ended")
        for name in unlinked.sorted() {
            violations.append(Violation(call: Int.max, text: "\(name) was unlinked but its folder was not synced after (it can come back)"))
        }
        return violations
    }
}

@Suite("durability under power loss (a model over the recorded file-system calls)")
struct DurabilityTests {
    func traced(_ cli: CLI, _ label: String, _ command: String) throws -> String {
        let out = cli.root + "/trace-\(label)"
        let r = try cli.spawn("/usr/bin/strace", ["-f", "-qq", "-y", "-s", "0", "-o", out, "-e",
                                                  "trace=openat,open,write,pwrite64,writev,fsync,fdatasync,syncfs,rename,renameat,renameat2,unlink,unlinkat",
                                                  "/bin/sh", "-c", command, CLI.binary])
        #expect(r.code == 0, "\(label): \(r.stderr)")
        return try String(contentsOfFile: out, encoding: .utf8)
    }

    @Test("every writing command leaves only durable renames at its commit points and its end")
    func commands() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "strace is not installed (make test installs it)")
        let cli = try CLI()
        try cli.initVault()
        try Data((cli.pin + "\n").utf8).write(to: URL(fileURLWithPath: cli.root + "/pin"))
        _ = cli.file("a.jpg", Array(repeating: 3, count: 40_000))
        _ = cli.file("b.jpg", [4, 4])
        _ = cli.file("c.jpg", [7])
        let pin = "--pin-fd 3 3<\"$NU11VLT_VAULT/../pin\""
        // 260 files: two commit groups, the first committing on another thread while the
        // second is encrypted (the overlapped commit).
        try FileManager.default.createDirectory(atPath: cli.root + "/many", withIntermediateDirectories: true)
        for n in 0..<260 { _ = cli.file("many/f\(n).txt", Array("file \(n)".utf8)) }
        let existing = try cli.importIDs([cli.file("old.jpg", [5])])[0]
        let doomed = try cli.importIDs([cli.file("doomed.jpg", Array(repeating: 6, count: 70_000))])[0]
        let movable = try cli.importIDs([cli.file("movable.jpg", [8, 8])])[0]
        // A photo whose thumbnail is missing (as imported before thumbnails), for the backfill.
        try PhotoFixtures.run(cli, "convert", ["-size", "320x240", "plasma:fractal", "-quality", "85", cli.root + "/p.jpg"])
        let photo = try cli.importIDs([cli.root + "/p.jpg"])[0]
        try FileManager.default.removeItem(atPath: cli.vault + "/Thumbnails/\(photo).n11thumb")
        // One record as a loose file (the layout before key packs), for the adoption step.
        let (pack, at) = try #require(cli.keyRecordLocation(existing))
        var packBytes = try Data(contentsOf: URL(fileURLWithPath: pack))
        try FileManager.default.createDirectory(atPath: cli.keystore + "/items", withIntermediateDirectories: true)
        try packBytes[at..<(at + 84)].write(to: URL(fileURLWithPath: cli.keystore + "/items/\(existing).key"))
        packBytes.replaceSubrange(at..<(at + 84), with: Data(count: 84))
        try packBytes.write(to: URL(fileURLWithPath: pack))
        let steps: [(String, String)] = [
            ("thumbnails-missing", "exec \"$0\" thumbnails --missing \(pin)"),
            ("recovery-setup", "exec \"$0\" recovery setup \(pin)"),
            ("backup-enable", "exec \"$0\" backup enable \(pin)"),
            ("settings-set", "exec \"$0\" settings set preview.cache_mib 96 \(pin)"),
            ("skeleton-enable", "exec \"$0\" skeleton enable --interval 1h \(pin)"),
            ("skeleton-disable", "exec \"$0\" skeleton disable \(pin)"),
            ("pin-set-backup", "printf '%s\\nbackup-pin-5555\\n' \"$(cat \"$NU11VLT_VAULT/../pin\")\" | \"$0\" pin set-backup --pin-stdin --new-pin-fd 0"),
            ("adopt-loose-and-import", "exec \"$0\" import c.jpg \(pin)"),
            ("import", "exec \"$0\" import a.jpg b.jpg \(pin)"),
            ("import-two-groups", "exec \"$0\" import -r many \(pin)"),
            ("import-stdin", "exec \"$0\" import - --name s.jpg \(pin) < a.jpg"),
            ("note-add", "printf body | \"$0\" note add --title t \(pin)"),
            ("album", "exec \"$0\" album create Trip \(pin)"),
            // Moves between folders: Photos → the album's folder, and back (both folders synced).
            ("album-move", "exec \"$0\" album move --to Trip \(movable) \(pin)"),
            ("album-move-back", "exec \"$0\" album move --photos \(movable) \(pin)"),
            ("delete", "exec \"$0\" delete \(existing) \(pin)"),
            ("delete-secure", "exec \"$0\" delete --secure \(doomed) \(pin)"),
            ("delete-secure-photo", "exec \"$0\" delete --secure \(photo) \(pin)"),   // its thumbnail, made by thumbnails --missing
            ("rekey", "exec \"$0\" rekey \(pin)"),
            ("pin-change", "printf '%s\\nnew-pin-4444\\n' \"$(cat \"$NU11VLT_VAULT/../pin\")\" | \"$0\" pin change --pin-stdin --new-pin-fd 0"),
        ]
        for (label, command) in steps {
            let trace = try traced(cli, label, command)
            #expect(trace.contains("rename"), "\(label): nothing renamed? the trace is empty")
            let violations = PowerLossModel.check(trace: trace, scope: cli.root + "/")
            #expect(violations.isEmpty, "\(label): \(violations.prefix(3))")
            if label == "adopt-loose-and-import" {
                #expect(!cli.exists(cli.keystore + "/items") && cli.hasKeyRecord(existing), "the loose record was not adopted")
            }
        }
    }

    @Test("the model itself catches a missing folder fsync, a rename before the file's fsync, an unlink never made durable, an overwrite unlinked unsynced")
    func modelCatches() {
        let scope = "/v/"
        let good = """
            1 openat(AT_FDCWD</>, "/v/d/.t", O_WRONLY|O_CREAT, 0600) = 3</v/d/.t>
            1 write(3</v/d/.t>, ""..., 5) = 5
            1 fsync(3</v/d/.t>) = 0
            1 rename("/v/d/.t", "/v/d/f") = 0
            1 fsync(4</v/d>) = 0
            1 fsync(5</v/index.sqlite-wal>) = 0
            """
        #expect(PowerLossModel.check(trace: good, scope: scope).isEmpty)
        let noFolderSync = good.replacingOccurrences(of: "1 fsync(4</v/d>) = 0\n", with: "")
        #expect(PowerLossModel.check(trace: noFolderSync, scope: scope).count >= 1)
        // A rename made durable by its folder's fsync stays durable when the folder changes
        // again later (SQLite re-creating its -wal); one made after that sync is not.
        let laterChange = good + "\n1 openat(AT_FDCWD</>, \"/v/d/other\", O_WRONLY|O_CREAT, 0600) = 6</v/d/other>"
        #expect(PowerLossModel.check(trace: laterChange, scope: scope).isEmpty)
        let laterRename = laterChange + "\n1 rename(\"/v/d/.u\", \"/v/d/g\") = 0"
        #expect(PowerLossModel.check(trace: laterRename, scope: scope).contains { $0.text.contains("/v/d/g") })
        // A move between folders: both folders synced is durable; the destination alone is not.
        let move = """
            1 rename("/v/a/x.n11", "/v/b/x.n11") = 0
            1 fsync(4</v/b>) = 0
            1 fsync(5</v/a>) = 0
            1 fsync(6</v/index.sqlite-wal>) = 0
            """
        #expect(PowerLossModel.check(trace: move, scope: scope).isEmpty, "\(PowerLossModel.check(trace: move, scope: scope))")
        let destinationOnly = move.replacingOccurrences(of: "1 fsync(5</v/a>) = 0\n", with: "")
        #expect(PowerLossModel.check(trace: destinationOnly, scope: scope).contains { $0.text.contains("/v/a/x.n11") && $0.text.contains("moved") },
                "a move whose source folder was never synced passed: \(PowerLossModel.check(trace: destinationOnly, scope: scope))")
        let renameFirst = good.replacingOccurrences(of: "1 fsync(3</v/d/.t>) = 0\n", with: "")
        #expect(PowerLossModel.check(trace: renameFirst, scope: scope).contains { $0.text.contains("before its content") })
        // Calls split by another process (strace -f on a busy machine) count where they return.
        let split = good.replacingOccurrences(of: "1 fsync(4</v/d>) = 0\n", with: """
            1 fsync(4</v/d> <unfinished ...>
            2 write(1<pipe:[9]>, ""..., 5) = 5
            1 <... fsync resumed>) = 0

            """)
        #expect(PowerLossModel.check(trace: split, scope: scope).isEmpty)
        let splitRename = good.replacingOccurrences(of: "1 rename(\"/v/d/.t\", \"/v/d/f\") = 0\n", with: """
            1 rename("/v/d/.t", <unfinished ...>
            2 write(1<pipe:[9]>, ""..., 5) = 5
            1 <... rename resumed>"/v/d/f") = 0

            """)
        #expect(PowerLossModel.check(trace: splitRename.replacingOccurrences(of: "1 fsync(4</v/d>) = 0\n", with: ""), scope: scope).count >= 1)
        // Shredding: overwrite, fsync, unlink, then the folder's fsync.
        let shred = """
            1 openat(AT_FDCWD</>, "/v/k/x.key", O_WRONLY|O_NOFOLLOW) = 3</v/k/x.key>
            1 write(3</v/k/x.key>, ""..., 84) = 84
            1 fsync(3</v/k/x.key>) = 0
            1 unlink("/v/k/x.key") = 0
            1 fsync(4</v/k>) = 0
            """
        #expect(PowerLossModel.check(trace: shred, scope: scope).isEmpty)
        let unlinkNotDurable = shred.replacingOccurrences(of: "\n1 fsync(4</v/k>) = 0", with: "")
        #expect(PowerLossModel.check(trace: unlinkNotDurable, scope: scope).contains { $0.text.contains("can come back") })
        let overwriteNotSynced = shred.replacingOccurrences(of: "1 fsync(3</v/k/x.key>) = 0\n", with: "")
        #expect(PowerLossModel.check(trace: overwriteNotSynced, scope: scope).contains { $0.text.contains("before what was written") })
        let viaUnlinkat = shred.replacingOccurrences(of: "1 unlink(\"/v/k/x.key\")", with: "1 unlinkat(AT_FDCWD</>, \"/v/k/x.key\", 0)")
            .replacingOccurrences(of: "\n1 fsync(4</v/k>) = 0", with: "")
        #expect(PowerLossModel.check(trace: viaUnlinkat, scope: scope).contains { $0.text.contains("can come back") })
        // A key pack changed in place must be synced before the commit point (or a syncfs).
        let pack = """
            1 openat(AT_FDCWD</>, "/v/k/keys/ab.n11p", O_RDWR|O_NOFOLLOW) = 3</v/k/keys/ab.n11p>
            1 pwrite64(3</v/k/keys/ab.n11p>, ""..., 84, 92) = 84
            1 syncfs(3</v/k/keys/ab.n11p>) = 0
            1 fsync(5</v/index.sqlite-wal>) = 0
            """
        #expect(PowerLossModel.check(trace: pack, scope: scope).isEmpty)
        let packUnsynced = pack.replacingOccurrences(of: "1 syncfs(3</v/k/keys/ab.n11p>) = 0\n", with: "")
        #expect(PowerLossModel.check(trace: packUnsynced, scope: scope).contains { $0.text.contains("changed in place") })
        let packAfterCommit = pack + "\n1 pwrite64(3</v/k/keys/ab.n11p>, \"\"..., 84, 8) = 84"
        #expect(PowerLossModel.check(trace: packAfterCommit, scope: scope).contains { $0.text.contains("when the command ended") })
        // SQLite's sidecars are its own: a -wal removed at close is no violation.
        #expect(PowerLossModel.check(trace: good + "\n1 unlink(\"/v/index.sqlite-wal\") = 0", scope: scope).isEmpty)
    }
}
