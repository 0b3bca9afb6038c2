// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Kills nu11vlt with SIGKILL at deterministic crash points — just before the Nth
/// file-system call that changes something (the LD_PRELOAD shim of FaultTests), spread over
/// every call of the operation — and checks that the vault is always consistent: `check` passes, committed items are intact, the in-flight
/// item is complete or absent, the PIN still opens the vault, no plaintext is left around.
@Suite("crash safety (SIGKILL)")
struct CrashTests {
    static let trials = 30

    final class Model {
        let cli: CLI
        var items: [String: [UInt8]] = [:]   // name → bytes of committed items
        var pin: String
        let marker = "CRASHMARK" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        var counter = 0

        init() throws {
            cli = try CLI()
            pin = cli.pin
            try cli.initVault()
        }

        func run(_ args: [String], _ extra: String = "") throws -> CLI.Outcome {
            try cli.spawn(CLI.binary, args + ["--pin-stdin"], input: Data((pin + "\n" + extra).utf8))
        }

        func newFiles(_ n: Int, size: Int = 60_000) -> [String] {
            (0..<n).map { _ in
                counter += 1
                let name = "item-\(counter).bin"
                let bytes = Array((marker + "-\(counter)-").utf8) + (0..<size).map { UInt8(truncatingIfNeeded: $0 &* counter) }
                items[name] = bytes
                return cli.file("src/" + name, bytes)
            }
        }

        /// How many calls each operation makes (measured by its first, uninterrupted run),
        /// and how many trials of it ran.
        var totals: [String: Int] = [:]
        var trialsRun: [String: Int] = [:]
        var interrupted = 0
        /// The IDs a killed run printed before the kill: each must be in the vault after it.
        var promised: [String] = []
        /// Kill trials that were neither killed nor ran short: what they did, for the failure.
        var unexplained: [String] = []
        /// Kill trials that ran whole because they made fewer calls than their kill point: a
        /// folder import's count varies by a few dozen with the key packs its random IDs land
        /// in. Such a run is checked as a complete one (`verify`); it kills nothing.
        var ranShort = 0

        /// The first runs of an operation are uninterrupted: they count its calls (the
        /// smallest count is used, since the first run may create folders later runs find).
        static let countingRuns = 2

        /// Runs `args`; the first times uninterrupted (to count its calls), then killed with
        /// SIGKILL just before call N, N spread over the whole operation.
        /// Every trial after the counting runs must have been cut short by the kill, but one that
        /// made fewer calls than its kill point (`ranShort`, at most a quarter of them).
        func expectInterrupted(sourceLocation: SourceLocation = #_sourceLocation) {
            let expected = trialsRun.values.reduce(0) { $0 + max($1 - Self.countingRuns, 0) }
            #expect(interrupted == expected - ranShort, "only \(interrupted) of \(expected) trials were interrupted: \(unexplained)",
                    sourceLocation: sourceLocation)
            #expect(ranShort * 4 <= expected, "\(ranShort) of \(expected) trials ran short of their kill point",
                    sourceLocation: sourceLocation)
        }

        func killed(_ args: [String], input: String) throws {
            let label = args.prefix(2).joined(separator: " ")
            let trial = trialsRun[label, default: 0]
            trialsRun[label] = trial + 1
            let countFile = cli.root + "/.calls"
            var env = ["LD_PRELOAD": FaultShim.library ?? "", "NU11_FAULT_PREFIX": cli.root + "/", "NU11_FAULT_COUNT": countFile]
            if let total = totals[label], trial >= Self.countingRuns {
                env["NU11_FAULT_MODE"] = "kill"
                env["NU11_FAULT_AT"] = "\(1 + (trial * 7919) % max(total, 1))"
            } else {
                env["NU11_FAULT_AT"] = "0"
            }
            try? FileManager.default.removeItem(atPath: countFile)
            let r = try cli.spawn(CLI.binary, args, input: Data(input.utf8), environment: env)
            let ran = Int((try? String(contentsOfFile: countFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
            if trial < Self.countingRuns {
                #expect(r.code == 0, "\(label) without a crash: \(r.stderr)")
                let count = ran ?? 1
                totals[label] = min(totals[label] ?? count, count)
            } else if r.code == SIGKILL {
                interrupted += 1
                // Killed after it began printing (a long import's IDs fill the pipe's buffer
                // before it exits): every whole line printed is a promise `verify` holds it to.
                let text = String(decoding: r.stdout, as: UTF8.self)
                let whole = text.hasSuffix("\n") ? text : String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)])
                if label.hasPrefix("import") {
                    promised = whole.split(separator: "\n").map { String($0.prefix(32)) }
                    #expect(promised.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) }, "\(label): printed \(whole)")
                }
            } else if r.code == 0, let ran, let at = env["NU11_FAULT_AT"].flatMap({ Int($0) }), ran < at {
                ranShort += 1  // finished at call `ran`, before the kill point
            } else {
                unexplained.append("\(label) trial \(trial): exit \(r.code), \(ran.map(String.init) ?? "no") calls, kill at \(env["NU11_FAULT_AT"] ?? "-"), \(r.stdout.count) bytes out, \(r.stderr.prefix(200))")
            }
        }

        /// The listing as name → id, after the gate has recovered what the crash interrupted.
        func listing() throws -> [String: String] {
            let r = try run(["list", "--json", "--limit", "100000"])
            #expect(r.code == 0, "the PIN no longer opens the vault: \(r.stderr)")
            let array = ((try? JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])?["items"] as? [[String: Any]]) ?? []
            var out: [String: String] = [:]
            for e in array { if let n = e["name"] as? String, let id = e["id"] as? String { out[n] = id } }
            return out
        }

        /// check passes; listed items are exactly the model's; a sample exports byte-identical;
        /// no plaintext outside the sources.
        func verify(_ label: String, inFlight: Set<String> = []) throws {
            var listed = try listing()
            let ids = Set(listed.values)
            for id in promised { #expect(ids.contains(id), "\(label): \(id) was printed as imported, then lost") }
            promised = []
            // The in-flight items are complete (keep them) or absent (forget them).
            for name in inFlight where listed[name] == nil { items[name] = nil }
            let check = try run(["check"])
            #expect(check.code == 0, "\(label): check failed: \(check.out) \(check.stderr)")
            listed = try listing()
            #expect(Set(listed.keys) == Set(items.keys), "\(label): listed \(listed.count), expected \(items.count)")
            for name in Array(items.keys).shuffled().prefix(3) + inFlight.filter({ listed[$0] != nil }) {
                guard let id = listed[name] else { continue }
                #expect(try run(["export", id, "-o", "-"]).stdout == Data(items[name] ?? []), "\(label): \(name) differs")
            }
            // The vault, the key store, the private runtime folder the product writes plaintext
            // to, and /dev/shm — without this test's own folder (its sources, the outputs it
            // captured), which is there when the suite's scratch folder is in memory.
            let own = URL(fileURLWithPath: cli.root).lastPathComponent
            let scan = try cli.spawn("/bin/sh", ["-c", "grep -rlaF --exclude-dir=\"$4\" \"$0\" \"$1\" \"$2\" \"$3\" /dev/shm 2>/dev/null; true",
                                                 marker, cli.vault, cli.keystore, cli.root + "/run", own])
            #expect(scan.out.isEmpty, "\(label): plaintext left in \(scan.out)")
        }
    }

    @Test("import of many files")
    func importMany() throws {
        let m = try Model()
        try FileManager.default.createDirectory(atPath: m.cli.root + "/src", withIntermediateDirectories: true)
        for trial in 0..<Self.trials {
            let paths = m.newFiles(8)
            try m.killed(["import", "--pin-stdin"] + paths, input: m.pin + "\n")
            try m.verify("import trial \(trial)", inFlight: Set(paths.map { ($0 as NSString).lastPathComponent }))
        }
        m.expectInterrupted()
    }

    /// 260 files make two commit groups (a group closes at 256): the first group's syncs,
    /// renames and index transaction run on another thread while the second is encrypted.
    /// Killed anywhere, the vault holds whole groups: none, the first, or both.
    @Test("import of a folder in two commit groups, the first committing while the second is staged")
    func importTwoGroups() throws {
        let m = try Model()
        try FileManager.default.createDirectory(atPath: m.cli.root + "/src", withIntermediateDirectories: true)
        for trial in 0..<8 {  // two counting runs, then six kills spread over the import
            let paths = m.newFiles(260, size: 300)
            let names = paths.map { ($0 as NSString).lastPathComponent }
            try m.killed(["import", "--pin-stdin"] + paths, input: m.pin + "\n")
            let listed = try m.listing()
            let landed = names.filter { listed[$0] != nil }
            #expect([0, 256, 260].contains(landed.count) && landed == Array(names.prefix(landed.count)),
                    "two-group trial \(trial): \(landed.count) of 260 items landed, not whole groups in order")
            for name in names where listed[name] == nil { m.items[name] = nil }
            try m.verify("two-group trial \(trial)")
        }
        m.expectInterrupted()
    }

    @Test("delete")
    func delete() throws {
        let m = try Model()
        try FileManager.default.createDirectory(atPath: m.cli.root + "/src", withIntermediateDirectories: true)
        for trial in 0..<Self.trials {
            let fresh = m.newFiles(2)
            #expect(try m.run(["import"] + fresh).code == 0)
            let listed = try m.listing()
            let victims = Array(listed.keys.sorted().prefix(2))
            try m.killed(["delete", "--pin-stdin"] + victims.compactMap { listed[$0] }, input: m.pin + "\n")
            // A deleted item is gone or fully intact; never half.
            let after = try m.listing()
            for v in victims where after[v] == nil { m.items[v] = nil }
            try m.verify("delete trial \(trial)")
        }
        m.expectInterrupted()
    }

    @Test("album delete")
    func albumDelete() throws {
        let m = try Model()
        try FileManager.default.createDirectory(atPath: m.cli.root + "/src", withIntermediateDirectories: true)
        for trial in 0..<Self.trials {
            let album = "album-\(trial)"
            #expect(try m.run(["album", "create", album]).code == 0)
            let files = m.newFiles(3, size: 20_000)
            #expect(try m.run(["import", "--album", album] + files).code == 0)
            let mode = trial % 2 == 0 ? "delete" : "photos"
            try m.killed(["album", "delete", album, "--items", mode, "--pin-stdin"], input: m.pin + "\n")
            let after = try m.listing()
            for f in files.map({ ($0 as NSString).lastPathComponent }) where after[f] == nil { m.items[f] = nil }
            try m.verify("album delete trial \(trial)")
        }
        m.expectInterrupted()
    }

    @Test("fade set: the permanent item and its Fade copy are swapped at one commit point; never both, never neither")
    func fadeSet() throws {
        let m = try Model()
        try FileManager.default.createDirectory(atPath: m.cli.root + "/src", withIntermediateDirectories: true)
        for trial in 0..<Self.trials {
            let file = m.newFiles(1, size: 40_000)[0]
            let name = (file as NSString).lastPathComponent
            #expect(try m.run(["import", file]).code == 0)
            guard let id = try m.listing()[name] else { continue }
            try m.killed(["fade", "set", id, "1h", "--pin-stdin"], input: m.pin + "\n")
            let r = try m.run(["list", "--json", "--limit", "100000"])
            let entries = (((try? JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])?["items"] as? [[String: Any]]) ?? []).filter { $0["name"] as? String == name }
            #expect(entries.count == 1, "fade set trial \(trial): \(entries.count) copies listed")
            try m.verify("fade set trial \(trial)", inFlight: [])
        }
        m.expectInterrupted()
    }

    @Test("PIN change")
    func pinChange() throws {
        let m = try Model()
        try FileManager.default.createDirectory(atPath: m.cli.root + "/src", withIntermediateDirectories: true)
        #expect(try m.run(["import"] + m.newFiles(3)).code == 0)
        for trial in 0..<Self.trials {
            let old = m.pin
            let new = "pin-\(trial)-\(Int.random(in: 1000...9999))"
            try m.killed(["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], input: "\(old)\n\(new)\n")
            let opensOld = try m.cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data((old + "\n").utf8)).code == 0
            let opensNew = try m.cli.spawn(CLI.binary, ["list", "--pin-stdin"], input: Data((new + "\n").utf8)).code == 0
            #expect(opensOld != opensNew, "trial \(trial): old \(opensOld), new \(opensNew)")
            if opensNew { m.pin = new }
            try m.verify("pin change trial \(trial)")
        }
        m.expectInterrupted()
    }

    @Test("rekey, and an interrupted rekey finished by the next command")
    func rekey() throws {
        let m = try Model()
        try FileManager.default.createDirectory(atPath: m.cli.root + "/src", withIntermediateDirectories: true)
        #expect(try m.run(["import"] + m.newFiles(40, size: 2_000)).code == 0)
        for trial in 0..<Self.trials {
            try m.killed(["rekey", "--pin-stdin"], input: m.pin + "\n")
            try m.verify("rekey trial \(trial)")
        }
        m.expectInterrupted()
    }

    @Test("rekey --content, cut short, finished by running it again")
    func rekeyContent() throws {
        let m = try Model()
        try FileManager.default.createDirectory(atPath: m.cli.root + "/src", withIntermediateDirectories: true)
        #expect(try m.run(["import"] + m.newFiles(12, size: 3_000)).code == 0)
        for trial in 0..<12 {
            try m.killed(["rekey", "--content", "--pin-stdin"], input: m.pin + "\n")
            try m.verify("rekey --content trial \(trial)")
            let finish = try m.run(["rekey", "--content"])
            #expect(finish.code == 0, "rekey --content after trial \(trial): \(finish.stderr)")
            try m.verify("rekey --content finished after trial \(trial)")
        }
        m.expectInterrupted()
    }

    @Test("archive import")
    func archiveImport() throws {
        let source = try Model()
        try FileManager.default.createDirectory(atPath: source.cli.root + "/src", withIntermediateDirectories: true)
        let files = source.newFiles(5, size: 200_000)
        #expect(try source.run(["import"] + files).code == 0)
        let archive = source.cli.root + "/a.nu11vlt"
        let exported = try source.cli.spawn(CLI.binary, ["archive", "export", "--portable", "-o", archive, "--pin-stdin",
                                                         "--password-fd", "0", "--kdf-memory", "19", "--kdf-iterations", "2"],
                                            input: Data((source.pin + "\nviolet quartz tulip orbit canyon\n").utf8))
        #expect(exported.code == 0)
        let m = try Model()
        for trial in 0..<Self.trials {
            try m.killed(["archive", "import", archive, "--pin-stdin", "--password-fd", "0"], input: m.pin + "\nviolet quartz tulip orbit canyon\n")
            let listed = try m.listing()
            let present = files.map { ($0 as NSString).lastPathComponent }.filter { listed[$0] != nil }
            // All or nothing (names repeat across trials, so count this trial's copies).
            let check = try m.run(["check"])
            #expect(check.code == 0, "archive trial \(trial): \(check.out)")
            if !present.isEmpty {
                // Imported completely: delete again for the next trial, comparing bytes first.
                #expect(present.count == 5, "archive trial \(trial): \(present.count) of 5 items")
                for name in present {
                    guard let id = listed[name] else { continue }
                    #expect(try m.run(["export", id, "-o", "-"]).stdout == Data(source.items[name] ?? []))
                }
                #expect(try m.run(["delete"] + present.compactMap { listed[$0] }).code == 0)
            }
            #expect(try m.listing().isEmpty)
        }
        m.expectInterrupted()
    }
}
