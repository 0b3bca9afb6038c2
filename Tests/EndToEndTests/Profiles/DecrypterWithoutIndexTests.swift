// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Issue 56: the spec-only decrypter (`tools/nu11vlt_decrypt.py`) recovers every item with the
/// index deleted or damaged — from the sidecars (FORMAT.md §2.2, §2.3, §5.3) — with the
/// recovery phrase, or with the key store and the PIN (§4); and a missing Python module is one
/// line naming the Debian packages, not a traceback.
@Suite("the decrypter without an index")
struct DecrypterWithoutIndexTests {
    /// A vault with two files, one in an album, and a note; its phrase and the originals by name.
    static func vault() throws -> (CLI, String, [String: Data], [String]) {
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let a = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let b = (0..<16_384).map { UInt8(truncatingIfNeeded: $0 &* 31) }  // exactly one chunk
        var ids = try cli.importIDs([cli.file("a.bin", a), cli.file("b.bin", b)])
        #expect(try cli.run(["album", "create", "Trips"], pinStdin: true).code == 0)
        let c = Array("in an album".utf8)
        ids += try cli.importIDs([cli.file("c.txt", c)], extra: ["--album", "Trips"])
        let note = try cli.runPinFD(["note", "add", "--title", "the note"], stdin: Data("note body".utf8))
        #expect(note.code == 0, "\(note.stderr)")
        return (cli, phrase, ["a.bin": Data(a), "b.bin": Data(b), "c.txt": Data(c), "the note.txt": Data("note body".utf8)], ids)
    }

    /// Copies of the vault folder: the index deleted; its first 4 KiB overwritten; one row gone.
    static func damagedCopies(_ cli: CLI, dropping id: String) throws -> [(String, String)] {
        var copies: [(String, String)] = []
        for how in ["deleted", "overwritten", "row-missing"] {
            let copy = cli.root + "/vault-" + how
            try FileManager.default.copyItem(atPath: cli.vault, toPath: copy)
            let index = copy + "/index.sqlite"
            switch how {
            case "deleted":
                try FileManager.default.removeItem(atPath: index)
            case "overwritten":
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: index))
                try handle.write(contentsOf: Data(repeating: 0x5A, count: 4096))
                try handle.close()
            default:
                #expect(try cli.sqlite(index, "DELETE FROM item WHERE id = '\(id)'; SELECT count(*) FROM item WHERE domain = 1") == "3")
            }
            copies.append((how, copy))
        }
        return copies
    }

    static func expectRecovered(_ py: CLI.Outcome, out: String, _ originals: [String: Data], _ what: String) {
        #expect(py.code == 0, "\(what): \(py.stderr)")
        #expect(!py.stderr.contains("Traceback"), "\(what): \(py.stderr)")
        for (name, bytes) in originals {
            #expect(FileManager.default.contents(atPath: out + "/" + name) == bytes, "\(what): \(name)")
        }
        #expect(py.out.contains("\tTrips\tc.txt\t"), "\(what): the album: \(py.out)")
        #expect(py.out.split(separator: "\n").count == originals.count, "\(what): \(py.out)")
    }

    @Test("index.sqlite deleted, its first 4 KiB overwritten, or a row missing: the phrase brings every item back byte-identical with its name and album; a wrong phrase opens nothing")
    func withThePhrase() throws {
        let (cli, phrase, originals, ids) = try Self.vault()
        for (how, copy) in try Self.damagedCopies(cli, dropping: ids[2]) {
            let out = cli.root + "/phrase-" + how
            let py = try cli.spawn("/usr/bin/python3", [RecoveryTests.tool, "--vault", copy, out], input: Data((phrase + "\n").utf8))
            Self.expectRecovered(py, out: out, originals, "phrase, index \(how)")
            let wrong = try cli.spawn("/usr/bin/python3", [RecoveryTests.tool, "--vault", copy, out + "-wrong"],
                                      input: Data("cccc-cccc-cccc-cccc-cccc-cccc-cccc-cccc\n".utf8))
            #expect(wrong.code != 0 && !wrong.stderr.contains("Traceback"), "\(how): \(wrong.stderr)")
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: out + "-wrong")) ?? []).isEmpty, "\(how): a wrong phrase wrote something")
        }
    }

    @Test("index.sqlite deleted, overwritten or missing a row: the key store and the PIN bring every item back the same, a Fade item too; a wrong PIN, or a TPM-bound key store, is one line")
    func withTheKeyStore() throws {
        let (cli, _, items, ids) = try Self.vault()
        // A Fade item before its deadline comes back too (the phrase never covers one).
        let f = Array("fades in an hour".utf8)
        _ = try cli.importIDs([cli.file("f.txt", f)], extra: ["--fade", "1h"])
        var originals = items
        originals["f.txt"] = Data(f)
        for (how, copy) in try Self.damagedCopies(cli, dropping: ids[0]) {
            let out = cli.root + "/ks-" + how
            let py = try cli.spawn("/usr/bin/python3", [RecoveryTests.tool, "--vault", copy, "--keystore", cli.keystore, out],
                                   input: Data((cli.pin + "\n").utf8))
            Self.expectRecovered(py, out: out, originals, "key store, index \(how)")
        }
        let wrong = try cli.spawn("/usr/bin/python3", [RecoveryTests.tool, "--vault", cli.vault, "--keystore", cli.keystore, cli.root + "/ks-wrong"],
                                  input: Data("not the pin\n".utf8))
        #expect(wrong.code != 0 && wrong.stderr.split(separator: "\n").count == 1 && wrong.stderr.contains("PIN"), "\(wrong.stderr)")
        // A key store bound to a TPM (master.n11k version 2) is refused in one line.
        let tpmLike = cli.root + "/ks-tpm"
        try FileManager.default.copyItem(atPath: cli.keystore, toPath: tpmLike)
        var master = try #require(FileManager.default.contents(atPath: tpmLike + "/master.n11k"))
        master[4] = 2
        try master.write(to: URL(fileURLWithPath: tpmLike + "/master.n11k"))
        let tpm = try cli.spawn("/usr/bin/python3", [RecoveryTests.tool, "--vault", cli.vault, "--keystore", tpmLike, cli.root + "/ks-tpm-out"],
                                input: Data((cli.pin + "\n").utf8))
        #expect(tpm.code != 0 && tpm.stderr.split(separator: "\n").count == 1 && tpm.stderr.contains("TPM"), "\(tpm.stderr)")
    }

    @Test("a Python module that cannot be imported: one line naming Debian's packages, a non-zero exit, no traceback; the phrase needs no argon2")
    func missingModule() throws {
        let (cli, phrase, originals, _) = try Self.vault()
        try FileManager.default.removeItem(atPath: cli.vault + "/index.sqlite")
        /// Runs the tool with `module` unimportable (None in sys.modules: `import` raises ImportError).
        func without(_ module: String, _ args: [String], stdin: String) throws -> CLI.Outcome {
            let script = "import runpy, sys; sys.modules[sys.argv[1]] = None; sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')"
            return try cli.spawn("/usr/bin/python3", ["-I", "-c", script, module, RecoveryTests.tool] + args, input: Data((stdin + "\n").utf8))
        }
        let cases: [(String, [String], String)] = [
            ("argon2", ["--vault", cli.vault, "--keystore", cli.keystore, cli.root + "/o1"], cli.pin),
            ("argon2", [cli.root + "/any.nu11vlt", cli.root + "/o2"], "password"),
            ("cryptography", ["--vault", cli.vault, cli.root + "/o3"], phrase),
        ]
        for (module, args, input) in cases {
            let r = try without(module, args, stdin: input)
            let lines = r.stderr.split(separator: "\n")
            #expect(r.code != 0, "\(module) \(args[0]): exit 0")
            #expect(lines.count == 1 && !r.stderr.contains("Traceback"), "\(module) \(args[0]): \(r.stderr)")
            #expect(r.stderr.hasPrefix("nu11vlt_decrypt: needs Debian's python3-cryptography and python3-argon2 (apt-get install python3-cryptography python3-argon2)"),
                    "\(module): \(r.stderr)")
            #expect(r.stderr.contains("missing: \(module)"), "\(r.stderr)")
        }
        // The phrase path imports no argon2.
        let out = cli.root + "/o4"
        let r = try without("argon2", ["--vault", cli.vault, out], stdin: phrase)
        #expect(r.code == 0, "\(r.stderr)")
        for (name, bytes) in originals {
            #expect(FileManager.default.contents(atPath: out + "/" + name) == bytes, "without argon2: \(name)")
        }
    }
}
