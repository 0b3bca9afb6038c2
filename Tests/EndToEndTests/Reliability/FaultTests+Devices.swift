// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Every file-system call of the commands of a shared vault (docs/FORMAT.md § 9.6) failed in
/// turn: an import's key file for the other devices exists exactly when its item does; a
/// `device add` cut short either joined (its PIN opens, the first device's items listed) or
/// left nothing that blocks a retry with the same code.
extension FaultTests {
    /// The item IDs of the primary vault's key files (`Keys/<ID>.n11w`).
    static func keyFileIDs(_ vault: String) -> Set<String> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: vault + "/Keys")) ?? [])
            .filter { $0.hasSuffix(".n11w") }.map { String($0.prefix(32)) })
    }

    @Test("import into a shared vault: the item and its key file for the other devices, both or neither")
    func importShared() throws {
        var scenario = importScenario(stdin: false)
        let prepare = scenario.prepare
        scenario.prepare = { cli in
            let committed = try prepare(cli)
            let paired = try cli.run(["device", "pair"], pinStdin: true)
            try #require(paired.code == 0, "device pair: \(paired.stderr)")
            return committed
        }
        let verify = scenario.verify
        scenario.verify = { cli, ok in
            let pin = try verify(cli, ok)
            let ids = Set(try listed(cli).compactMap { $0["id"] as? String })
            #expect(Self.keyFileIDs(cli.vault) == ids, "items \(ids.sorted()) but key files \(Self.keyFileIDs(cli.vault).sorted())")
            return pin
        }
        try run("import (shared)", scenario)
    }

    @Test("device add: joined (its PIN opens, the first device's items listed, its record written) or nothing that blocks a retry with the same code")
    func deviceAdd() throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let first = try CLI()
        try first.initVault()
        _ = try first.importIDs([first.file("a.bin", [1, 2, 3]), first.file("b.bin", Array(repeating: 5, count: 9000))])
        let code = try DeviceTests.pair(first)
        let pinB = "second device passphrase"
        func command(_ trial: CLI) -> [String] {
            let line = "exec \"$0\" device add --vault \"$1/vaultB\" --keystore \"$1/keystoreB\" --name phone "
                + DeviceTests.kdf.joined(separator: " ") + " --code-fd 3 --pin-stdin 3<\"$1/code\""
            return ["/bin/sh", "-c", line, CLI.binary, trial.root]
        }
        func trialMachine() throws -> CLI {
            let trial = try CLI()
            try DeviceTests.sync(first.vault, trial.root + "/vaultB")
            try Data((code + "\n").utf8).write(to: URL(fileURLWithPath: trial.root + "/code"))
            return trial
        }
        let input = Data((pinB + "\n").utf8)
        let template = try trialMachine()
        let countFile = template.root + "/.count", logFile = template.root + "/.log"
        let dry = try FaultShim.run(template, command(template), input: input, at: 0, countFile: countFile, log: logFile)
        #expect(dry.code == 0, "device add without faults: \(dry.stderr)")
        let calls = Int(try String(contentsOfFile: countFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(calls > 20, "only \(calls) calls counted")
        // Every call but the inner ones of the 256 empty key packs the new key store is made
        // with (one code path 256 times).
        let log = FaultLog(text: (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "", root: template.root)
        let trials = log.everyCallButInnerPacks()
        #expect(trials.count > 100 && trials.count < calls, "\(trials.count) of \(calls) calls picked")
        for at in trials {
            let trial = try trialMachine()
            let place = "device add, call \(at) of \(calls)"
            let r = try FaultShim.run(trial, command(trial), input: input, at: at)
            #expect(r.code == 0 || (r.code >= 3 && r.code < 128), "\(place): exit \(r.code) \(r.stderr)")
            if r.code != 0 {
                let errors = r.stderr.split(separator: "\n").filter { $0.hasPrefix("nu11vlt: error: ") }
                #expect(errors.count == 1 && errors[0].contains("hint:") && !r.stderr.contains("Fatal error"), "\(place): \(r.stderr)")
            }
            let fm = FileManager.default
            #expect(!fm.fileExists(atPath: trial.root + "/keystoreB.joining"), "\(place): the temp key store is left")
            let b = ["--vault", trial.root + "/vaultB", "--keystore", trial.root + "/keystoreB", "--pin-stdin"]
            if !fm.fileExists(atPath: trial.root + "/keystoreB/master.n11k") {
                #expect(r.code != 0, "\(place): said joined but no key store")
                let retry = try trial.spawn("/bin/sh", Array(command(trial).dropFirst()), input: input)
                #expect(retry.code == 0, "\(place): the retry with the same code: \(retry.stderr)")
            }
            let check = try trial.spawn(CLI.binary, ["check"] + b, input: input)
            #expect(check.code == 0, "\(place): check on B: \(check.out) \(check.stderr)")
            let devices = try trial.spawn(CLI.binary, ["device", "list"] + b, input: input)
            #expect(devices.out.contains("phone") && devices.out.contains("(this device)"), "\(place): device list \(devices.out) \(devices.stderr)")
            // Both items listed and byte-identical on B: one `export --all`.
            let out = trial.root + "/out"
            let export = try trial.spawn(CLI.binary, ["export", "--all", "-o", out, "--quiet"] + b, input: input)
            #expect(export.code == 0 && fm.contents(atPath: out + "/a.bin") == Data([1, 2, 3])
                    && fm.contents(atPath: out + "/b.bin") == Data(repeating: 5, count: 9000), "\(place): export on B: \(export.stderr)")
        }
    }
}
