// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Two devices of one vault (issue 60, docs/FORMAT.md § 9.6): `device pair` on the first,
/// the folder synced, `device add` on the second with the one-time code. The folder is synced
/// here as a file synchronizer does it (every file but the device-local ones of `.stignore`,
/// deletions included); the two-Syncthing harness (Tests/Sync/) does it with Syncthing itself.
/// The adversary is whoever writes the folder without the vault's keys (a sync peer, the
/// home server): a forged or moved key file, another vault's item, an old or used offer.
@Suite("two devices: pairing, and items that travel")
struct DeviceTests {
    static let kdf = ["--kdf-memory", "19", "--kdf-iterations", "2"]

    /// Whether a file (a path inside a vault folder) stays on its device (FORMAT.md § 5.4).
    static func local(_ relative: String) -> Bool {
        let top = relative.split(separator: "/").first.map(String.init) ?? relative
        return top.hasPrefix("index.sqlite") || [".lock", "CACHEDIR.TAG", ".stignore"].contains(top)
            || (relative as NSString).lastPathComponent.hasPrefix(".n11tmp-")
    }

    static func files(_ root: String) -> Set<String> {
        let all = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        return Set(all.filter { rel in
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + rel, isDirectory: &isDir) && !isDir.boolValue && !local(rel)
        })
    }

    /// One sync from `source` to `target`: what changed is copied, what is gone is removed.
    static func sync(_ source: String, _ target: String) throws {
        let fm = FileManager.default
        let want = files(source)
        for rel in want {
            let from = source + "/" + rel, to = target + "/" + rel
            let bytes = try Data(contentsOf: URL(fileURLWithPath: from))
            if fm.contents(atPath: to) == bytes { continue }
            try fm.createDirectory(atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try? fm.removeItem(atPath: to)
            try bytes.write(to: URL(fileURLWithPath: to))
        }
        for rel in files(target) where !want.contains(rel) { try fm.removeItem(atPath: target + "/" + rel) }
    }

    /// `device pair` on `cli`; the code it printed.
    static func pair(_ cli: CLI, name: String = "laptop") throws -> String {
        let r = try cli.run(["device", "pair", "--name", name], pinStdin: true)
        try #require(r.code == 0, "device pair: \(r.stderr)")
        let words = r.out.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        return try #require(words.first { $0.count == 39 && $0.split(separator: "-").count == 8 }, "no code in: \(r.out)")
    }

    /// `device add` on `cli` (its own vault folder and key store), the code on descriptor 3.
    static func add(_ cli: CLI, code: String, name: String = "phone", extra: [String] = [], ahead: String? = nil) throws -> CLI.Outcome {
        let script = "exec \"$0\" \"$@\" --code-fd 3 3<<'CODEEOF'\n\(code)\nCODEEOF\n"
        let line = ["device", "add", "--name", name, "--pin-stdin"] + kdf + extra
        let program = ahead.map { [ClockTests.faketime, "-f", $0, CLI.binary] } ?? [CLI.binary]
        return try cli.spawn("/bin/sh", ["-c", script] + program + line, input: Data((cli.pin + "\n").utf8))
    }

    func names(_ cli: CLI) throws -> [String: String] {
        var out: [String: String] = [:]
        for item in try cli.listJSON(["--all"]) {
            if let id = item["id"] as? String { out[id] = (item["name"] as? String ?? "?") + "|" + (item["album"] as? String ?? "") }
        }
        return out
    }

    func exportAll(_ cli: CLI) throws -> [String: Data] {
        let dir = cli.root + "/export-\(UUID().uuidString.prefix(8))"
        let r = try cli.run(["export", "--all", "-o", dir], pinStdin: true)
        #expect(r.code == 0, "export --all: \(r.stderr)")
        var out: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            out[name] = FileManager.default.contents(atPath: dir + "/" + name)
        }
        try? FileManager.default.removeItem(atPath: dir)
        return out
    }

    @Test("a second device joins with the code: it lists the first device's items (names, albums) and exports them byte-identical; its imports list on the first; check is sound on both; device list names both")
    func joinAndTravel() throws {
        let a = try CLI(), b = try CLI(pin: "phone passphrase")
        try a.initVault()
        #expect(try a.run(["album", "create", "Trips"], pinStdin: true).code == 0)
        let photo = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        _ = try a.importIDs([a.file("beach.bin", photo)], extra: ["--album", "Trips"])
        _ = try a.importIDs([a.file("list.txt", Array("milk\n".utf8))])
        let note = try a.runPinFD(["note", "add", "--title", "plans"], stdin: Data("go north\n".utf8))
        #expect(note.code == 0, "note add: \(note.stderr)")
        let code = try Self.pair(a)
        try Self.sync(a.vault, b.vault)
        let added = try Self.add(b, code: code)
        #expect(added.code == 0, "device add: \(added.stderr)")
        #expect(added.out.contains("3 item(s) listed"), "\(added.out)")
        let (onB1, onA1) = (try names(b), try names(a))
        #expect(onB1 == onA1 && onA1.count == 2, "B lists \(onB1), A \(onA1)")
        let onA = try exportAll(a)
        #expect(onA.count == 2 && onA["beach.bin"] == Data(photo))
        #expect(try exportAll(b) == onA)
        let noteID = String(note.out.prefix(32))
        let shown = try b.run(["note", "show", noteID], pinStdin: true)
        #expect(shown.code == 0 && shown.out.contains("go north"), "note show on B: \(shown.out) \(shown.stderr)")

        // The second device's own import travels back.
        _ = try b.importIDs([b.file("from-phone.bin", [9, 8, 7, 6])])
        try Self.sync(b.vault, a.vault)
        let (onA2, onB2) = (try names(a), try names(b))
        #expect(onA2 == onB2 && onA2.count == 3, "A lists \(onA2), B \(onB2)")
        #expect(try exportAll(a)["from-phone.bin"] == Data([9, 8, 7, 6]))
        for cli in [a, b] {
            let check = try cli.run(["check"], pinStdin: true)
            #expect(check.code == 0 && check.out.contains("0 damaged, 0 warning(s)"), "check: \(check.out) \(check.stderr)")
            let devices = try cli.run(["device", "list"], pinStdin: true)
            #expect(devices.code == 0 && devices.out.contains("laptop") && devices.out.contains("phone")
                    && devices.out.components(separatedBy: "(this device)").count == 2, "device list: \(devices.out) \(devices.stderr)")
        }
        // The other device's PIN opens nothing here: each key store has its own.
        let wrong = try a.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data("phone passphrase\n".utf8))
        #expect(wrong.code == 3, "B's PIN on A: exit \(wrong.code) \(wrong.stderr)")
    }

    @Test("only the code opens the offer, once and for an hour: a wrong code, an expired offer and a used code write nothing on the new device; an existing key store is never touched")
    func theCodeIsTheKey() throws {
        let a = try CLI(), b = try CLI(pin: "phone passphrase"), c = try CLI(pin: "third passphrase")
        try a.initVault()
        _ = try a.importIDs([a.file("x.bin", [1, 2, 3])])
        let code = try Self.pair(a)
        try Self.sync(a.vault, b.vault)
        let fm = FileManager.default
        // A wrong code (one letter changed): authentication, nothing written.
        var letters = Array(code)
        letters[0] = letters[0] == "c" ? "b" : "c"
        expectCleanError(try Self.add(b, code: String(letters)), code: 3, mentions: "pairing code")
        #expect(!fm.fileExists(atPath: b.keystore) && !fm.fileExists(atPath: b.keystore + ".joining"))
        #expect(!fm.fileExists(atPath: b.vault + "/index.sqlite"), "a wrong code made an index")
        // Not a code at all: a usage error naming what is wrong.
        expectCleanError(try Self.add(b, code: "hello"), code: 64, mentions: "pairing code")
        // Two hours later the offer has expired.
        expectCleanError(try Self.add(b, code: code, ahead: "+2h"), code: 3, mentions: "expired")
        #expect(!fm.fileExists(atPath: b.keystore))
        // In time: joined; the offer is gone from the folder, so the code opens nothing after.
        let joined = try Self.add(b, code: code)
        #expect(joined.code == 0, "device add: \(joined.stderr)")
        let offers = { (root: String) in ((try? fm.contentsOfDirectory(atPath: root + "/Devices")) ?? []).filter { $0.hasSuffix(".n11x") } }
        #expect(offers(b.vault).isEmpty, "the used offer is still there: \(offers(b.vault))")
        try Self.sync(b.vault, a.vault)
        try Self.sync(a.vault, c.vault)
        expectCleanError(try Self.add(c, code: code), code: 4, mentions: "no pairing offer")
        #expect(!fm.fileExists(atPath: c.keystore))
        // A second add where a key store is: refused, the key store byte-identical.
        let master = fm.contents(atPath: b.keystore + "/master.n11k")
        let again = try Self.add(b, code: code)
        #expect(again.code != 0 && again.stderr.contains("already exists"), "\(again.stderr)")
        #expect(fm.contents(atPath: b.keystore + "/master.n11k") == master)
    }

    @Test("a folder writer cannot slip items in: a forged key file, a key file under another item's name and another shared vault's item are refused with a notice; a repairing check leaves the other device's files where they are")
    func forgedKeyFiles() throws {
        let a = try CLI(), b = try CLI(pin: "phone passphrase"), other = try CLI()
        try a.initVault()
        try other.initVault()
        _ = try a.importIDs([a.file("first.bin", [1])])
        let code = try Self.pair(a)
        try Self.sync(a.vault, b.vault)
        let joined = try Self.add(b, code: code)
        try #require(joined.code == 0, "device add: \(joined.stderr)")
        let ids = try a.importIDs([a.file("x.bin", [2, 2]), a.file("y.bin", [3, 3, 3]), a.file("z.bin", [4])])
        _ = try Self.pair(other)
        let foreign = try other.importIDs([other.file("planted.bin", Array(repeating: 6, count: 500))])[0]
        try Self.sync(a.vault, b.vault)
        let fm = FileManager.default
        // x's key file replaced by y's (another item's name); z's wrapped key flipped; the other
        // vault's item copied in whole: content, sidecar and its key file (another vault's keys).
        let keys = b.vault + "/Keys/"
        try fm.removeItem(atPath: keys + ids[0] + ".n11w")
        try fm.copyItem(atPath: keys + ids[1] + ".n11w", toPath: keys + ids[0] + ".n11w")
        var z = try #require(fm.contents(atPath: keys + ids[2] + ".n11w"))
        z[z.count - 1] ^= 0x01
        try z.write(to: URL(fileURLWithPath: keys + ids[2] + ".n11w"))
        for rel in ["Vault/Photos/\(foreign).n11", "Meta/\(foreign).n11m", "Keys/\(foreign).n11w"] {
            try fm.copyItem(atPath: other.vault + "/" + rel, toPath: b.vault + "/" + rel)
        }
        let listed = try b.run(["list", "--all"], pinStdin: true)
        #expect(listed.code == 0, "list: \(listed.stderr)")
        #expect(listed.out.contains(ids[1]) && !listed.out.contains(ids[0]) && !listed.out.contains(ids[2]) && !listed.out.contains(foreign),
                "B lists: \(listed.out)")
        #expect(listed.stderr.contains("3 key file(s)") && listed.stderr.contains("do not open with this vault's shared key"), "\(listed.stderr)")
        let repair = try b.run(["check", "--repair"], pinStdin: true)
        #expect(repair.code == 0, "check --repair: \(repair.out) \(repair.stderr)")
        for id in [ids[0], ids[2], foreign] {
            #expect(fm.fileExists(atPath: b.vault + "/Vault/Photos/\(id).n11"), "check --repair moved \(id): \(repair.out)")
        }
        #expect(!fm.fileExists(atPath: b.vault + "/Quarantine") || ((try? fm.contentsOfDirectory(atPath: b.vault + "/Quarantine")) ?? []).isEmpty)
        #expect(!(try names(b).keys.contains(foreign)))
    }

    @Test("a deleted item's key file goes with it, and an item moved into Fade loses its key file (Fade stays on its device); a vault never paired writes none")
    func keyFilesFollowItems() throws {
        let plain = try CLI()
        try plain.initVault()
        _ = try plain.importIDs([plain.file("p.bin", [1])])
        #expect(!FileManager.default.fileExists(atPath: plain.vault + "/Keys"), "an unshared vault has key files")
        let a = try CLI()
        try a.initVault()
        let ids = try a.importIDs([a.file("one.bin", [1]), a.file("two.bin", [2]), a.file("three.bin", [3])])
        _ = try Self.pair(a)
        let keyFile = { (id: String) in FileManager.default.fileExists(atPath: a.vault + "/Keys/\(id).n11w") }
        #expect(ids.allSatisfy(keyFile))
        #expect(try a.run(["delete", ids[0]], pinStdin: true).code == 0)
        #expect(try a.run(["fade", "set", ids[1], "1d"], pinStdin: true).code == 0)
        #expect(!keyFile(ids[0]) && !keyFile(ids[1]) && keyFile(ids[2]))
        let back = try a.run(["fade", "set", ids[1], "off"], pinStdin: true)
        #expect(back.code == 0, "fade clear: \(back.stderr)")
        #expect(keyFile(ids[1]), "an item back from Fade has no key file for the other devices")
    }

    @Test("new keys on one device (rekey) are not shared yet: its later items do not list on the other, which says so, keeps the folder's recovery data as it is, and still imports and travels its own")
    func newGenerationStaysOnItsDevice() throws {
        let a = try CLI(), b = try CLI(pin: "phone passphrase")
        try a.initVault()
        _ = try a.importIDs([a.file("before.bin", [1, 1])])
        let code = try Self.pair(a)
        try Self.sync(a.vault, b.vault)
        try #require(try Self.add(b, code: code).code == 0)
        #expect(try a.run(["rekey"], pinStdin: true).code == 0)
        let after = try a.importIDs([a.file("after.bin", [2, 2])])[0]
        try Self.sync(a.vault, b.vault)
        let record = FileManager.default.contents(atPath: b.vault + "/recovery.n11r")
        let listed = try b.run(["list", "--all"], pinStdin: true)
        #expect(listed.code == 0 && !listed.out.contains(after) && listed.out.contains("before.bin"), "B lists: \(listed.out) \(listed.stderr)")
        #expect(listed.stderr.contains("1 item(s) another device added are sealed under keys this device does not hold"), "\(listed.stderr)")
        #expect(FileManager.default.contents(atPath: b.vault + "/recovery.n11r") == record, "B rewrote the recovery data A made with its new keys")
        let mine = try b.importIDs([b.file("phone.bin", [3])])[0]
        try Self.sync(b.vault, a.vault)
        let onA = try a.run(["list", "--all"], pinStdin: true)
        #expect(onA.code == 0 && onA.out.contains(after), "A lists: \(onA.out) \(onA.stderr)")
        // B's key file is of the old generation, which A no longer holds: not taken in, and said.
        #expect(!onA.out.contains(mine) && onA.stderr.contains("sealed under keys this device does not hold"), "A: \(onA.out) \(onA.stderr)")
    }

    @Test("an item a device deleted, put back by a sync peer with its old files and key file, stays deleted there: not listed, a notice says so — on the device that imported it and on the one that took it in")
    func putBackAfterDelete() throws {
        let a = try CLI(), b = try CLI(pin: "phone passphrase")
        try a.initVault()
        let ids = try a.importIDs([a.file("one.bin", [1, 1]), a.file("two.bin", [2, 2])])
        let code = try Self.pair(a)
        try Self.sync(a.vault, b.vault)
        try #require(try Self.add(b, code: code).code == 0)
        let fm = FileManager.default
        // The sync peer's old copy of every file of the two items.
        let old = a.root + "/old"
        try fm.createDirectory(atPath: old, withIntermediateDirectories: true)
        for rel in Self.files(a.vault) where ids.contains(where: { rel.contains($0) }) {
            try fm.createDirectory(atPath: (old + "/" + rel as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try fm.copyItem(atPath: a.vault + "/" + rel, toPath: old + "/" + rel)
        }
        #expect(try a.run(["delete", ids[0]], pinStdin: true).code == 0)
        #expect(try b.run(["delete", ids[1]], pinStdin: true).code == 0)
        for (cli, id) in [(a, ids[0]), (b, ids[1])] {
            for rel in Self.files(old) where rel.contains(id) {
                try fm.createDirectory(atPath: (cli.vault + "/" + rel as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try? fm.removeItem(atPath: cli.vault + "/" + rel)
                try fm.copyItem(atPath: old + "/" + rel, toPath: cli.vault + "/" + rel)
            }
            let listed = try cli.run(["list", "--all"], pinStdin: true)
            #expect(listed.code == 0 && !listed.out.contains(id), "\(id) is listed again: \(listed.out)")
            #expect(listed.stderr.contains("this device deleted are in the vault folder again"), "\(listed.stderr)")
            let export = try cli.run(["export", id, "-o", "-"], pinStdin: true)
            #expect(export.code != 0 && export.stdout.isEmpty, "the deleted item exports: \(export.stderr)")
        }
    }

    @Test("repairs on a shared vault never move or rewrite the folder's files: a device that joins again over its old index gets its keys back; swapped item files and a sidecar stripped of its seal are reported and left, and the first device still exports everything")
    func repairsLeaveTheFolder() throws {
        let a = try CLI(), b = try CLI(pin: "phone passphrase")
        try a.initVault()
        let ids = try a.importIDs([a.file("one.bin", [1, 1, 1]), a.file("two.bin", [2, 2]), a.file("three.bin", [3])])
        var code = try Self.pair(a)
        try Self.sync(a.vault, b.vault)
        try #require(try Self.add(b, code: code).code == 0)
        let fm = FileManager.default
        // B loses its key store and joins again: its old index (this vault's) stays.
        try fm.removeItem(atPath: b.keystore)
        code = try Self.pair(a)
        try Self.sync(a.vault, b.vault)
        let again = try Self.add(b, code: code)
        #expect(again.code == 0 && again.out.contains("3 item(s) listed"), "\(again.out) \(again.stderr)")
        let exported = try exportAll(b)
        #expect(exported["one.bin"] == Data([1, 1, 1]) && exported.count == 3, "B exports \(exported.keys.sorted())")
        // The folder writer swaps two items' files and strips a sidecar's recovery seal.
        let photos = b.vault + "/Vault/Photos/"
        try fm.moveItem(atPath: photos + ids[0] + ".n11", toPath: photos + "swap")
        try fm.moveItem(atPath: photos + ids[1] + ".n11", toPath: photos + ids[0] + ".n11")
        try fm.moveItem(atPath: photos + "swap", toPath: photos + ids[1] + ".n11")
        let sidecar = b.vault + "/Meta/\(ids[2]).n11m"
        var stripped = try #require(fm.contents(atPath: sidecar))
        stripped.replaceSubrange(24..<116, with: Data(count: 92))
        stripped[7] = 0
        try stripped.write(to: URL(fileURLWithPath: sidecar))
        let before = Dictionary(uniqueKeysWithValues: Self.files(b.vault).map { ($0, fm.contents(atPath: b.vault + "/" + $0)) })
        let repair = try b.run(["check", "--repair"], pinStdin: true)
        #expect(!repair.stderr.contains("Fatal error"), "\(repair.stderr)")
        let after = Dictionary(uniqueKeysWithValues: Self.files(b.vault).map { ($0, fm.contents(atPath: b.vault + "/" + $0)) })
        #expect(after == before, "check --repair on the shared vault changed the folder: \(Set(after.keys).symmetricDifference(before.keys).sorted()) \(repair.out)")
        // The writer's swap undone, the first device has every item, byte-identical.
        try fm.moveItem(atPath: photos + ids[0] + ".n11", toPath: photos + "swap")
        try fm.moveItem(atPath: photos + ids[1] + ".n11", toPath: photos + ids[0] + ".n11")
        try fm.moveItem(atPath: photos + "swap", toPath: photos + ids[1] + ".n11")
        try Self.sync(b.vault, a.vault)
        let onA = try exportAll(a)
        #expect(onA["one.bin"] == Data([1, 1, 1]) && onA["two.bin"] == Data([2, 2]) && onA["three.bin"] == Data([3]), "A exports \(onA.keys.sorted())")
    }

    @Test("a delete travels with the files: once an item's files are gone from the other device's folder, that device deletes it too (key record and row; check clean); a note edited on one device shows its new text on the other")
    func deletesTravel() throws {
        let a = try CLI(), b = try CLI(pin: "phone passphrase")
        try a.initVault()
        let ids = try a.importIDs([a.file("keep.bin", [1]), a.file("drop-on-a.bin", [2]), a.file("drop-on-b.bin", [3])])
        let note = try a.runPinFD(["note", "add", "--title", "list"], stdin: Data("eggs\n".utf8))
        let noteID = String(note.out.prefix(32))
        let code = try Self.pair(a)
        try Self.sync(a.vault, b.vault)
        try #require(try Self.add(b, code: code).code == 0)
        // One change after the other, each synced before the next (this one-way copy is no
        // two-way synchronizer; the Syncthing harness runs both sides at once).
        #expect(try a.run(["delete", ids[1]], pinStdin: true).code == 0)
        let edited = try a.runPinFD(["note", "edit", noteID], stdin: Data("eggs and milk\n".utf8))
        #expect(edited.code == 0, "note edit: \(edited.stderr)")
        try Self.sync(a.vault, b.vault)
        #expect(try b.run(["delete", ids[2]], pinStdin: true).code == 0)
        try Self.sync(b.vault, a.vault)
        for cli in [a, b] {
            let listed = try cli.run(["list", "--all"], pinStdin: true)
            #expect(listed.code == 0 && listed.out.contains(ids[0]) && !listed.out.contains(ids[1]) && !listed.out.contains(ids[2]),
                    "\(listed.out) \(listed.stderr)")
            let check = try cli.run(["check"], pinStdin: true)
            #expect(check.code == 0 && check.out.contains("0 damaged, 0 warning(s)"), "check (a key record left behind?): \(check.out) \(check.stderr)")
            let notes = try cli.run(["note", "list", "--json"], pinStdin: true)
            let all = (try? JSONSerialization.jsonObject(with: notes.stdout) as? [[String: Any]]) ?? []
            #expect(all.count == 1, "notes: \(notes.out)")
            if let id = all.first?["id"] as? String {
                let shown = try cli.run(["note", "show", id], pinStdin: true)
                #expect(shown.out.contains("eggs and milk"), "\(shown.out) \(shown.stderr)")
            }
        }
        // Nothing of the deleted items opens on either side, whatever is put back without a key file.
        for cli in [a, b] {
            for id in [ids[1], ids[2]] {
                let export = try cli.run(["export", id, "-o", "-"], pinStdin: true)
                #expect(export.code != 0 && export.stdout.isEmpty)
            }
        }
    }

    @Test("albums travel with the files: a new album and a move into it, a rename, a move back to Photos and an album deleted on one device show on the other; the sidecars are never rewritten by the device that follows")
    func albumsTravel() throws {
        let a = try CLI(), b = try CLI(pin: "phone passphrase")
        try a.initVault()
        let ids = try a.importIDs([a.file("x.bin", [1]), a.file("y.bin", [2]), a.file("z.bin", [3])])
        let code = try Self.pair(a)
        try Self.sync(a.vault, b.vault)
        try #require(try Self.add(b, code: code).code == 0)
        func albums(_ cli: CLI) throws -> [String: String] { try names(cli).mapValues { String($0.split(separator: "|", omittingEmptySubsequences: false).last ?? "") } }
        // On A: a new album, x and y moved into it, then renamed.
        #expect(try a.run(["album", "create", "Trips"], pinStdin: true).code == 0)
        #expect(try a.run(["album", "move", "--to", "Trips", ids[0], ids[1]], pinStdin: true).code == 0)
        #expect(try a.run(["album", "rename", "Trips", "Trips 2026"], pinStdin: true).code == 0)
        try Self.sync(a.vault, b.vault)
        let sidecars = Dictionary(uniqueKeysWithValues: ids.map { ($0, FileManager.default.contents(atPath: b.vault + "/Meta/\($0).n11m")) })
        var onB = try albums(b)
        #expect(onB[ids[0]] == "Trips 2026" && onB[ids[1]] == "Trips 2026" && onB[ids[2]] == "", "B: \(onB)")
        #expect(ids.allSatisfy { FileManager.default.contents(atPath: b.vault + "/Meta/\($0).n11m") == sidecars[$0] }, "B rewrote a sidecar")
        // On B: y back to Photos, z into the album; then A deletes the album (its items to Photos).
        #expect(try b.run(["album", "move", "--photos", ids[1]], pinStdin: true).code == 0)
        #expect(try b.run(["album", "move", "--to", "Trips 2026", ids[2]], pinStdin: true).code == 0)
        try Self.sync(b.vault, a.vault)
        let onA = try albums(a)
        #expect(onA[ids[0]] == "Trips 2026" && onA[ids[1]] == "" && onA[ids[2]] == "Trips 2026", "A: \(onA)")
        #expect(try a.run(["album", "delete", "Trips 2026", "--items", "photos"], pinStdin: true).code == 0)
        try Self.sync(a.vault, b.vault)
        onB = try albums(b)
        #expect(onB.values.allSatisfy { $0.isEmpty } && onB.count == 3, "B after the album's deletion: \(onB)")
        let list = try b.run(["album", "list"], pinStdin: true)
        #expect(list.code == 0 && !list.out.contains("Trips"), "B still lists the album: \(list.out)")
        for cli in [a, b] {
            let check = try cli.run(["check"], pinStdin: true)
            #expect(check.code == 0 && check.out.contains("0 damaged, 0 warning(s)"), "check: \(check.out) \(check.stderr)")
        }
    }

    @Test("a device that joins after a rekey opens every item, those from before it included: pairing writes the key files of the current generation again")
    func pairAfterRekey() throws {
        let a = try CLI(), c = try CLI(pin: "third passphrase")
        try a.initVault()
        let ids = try a.importIDs([a.file("old.bin", [4, 4])])
        _ = try Self.pair(a)
        #expect(try a.run(["rekey"], pinStdin: true).code == 0)
        let code = try Self.pair(a)
        try Self.sync(a.vault, c.vault)
        let joined = try Self.add(c, code: code)
        #expect(joined.code == 0 && joined.out.contains("1 item(s) listed") && !joined.stderr.contains("does not hold"),
                "\(joined.out) \(joined.stderr)")
        let export = try c.run(["export", ids[0], "-o", "-"], pinStdin: true)
        #expect(export.stdout == Data([4, 4]), "\(export.stderr)")
    }
}
