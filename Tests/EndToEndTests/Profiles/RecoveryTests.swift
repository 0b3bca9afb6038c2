// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

extension CLI {
    /// `init` at the KDF floor; returns the recovery phrase it printed (once).
    func initWithPhrase(_ extra: [String] = []) throws -> String {
        let r = try run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"] + extra, pinStdin: true)
        #expect(r.code == 0, "init failed: \(r.stderr)")
        let pattern = "[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}"
        let found = r.out.split(separator: "\n").compactMap { line -> String? in
            let text = line.trimmingCharacters(in: .whitespaces)
            return text.range(of: "^" + pattern + "$", options: .regularExpression) != nil ? text : nil
        }
        #expect(found.count == 1, "init printed the phrase \(found.count) times: \(r.out)")
        return try #require(found.first, "init printed no recovery phrase: \(r.out)")
    }

    /// `nu11vlt recover` with the phrase on descriptor 3 and the new PIN on stdin.
    func recover(phrase: String, newPIN: String, extra: [String] = []) throws -> CLI.Outcome {
        let script = "exec \"$0\" \"$@\" --phrase-fd 3 --pin-stdin 3<<'EOF'\n\(phrase)\nEOF\n"
        return try spawn("/bin/sh", ["-c", script, CLI.binary, "recover", "--kdf-memory", "19", "--kdf-iterations", "2"] + extra,
                         input: Data("\(newPIN)\n".utf8))
    }

    /// Every file under `folder`, for a byte search.
    func allFiles(_ folder: String) -> [String] {
        (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).map { folder + "/" + $0 }
            .filter { var isDir: ObjCBool = false; return FileManager.default.fileExists(atPath: $0, isDirectory: &isDir) && !isDir.boolValue }
    }

    func sqlite(_ db: String, _ sql: String) throws -> String {
        try spawn("/usr/bin/sqlite3", [db, sql]).out.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Issue 30: the recovery phrase. The vault folder alone and the phrase bring every item
/// back onto a new key store — through nu11vlt and through the independent decrypter.
@Suite("recovery phrase")
struct RecoveryTests {
    static var tool: String {
        Repo.path("tools/nu11vlt_decrypt.py")
    }

    static func phraseBytes(_ phrase: String) -> Data {
        let alphabet = Array("cbdefghijklnrtuv")
        let nibbles = phrase.compactMap { alphabet.firstIndex(of: $0) }.map(UInt8.init)
        return Data(stride(from: 0, to: nibbles.count, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] })
    }

    @Test("the vault folder and the phrase alone rebuild the key store (files, a note, an album, across a key rotation); the decrypter in tools/ does the same; the phrase is stored nowhere")
    func recoverFromFolder() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        var originals: [String: Data] = [:]
        let a = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let b = (0..<32_768).map { UInt8(truncatingIfNeeded: $0 &* 31) }  // exactly two chunks
        let ids = try cli.importIDs([cli.file("a.bin", a), cli.file("b.bin", b)])
        originals[ids[0]] = Data(a)
        originals[ids[1]] = Data(b)
        #expect(try cli.run(["album", "create", "Trips"], pinStdin: true).code == 0)
        let c = Array("in an album".utf8)
        let inAlbum = try cli.importIDs([cli.file("c.txt", c)], extra: ["--album", "Trips"])[0]
        originals[inAlbum] = Data(c)
        let note = try cli.runPinFD(["note", "add", "--title", "the note"], stdin: Data("note body".utf8))
        #expect(note.code == 0, "\(note.stderr)")
        // A rotation re-seals every row under new keys: the recovery data follows it.
        #expect(try cli.run(["rekey"], pinStdin: true).code == 0)
        let d = Array("after the rotation".utf8)
        let after = try cli.importIDs([cli.file("d.txt", d)])[0]
        originals[after] = Data(d)

        // Neither the phrase's text nor its bytes are kept anywhere.
        let secret = Self.phraseBytes(phrase)
        #expect(secret.count == 16)
        for path in cli.allFiles(cli.vault) + cli.allFiles(cli.keystore) {
            let content = FileManager.default.contents(atPath: path) ?? Data()
            #expect(content.range(of: secret) == nil && content.range(of: Data(phrase.utf8)) == nil, "\(path) holds the phrase")
        }

        // The key store is lost.
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost-keystore")
        let wrong = try cli.recover(phrase: "cccc-cccc-cccc-cccc-cccc-cccc-cccc-cccc", newPIN: "new passphrase 1")
        expectCleanError(wrong, code: 3, mentions: "recovery phrase")
        #expect(!FileManager.default.fileExists(atPath: cli.keystore), "a refused recovery left a key store")
        let r = try cli.recover(phrase: phrase.uppercased().replacingOccurrences(of: "-", with: " "), newPIN: "new passphrase 1")
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.out.contains("5 item(s) recovered"), "\(r.out)")
        let opened = try cli.with("new passphrase 1", ["list"])
        #expect(opened.code == 0, "\(opened.stderr)")
        for (id, bytes) in originals {
            #expect(try cli.with("new passphrase 1", ["export", id, "-o", "-"]).stdout == bytes, "item \(id) differs after recovery")
        }
        #expect(try cli.with("new passphrase 1", ["album", "list"]).out.contains("Trips"))
        #expect(try cli.with("new passphrase 1", ["note", "list"]).out.contains("the note"))
        expectCleanError(try cli.run(["list"], pinStdin: true), code: 3)  // the old PIN opens nothing here
        // Items added after the recovery are covered too (the data still belongs to the keys).
        let e = Array("after recovery".utf8)
        let later = String(try cli.with("new passphrase 1", ["import", cli.file("e.txt", e)]).out.prefix(32))
        originals[later] = Data(e)

        // An existing key store is never touched.
        let before = FileManager.default.contents(atPath: cli.keystore + "/master.n11k")
        expectCleanError(try cli.recover(phrase: phrase, newPIN: "another one 2"), code: 64, mentions: "already exists")
        #expect(FileManager.default.contents(atPath: cli.keystore + "/master.n11k") == before)

        // The independent decrypter, from docs/FORMAT.md, with the folder and the phrase alone.
        let out = cli.root + "/py-out"
        let py = try cli.spawn("/usr/bin/python3", [Self.tool, "--vault", cli.vault, out], input: Data((phrase + "\n").utf8))
        #expect(py.code == 0, "\(py.stderr)")
        for (name, bytes) in [("a.bin", a), ("b.bin", b), ("c.txt", c), ("d.txt", d), ("e.txt", e)] {
            #expect(FileManager.default.contents(atPath: out + "/" + name) == Data(bytes), "python: \(name)")
        }
        #expect(FileManager.default.contents(atPath: out + "/the note.txt") == Data("note body".utf8), "python: the note")
        #expect(py.out.contains("\tTrips\tc.txt\t"), "python: the album: \(py.out)")
        let wrongPy = try cli.spawn("/usr/bin/python3", [Self.tool, "--vault", cli.vault, out + "2"],
                                    input: Data("cccc-cccc-cccc-cccc-cccc-cccc-cccc-cccc\n".utf8))
        #expect(wrongPy.code != 0)
    }

    @Test("recovery data that is not this vault's: the unlock says new items are not covered, and how to make a new phrase; the command still succeeds")
    func foreignRecoveryData() throws {
        let cli = try CLI()
        try cli.initVault()
        let other = try CLI()
        try other.initVault()
        let path = cli.vault + "/recovery.n11r"
        try #require(FileManager.default.fileExists(atPath: path))
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: other.vault + "/recovery.n11r", toPath: path)
        let listed = try cli.run(["list"], pinStdin: true)
        #expect(listed.code == 0, "\(listed.stderr)")
        let warning = listed.stderr.split(separator: "\n").first { $0.contains("not covered by the recovery phrase") }.map(String.init) ?? ""
        #expect(warning.hasPrefix("nu11vlt: warning: ") && warning.hasSuffix("(hint: run `nu11vlt recovery setup` for a new phrase)"),
                "the notice: \(listed.stderr)")
    }

    @Test("the duress PIN and wipe destroy the recovery data first; a deleted item's seal goes with it")
    func destroyedWithTheVault() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let ids = try cli.importIDs([cli.file("x.txt", [1, 2, 3]), cli.file("y.txt", [4, 5, 6])])
        let index = cli.vault + "/index.sqlite"
        #expect(try cli.sqlite(index, "SELECT count(*) FROM recovery") == "2")
        #expect(try cli.run(["delete", ids[0]], pinStdin: true).code == 0)
        #expect(try cli.sqlite(index, "SELECT id FROM recovery") == ids[1], "a deleted item's seal stayed")

        try cli.setBackup("backup-pin")
        let set = try cli.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"], input: Data("backup-pin\nduress-pin\n".utf8))
        #expect(set.code == 0, "\(set.stderr)")
        #expect(FileManager.default.fileExists(atPath: cli.vault + "/recovery.n11r"), "the backup vault's PINs touched the recovery data")
        let forced = try cli.with("duress-pin", ["list"])
        #expect(forced.code == 0 && forced.stderr.isEmpty, "\(forced.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.vault + "/recovery.n11r"), "the duress PIN left the recovery data")
        #expect(try cli.sqlite(index, "SELECT count(*) FROM recovery") == "0")
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/ks-after-duress")
        expectCleanError(try cli.recover(phrase: phrase, newPIN: "new passphrase 1"), code: 4, mentions: "no recovery data")

        // Wipe destroys the recovery data with the keys, before any item: overwritten, then removed.
        let other = try CLI()
        _ = try other.initWithPhrase()
        _ = try other.importIDs([other.file("z.txt", [7])])
        let trace = other.root + "/wipe.trace"
        let wiped = try other.spawn("/usr/bin/strace", ["-f", "-qq", "-y", "-e", "trace=openat,unlink,unlinkat", "-o", trace, CLI.binary, "wipe", "--yes"])
        #expect(wiped.code == 0, "\(wiped.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other.vault + "/recovery.n11r"))
        let calls = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)
        let overwrite = calls.firstIndex { $0.contains("recovery.n11r") && $0.contains("openat") && $0.contains("O_WRONLY") }
        let removed = calls.firstIndex { $0.contains("unlink") && $0.contains("recovery.n11r") }
        let firstItem = calls.firstIndex { $0.contains("unlink") && $0.contains("/Vault/Photos/") }
        #expect(overwrite != nil, "wipe removed the recovery data without overwriting it")
        if let removed, let firstItem { #expect(removed < firstItem, "wipe reached the items before the recovery data") }
        #expect(removed != nil && firstItem != nil, "the trace does not show the removals")
    }

    @Test("recovery setup gives an older vault a phrase that covers the items it already has; the old phrase opens nothing after")
    func setupLater() throws {
        let cli = try CLI()
        let first = try cli.initWithPhrase()
        let ids = try cli.importIDs([cli.file("old.txt", Array("old item".utf8))])
        // As a vault made before recovery phrases: no recovery data.
        try FileManager.default.removeItem(atPath: cli.vault + "/recovery.n11r")
        _ = try cli.sqlite(cli.vault + "/index.sqlite", "DELETE FROM recovery")
        let setup = try cli.run(["recovery", "setup"], pinStdin: true)
        #expect(setup.code == 0, "\(setup.stderr)")
        #expect(setup.out.contains("1 item(s) covered"), "\(setup.out)")
        let phrase = try #require(setup.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.range(of: "^[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}$", options: .regularExpression) != nil })
        #expect(phrase != first)
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost")
        expectCleanError(try cli.recover(phrase: first, newPIN: "new passphrase 1"), code: 3)
        #expect(try cli.recover(phrase: phrase, newPIN: "new passphrase 1").code == 0)
        #expect(try cli.with("new passphrase 1", ["export", ids[0], "-o", "-"]).stdout == Data("old item".utf8))
    }

    @Test("recover needs only the phrase and the items' seals: recovery.n11r missing or put back from before a `recovery setup`; a right phrase with no seal that opens is not told to type the phrase again")
    func recoverWithoutRecoveryData() throws {
        let cli = try CLI()
        _ = try cli.initWithPhrase()
        let id = try cli.importIDs([cli.file("kept.txt", Array("kept".utf8))])[0]
        let record = cli.vault + "/recovery.n11r"
        let old = try Data(contentsOf: URL(fileURLWithPath: record))
        let setup = try cli.run(["recovery", "setup"], pinStdin: true)
        let phrase = try #require(setup.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.range(of: "^[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}$", options: .regularExpression) != nil })
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost")
        let pristine = cli.root + "/pristine"
        try FileManager.default.copyItem(atPath: cli.vault, toPath: pristine)
        func reset() throws {
            if FileManager.default.fileExists(atPath: cli.keystore) { try FileManager.default.removeItem(atPath: cli.keystore) }
            try FileManager.default.removeItem(atPath: cli.vault)
            try FileManager.default.copyItem(atPath: pristine, toPath: cli.vault)
        }
        let sidecar = cli.vault + "/Meta/\(id).n11m"
        let zeroSidecarSeal = "f = open(__import__('sys').argv[1], 'r+b'); f.seek(7); f.write(bytes(1)); f.seek(24); f.write(bytes(92))"

        // recovery.n11r missing: the seals open with the phrase; new recovery data is written.
        try FileManager.default.removeItem(atPath: record)
        let missing = try cli.recover(phrase: phrase, newPIN: "rebuilt pin 1")
        #expect(missing.code == 0 && missing.out.contains("1 item(s) recovered"), "\(missing.out) \(missing.stderr)")
        #expect(try cli.with("rebuilt pin 1", ["export", id, "-o", "-"]).stdout == Data("kept".utf8))
        let listed = try cli.with("rebuilt pin 1", ["list"])
        #expect(listed.out.contains("kept.txt") && !listed.stderr.contains("not covered"), "\(listed.out) \(listed.stderr)")

        // Put back from before the `recovery setup` (another phrase's): the current phrase still recovers.
        try reset()
        try old.write(to: URL(fileURLWithPath: record))
        let putBack = try cli.recover(phrase: phrase, newPIN: "rebuilt pin 2")
        #expect(putBack.code == 0 && putBack.out.contains("1 item(s) recovered"), "\(putBack.out) \(putBack.stderr)")
        #expect(try cli.with("rebuilt pin 2", ["export", id, "-o", "-"]).stdout == Data("kept".utf8))
        #expect(try cli.with("rebuilt pin 2", ["list"]).out.contains("kept.txt"))

        // The right phrase, but no item has a seal: nothing to recover with (4), not "type the phrase" (3).
        try reset()
        _ = try cli.sqlite(cli.vault + "/index.sqlite", "DELETE FROM recovery")
        #expect(try cli.spawn("/usr/bin/python3", ["-c", zeroSidecarSeal, sidecar]).code == 0)
        let none = try cli.recover(phrase: phrase, newPIN: "rebuilt pin 3")
        expectCleanError(none, code: 4, mentions: "no recovery data")
        #expect(!none.stderr.contains("type the phrase"), "\(none.stderr)")
        // The right phrase (it opens recovery.n11r), every seal altered: damaged data (5), not a wrong phrase.
        try reset()
        _ = try cli.sqlite(cli.vault + "/index.sqlite", "UPDATE recovery SET seal = randomblob(92)")
        #expect(try cli.spawn("/usr/bin/python3", ["-c", zeroSidecarSeal, sidecar]).code == 0)
        let altered = try cli.recover(phrase: phrase, newPIN: "rebuilt pin 4")
        expectCleanError(altered, code: 5)
        #expect(!altered.stderr.contains("type the phrase"), "\(altered.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.keystore), "a refused recovery left a key store")
    }

    @Test("the index lost and recovery.n11r damaged past its header: the phrase's key (vault ID from the header) opens the sidecars' seals; with both lost, one clear line")
    func recoverWithIndexAndRecoveryDataLost() throws {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let id = try cli.importIDs([cli.file("kept.txt", Array("kept".utf8))])[0]
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/lost")
        let record = cli.vault + "/recovery.n11r"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: record))
        bytes.replaceSubrange(56..<bytes.count, with: Data(repeating: 0x5a, count: 100))
        try bytes.write(to: URL(fileURLWithPath: record))
        let pristine = cli.root + "/pristine"
        try FileManager.default.copyItem(atPath: cli.vault, toPath: pristine)
        try FileManager.default.removeItem(atPath: cli.vault + "/index.sqlite")
        let r = try cli.recover(phrase: phrase, newPIN: "rebuilt pin 1")
        #expect(r.code == 0 && r.out.contains("1 item(s) recovered"), "\(r.out) \(r.stderr)")
        #expect(r.stderr.contains("recovery.n11r") && r.stderr.contains("damaged"), "the report does not name the damaged recovery data: \(r.stderr)")
        #expect(try cli.with("rebuilt pin 1", ["export", id, "-o", "-"]).stdout == Data("kept".utf8))
        #expect(try cli.with("rebuilt pin 1", ["list"]).out.contains("kept.txt"))

        // Neither the index nor recovery.n11r: the vault ID the phrase's key needs is nowhere.
        try FileManager.default.removeItem(atPath: cli.keystore)
        try FileManager.default.removeItem(atPath: cli.vault)
        try FileManager.default.copyItem(atPath: pristine, toPath: cli.vault)
        try FileManager.default.removeItem(atPath: cli.vault + "/index.sqlite")
        try FileManager.default.removeItem(atPath: record)
        expectCleanError(try cli.recover(phrase: phrase, newPIN: "rebuilt pin 2"), code: 4, mentions: "vault ID")
        #expect(!FileManager.default.fileExists(atPath: cli.keystore))
    }

    @Test("with a TPM the phrase is the recovery key: the folder and the phrase rebuild the key store onto a second machine's TPM (swtpm)",
          .enabled(if: SoftwareTPM.available))
    func recoverOntoAnotherTPM() throws {
        let first = try SoftwareTPM()
        let cli = try CLI()
        let phrase = try cli.initTPMVault(first)
        let bytes = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 11) }
        let id = try cli.importIDs([cli.file("tpm.bin", bytes)])[0]
        // The machine is gone: its TPM and its key store.
        first.stop()
        try FileManager.default.moveItem(atPath: cli.keystore, toPath: cli.root + "/old-machine-keystore")
        let second = try SoftwareTPM()
        defer { second.stop() }
        var other = cli
        other.environment["NU11VLT_TPM_TCTI"] = second.tcti
        let r = try other.recover(phrase: phrase, newPIN: "second machine", extra: ["--tpm"])
        #expect(r.code == 0 && r.out.contains("bound to this machine's TPM"), "\(r.out) \(r.stderr)")
        #expect(try other.run(["tpm", "status"]).out.contains("bound"), "not bound to the second TPM")
        #expect(try other.with("second machine", ["export", id, "-o", "-"]).stdout == Data(bytes))
        // The rebuilt key store needs this TPM: on the first machine's TPM it does not open.
        let third = try SoftwareTPM()
        defer { third.stop() }
        other.environment["NU11VLT_TPM_TCTI"] = third.tcti
        #expect(try other.with("second machine", ["export", id, "-o", "-"]).code != 0, "the rebuilt key store opened without its TPM")
    }
}
