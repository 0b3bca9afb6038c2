// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The LD_PRELOAD shim (Tests/Fixtures/faultshim.c), built once per test run with the
/// system C compiler.
enum FaultShim {
    static let source = Repo.path("Tests/Fixtures/faultshim.c")

    static let library: String? = {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("nu11-faultshim-\(getpid()).so").path
        guard let process = try? Program.start("/usr/bin/cc", ["-shared", "-fPIC", "-O1", "-o", out, source, "-ldl"]) else { return nil }
        process.waitUntilExit()
        return process.terminationStatus == 0 ? out : nil
    }()

    /// Runs `args` (an executable and its arguments) with the shim: counting only (at == 0), or failing the at-th call.
    /// `log`: a file that gets one line per counted call, "N op path" (the shim's NU11_FAULT_LOG).
    static func run(_ cli: CLI, _ args: [String], input: Data, at: Int, errno code: Int32 = EIO, countFile: String? = nil,
                    kill: Bool = false, log: String? = nil) throws -> CLI.Outcome {
        var env = ["LD_PRELOAD": library ?? "", "NU11_FAULT_PREFIX": cli.root + "/", "NU11_FAULT_AT": "\(at)",
                   "NU11_FAULT_ERRNO": "\(code)"]
        if let countFile { env["NU11_FAULT_COUNT"] = countFile }
        if let log { env["NU11_FAULT_LOG"] = log }
        if kill { env["NU11_FAULT_MODE"] = "kill" }
        return try cli.spawn(args[0], Array(args.dropFirst()), input: input, environment: env)
    }
}

/// Fails every file-system call of a writing command in turn (not a sample; of the loop over
/// the 256 key packs, the packs that differ and the loop's edges: `everyCallButInnerPacks`; the
/// unlock the command starts with, once per distinct sequence of calls: `UnlockPrologues`) and checks the
/// vault after each: a one-line error or success; `check` passes; every committed item
/// exports byte-identical; the in-flight change happened completely or not at all, exactly
/// as the exit status says; exactly one PIN opens.
@Suite("fault injection: every file-system call of every writing command")
struct FaultTests {
    struct Scenario {
        /// Prepares the vault; returns the items that must export unchanged whatever happens.
        var prepare: (CLI) throws -> [String: Data]
        var command: (CLI) -> [String]
        var input: (CLI) -> Data
        /// Checks the effect, given whether the command reported success; returns the PIN that opens.
        var verify: (CLI, Bool) throws -> String
        /// Checks the command's report (its output and exit status) against the files, right
        /// after it and before any other command runs (the next one may finish what it left).
        var report: ((CLI, CLI.Outcome) throws -> Void)? = nil
    }

    /// A real JPEG (made by ImageMagick), so the import also decodes it and seals thumbnails.
    static let payload: Data = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nu11-fault-\(getpid()).jpg").path
        let process = try? Program.start("/usr/bin/convert", ["-size", "400x300", "plasma:fractal", "-quality", "85", path])
        process?.waitUntilExit()
        defer { try? FileManager.default.removeItem(atPath: path) }
        return FileManager.default.contents(atPath: path) ?? Data()
    }()

    /// `nu11vlt args… --pin-fd 3` with the PIN on descriptor 3 (stdin stays free).
    static func withPinFD(_ cli: CLI, _ args: [String]) -> [String] {
        ["/bin/sh", "-c", "exec \"$0\" \"$@\" --pin-fd 3 3<\"${NU11VLT_VAULT%/vault}/pin\"", CLI.binary] + args
    }

    /// With `tpm`, the vault's machine has a software TPM, and every trial gets that TPM as it
    /// was when the vault was prepared (a copy of its state): each trial is its own machine.
    /// `pick`: fail only the calls it picks from the dry run's log (`FaultLog`), not every call.
    /// What the command itself makes in the test's folder is named `fresh-…`: each trial starts
    /// without it (the dry run's is not copied).
    func run(_ name: String, _ scenario: Scenario, errno code: Int32 = EIO, tpm: Bool = false,
             pick: ((FaultLog) -> [Int])? = nil) throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let template = try CLI()
        let templateTPM = tpm ? try SoftwareTPM() : nil
        var machines: [SoftwareTPM] = []
        func machine(for cli: CLI) throws {
            guard let templateTPM else { return }
            let copy = try SoftwareTPM(stateFrom: templateTPM.dir + "/state")
            cli.environment["NU11VLT_TPM_TCTI"] = copy.tcti
            machines.append(copy)
        }
        if let templateTPM { template.environment["NU11VLT_TPM_TCTI"] = templateTPM.tcti }
        try template.initVault()
        try Data((template.pin + "\n").utf8).write(to: URL(fileURLWithPath: template.root + "/pin"))
        let committed = try scenario.prepare(template)
        try FileManager.default.createDirectory(atPath: template.root + "/prepared", withIntermediateDirectories: true)
        for part in ["vault", "keystore"] {
            try FileManager.default.copyItem(atPath: template.root + "/" + part, toPath: template.root + "/prepared/" + part)
        }
        templateTPM?.stop()
        try machine(for: template)
        let countFile = template.root + "/.count"
        let logFile = template.root + "/.log"
        let dry = try FaultShim.run(template, scenario.command(template), input: scenario.input(template), at: 0, countFile: countFile,
                                    log: logFile)
        #expect(dry.code == 0, "\(name) without faults: \(dry.stderr)")
        let calls = Int(try String(contentsOfFile: countFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(calls > 10, "\(name): only \(calls) calls counted")
        let log = FaultLog(text: (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "", root: template.root)
        #expect(log.calls.count == calls, "\(name): the log holds \(log.calls.count) calls, the count \(calls)")
        /// A machine as the scenario prepared it, for one run.
        func prepared() throws -> CLI {
            let trial = try CLI()
            for entry in try FileManager.default.contentsOfDirectory(atPath: template.root)
            where !["vault", "keystore", "prepared", ".count", ".log"].contains(entry) && !entry.hasPrefix("fresh-") {
                try FileManager.default.copyItem(atPath: template.root + "/" + entry, toPath: trial.root + "/" + entry)
            }
            for part in ["vault", "keystore"] {
                try FileManager.default.copyItem(atPath: template.root + "/prepared/" + part, toPath: trial.root + "/" + part)
            }
            machines.removeAll()
            try machine(for: trial)
            return trial
        }
        // Every call (but the inner ones of the key packs' loop, and the unlock's calls when
        // another scenario fails them already), or the ones `pick` chooses.
        var trials = pick?(log) ?? log.everyCallButInnerPacks(items: Array(committed.keys))
        if pick == nil {
            let probe = try prepared()
            let unlock = try FaultShim.run(probe, [CLI.binary, "list", "--pin-stdin"], input: Data((template.pin + "\n").utf8), at: 0,
                                           log: probe.root + "/.log")
            let prologue = unlock.code == 0 ? log.unlockPrologue(FaultLog(text: (try? String(contentsOfFile: probe.root + "/.log", encoding: .utf8)) ?? "",
                                                                          root: probe.root)) : 0
            if prologue > 0 && !UnlockPrologues.shared.claim(log.signature(upTo: prologue) + " errno \(code)") {
                trials.removeAll { $0 <= prologue }
            }
        }
        #expect(!trials.isEmpty, "\(name): no call of the dry run was picked to fail")
        for at in trials {
            let trial = try prepared()
            let r = try FaultShim.run(trial, scenario.command(trial), input: scenario.input(trial), at: at, errno: code)
            let place = "\(name), call \(at) of \(calls)"
            try scenario.report?(trial, r)
            #expect(r.code == 0 || (r.code >= 3 && r.code < 128), "\(place): exit \(r.code) \(r.stderr)")
            if r.code != 0 {
                let errors = r.stderr.split(separator: "\n").filter { $0.hasPrefix("nu11vlt: error: ") }
                #expect(errors.count == 1 && errors[0].contains("hint:") && !r.stderr.contains("Fatal error"), "\(place): \(r.stderr)")
                // One clear line: the system's reason, never a Foundation error's dump.
                #expect(!r.stderr.contains("Error Domain=") && !r.stderr.contains("UserInfo="), "\(place): \(r.stderr)")
            }
            let pin = try scenario.verify(trial, r.code == 0)
            let check = try trial.spawn(CLI.binary, ["check", "--pin-stdin"], input: Data((pin + "\n").utf8))
            #expect(check.code == 0, "\(place): check after the fault: \(check.out) \(check.stderr)")
            try exports(trial, committed, pin: pin, place)
        }
    }

    func exports(_ cli: CLI, _ expected: [String: Data], pin: String, _ place: String) throws {
        for (id, bytes) in expected {
            let r = try cli.spawn(CLI.binary, ["export", id, "-o", "-", "--pin-stdin"], input: Data((pin + "\n").utf8))
            #expect(r.stdout == bytes, "\(place): \(id) does not export: \(r.stderr)")
        }
    }

    func listed(_ cli: CLI, _ args: [String] = ["list"]) throws -> [[String: Any]] {
        let r = try cli.run(args + ["--json"], pinStdin: true)
        #expect(r.code == 0, "list: \(r.stderr)")
        // `list` prints {"items": …}; `note list` an array.
        let parsed = try JSONSerialization.jsonObject(with: r.stdout)
        return try #require((parsed as? [String: Any])?["items"] as? [[String: Any]] ?? parsed as? [[String: Any]], "not a JSON array: \(r.out)")
    }

    func importScenario(stdin: Bool) -> Scenario {
        Scenario(
            prepare: { cli in
                FileManager.default.createFile(atPath: cli.root + "/new.jpg", contents: Self.payload)
                return [try cli.importIDs([cli.file("old.jpg", [1, 2, 3])])[0]: Data([1, 2, 3])]
            },
            command: { cli in stdin ? Self.withPinFD(cli, ["import", "-", "--name", "new.jpg"]) : [CLI.binary, "import", "--pin-stdin", cli.root + "/new.jpg"] },
            input: { cli in stdin ? Self.payload : Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                #expect(Self.payload.starts(with: [0xFF, 0xD8, 0xFF]), "the JPEG payload was not made (ImageMagick missing?)")
                let all = try listed(cli)
                let new = all.filter { ($0["name"] as? String) == "new.jpg" }
                #expect(new.count == (ok ? 1 : 0), "import said \(ok ? "done" : "failed") but \(new.count) new item(s) exist")
                if let id = new.first?["id"] as? String {
                    try exports(cli, [id: Self.payload], pin: cli.pin, "the imported item")
                    if new.first?["thumbnail"] as? Bool == true {
                        let t = try cli.run(["thumbnail", id, "-o", cli.root + "/tile.jpg"], pinStdin: true)
                        #expect(t.code == 0, "the imported photo's thumbnail does not open: \(t.stderr)")
                    }
                }
                // Thumbnails belong to listed items only: no orphan, no temp file.
                let ids = Set(all.compactMap { $0["id"] as? String })
                let thumbs = (try? FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Thumbnails")) ?? []
                #expect(thumbs.allSatisfy { ids.contains(String($0.prefix(32))) && $0.hasSuffix(".n11thumb") },
                        "thumbnails left behind: \(thumbs)")
                return cli.pin
            })
    }

    @Test("import") func importFile() throws { try run("import", importScenario(stdin: false)) }
    @Test("import, disk full (ENOSPC)") func importFull() throws { try run("import (ENOSPC)", importScenario(stdin: false), errno: ENOSPC) }
    @Test("import -") func importStdin() throws { try run("import -", importScenario(stdin: true)) }

    @Test("thumbnails --missing") func thumbnailBackfill() throws {
        var photo = ""
        try run("thumbnails --missing", Scenario(
            prepare: { cli in
                photo = try cli.importIDs([cli.file("p.jpg", Array(Self.payload))])[0]
                // As in a vault imported before thumbnails existed.
                try FileManager.default.removeItem(atPath: cli.vault + "/Thumbnails/\(photo).n11thumb")
                return [photo: Self.payload]
            },
            command: { _ in [CLI.binary, "thumbnails", "--missing", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let t = try cli.run(["thumbnail", photo, "-o", cli.root + "/tile.jpg"], pinStdin: true)
                if ok { #expect(t.code == 0, "backfill said done but the thumbnail does not open: \(t.stderr)") }
                #expect(t.code == 0 || t.code == 4, "a thumbnail that is neither there nor absent: \(t.stderr)")
                let thumbs = (try? FileManager.default.contentsOfDirectory(atPath: cli.vault + "/Thumbnails")) ?? []
                #expect(thumbs.allSatisfy { $0 == "\(photo).n11thumb" }, "leftovers: \(thumbs)")
                return cli.pin
            }))
    }

    @Test("note add") func noteAdd() throws {
        try run("note add", Scenario(
            prepare: { cli in [try cli.importIDs([cli.file("old.jpg", [1])])[0]: Data([1])] },
            command: { cli in Self.withPinFD(cli, ["note", "add", "--title", "fresh"]) },
            input: { _ in Data("the body".utf8) },
            verify: { cli, ok in
                let notes = try listed(cli, ["note", "list"]).filter { ($0["name"] as? String) == "fresh" }
                #expect(notes.count == (ok ? 1 : 0), "note add said \(ok ? "done" : "failed") but \(notes.count) exist")
                return cli.pin
            }))
    }

    /// `delete` failed at every call: the item is gone exactly when it says done, and the
    /// report (read against the key packs right after the command, `deleteReportScenario`)
    /// says done only once the key record is destroyed.
    @Test("delete") func delete() throws {
        try run("delete", deleteReportScenario(secure: false, exact: true))
    }

    @Test("fade set") func fadeSet() throws { try run("fade set", fadeScenario(enrolTPM: false)) }

    func fadeScenario(enrolTPM: Bool) -> Scenario {
        nonisolated(unsafe) var permanent = ""
        return Scenario(
            prepare: { cli in
                if enrolTPM {
                    #expect(try cli.run(["tpm", "enroll", "--other-pins-fd", "0"], stdin: Data("\n".utf8), pinStdin: true).code == 0)
                }
                permanent = try cli.importIDs([cli.file("p.jpg", Array(Self.payload))])[0]
                return [:]
            },
            command: { _ in [CLI.binary, "fade", "set", "--pin-stdin", permanent, "1h"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                // Exactly one copy: the permanent one (failed) or the Fade one (done); bytes intact.
                let copies = try listed(cli).filter { ($0["name"] as? String) == "p.jpg" }
                #expect(copies.count == 1, "fade set said \(ok ? "done" : "failed") but \(copies.count) copies exist")
                let fading = copies.first?["fadesAt"] is String  // null when permanent
                #expect(fading == ok, "fade set said \(ok ? "done" : "failed") but the item \(fading ? "fades" : "is permanent")")
                if let id = copies.first?["id"] as? String { try exports(cli, [id: Self.payload], pin: cli.pin, "the item") }
                // The same ID either way (issue 58), with one key record: the domain it is in.
                #expect(copies.first?["id"] as? String == permanent, "the ID changed: \(copies)")
                #expect(try IDStabilityTests.recordDomains(cli, permanent) == [fading ? 2 : 1], "key records of the item")
                return cli.pin
            })
    }

    @Test("pin change") func pinChange() throws {
        try run("pin change", Scenario(
            prepare: { cli in [try cli.importIDs([cli.file("a.jpg", [5])])[0]: Data([5])] },
            command: { _ in [CLI.binary, "pin", "change", "--pin-stdin", "--new-pin-fd", "0"] },
            input: { cli in Data("\(cli.pin)\nthe-new-pin-7\n".utf8) },
            verify: { cli, ok in
                let old = try cli.spawn(CLI.binary, ["status", "--unlock", "--pin-stdin"], input: Data((cli.pin + "\n").utf8)).code == 0
                let new = try cli.spawn(CLI.binary, ["status", "--unlock", "--pin-stdin"], input: Data("the-new-pin-7\n".utf8)).code == 0
                #expect(old != new, "old PIN opens: \(old), new PIN opens: \(new)")
                #expect(new == ok, "pin change said \(ok ? "done" : "failed") but the \(new ? "new" : "old") PIN opens")
                return new ? "the-new-pin-7" : cli.pin
            },
            report: { cli, r in
                // A change reported done leaves no rotation record behind unnamed: while one is
                // there, an old copy of the master record with the old PIN reaches the new keys.
                let forward = (try? FileManager.default.contentsOfDirectory(atPath: cli.keystore + "/forward")) ?? []
                #expect(r.code != 0 || forward.isEmpty || r.stderr.contains("forward/"),
                        "pin change said done and left \(forward) unnamed: \(r.stderr)")
            }))
    }

    @Test("rekey") func rekey() throws {
        try run("rekey", Scenario(
            prepare: { cli in
                #expect(try cli.run(["album", "create", "Trip"], pinStdin: true).code == 0)
                let inAlbum = try cli.importIDs([cli.file("a.jpg", [7, 7])], extra: ["--album", "Trip"])[0]
                let fading = try cli.importIDs([cli.file("f.jpg", [8])], extra: ["--fade", "1h"])[0]
                return [inAlbum: Data([7, 7]), fading: Data([8])]
            },
            command: { _ in [CLI.binary, "rekey", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, _ in
                // Done or not, every item opens with the PIN (the next command finishes a rotation
                // that was cut short), and the album keeps its name.
                let albums = try cli.run(["album", "list"], pinStdin: true)
                #expect(albums.code == 0 && albums.out.contains("Trip"), "\(albums.out) \(albums.stderr)")
                return cli.pin
            }))
    }

    @Test("rekey --content") func rekeyContent() throws {
        try run("rekey --content", Scenario(
            prepare: { cli in
                _ = try cli.importIDs([cli.file("a.jpg", [7, 7]), cli.file("b.jpg", [8])])
                return [:]  // IDs change when an item is re-encrypted: checked by name below
            },
            command: { _ in [CLI.binary, "rekey", "--content", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, _ in
                // Done or cut short, each item exists exactly once (old or re-encrypted) with its bytes.
                let items = try listed(cli)
                #expect(items.compactMap { $0["name"] as? String }.sorted() == ["a.jpg", "b.jpg"], "\(items)")
                for item in items {
                    let expected = (item["name"] as? String) == "a.jpg" ? Data([7, 7]) : Data([8])
                    if let id = item["id"] as? String { try exports(cli, [id: expected], pin: cli.pin, "re-encrypted item") }
                }
                return cli.pin
            }))
    }

    @Test("album delete") func albumDelete() throws {
        try run("album delete", Scenario(
            prepare: { cli in
                #expect(try cli.run(["album", "create", "Trip"], pinStdin: true).code == 0)
                return [try cli.importIDs([cli.file("a.jpg", [6, 6])], extra: ["--album", "Trip"])[0]: Data([6, 6])]
            },
            command: { _ in [CLI.binary, "album", "delete", "Trip", "--items", "photos", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let exists = try cli.run(["album", "list"], pinStdin: true).out.contains("Trip")
                #expect(exists == !ok, "album delete said \(ok ? "done" : "failed") but the album \(exists ? "exists" : "is gone")")
                return cli.pin
            }))
    }

    @Test("archive import") func archiveImport() throws {
        try run("archive import", Scenario(
            prepare: { cli in
                let archived = try cli.importIDs([cli.file("a.jpg", [8, 8, 8])])[0]
                let made = try cli.run(["archive", "export", "--secure", "-o", cli.root + "/copy.nu11vlt"], pinStdin: true)
                #expect(made.code == 0, "\(made.stderr)")
                #expect(try cli.run(["delete", archived], pinStdin: true).code == 0)
                return [try cli.importIDs([cli.file("b.jpg", [9])])[0]: Data([9])]
            },
            command: { cli in [CLI.binary, "archive", "import", cli.root + "/copy.nu11vlt", "--pin-stdin"] },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let count = try listed(cli).count
                #expect(count == (ok ? 2 : 1), "archive import said \(ok ? "done" : "failed") but \(count) item(s) exist")
                return cli.pin
            }))
    }
}
