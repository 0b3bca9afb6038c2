// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 29: a rotation killed at any point finishes revoking. `pin change` and `rekey` are
/// killed (SIGKILL, the fault shim's kill mode) at every file-system call in turn; after the
/// next unlock no forward record is left, and an old copy of `master.n11k` with the old PIN —
/// what a thief who copied the key store before the change holds — opens nothing added after.
@Suite("rotation killed at every call")
struct RotationKillTests {
    /// Every call is killed at, in two halves run as parallel test cases (odd and even calls):
    /// the two together cover every call, and the suite's slowest test takes half as long.
    static let halves = [0, 1]

    func killEverywhere(_ name: String, half: Int, command: [String], input: @escaping (CLI) -> Data, newPIN: String?) throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let template = try CLI()
        try template.initVault()
        let kept = try template.importIDs([template.file("kept.txt", Array("kept".utf8))])[0]
        try FileManager.default.copyItem(atPath: template.keystore, toPath: template.root + "/prepared-keystore")
        try FileManager.default.copyItem(atPath: template.vault, toPath: template.root + "/prepared-vault")
        let countFile = template.root + "/.count"
        let dry = try FaultShim.run(template, [CLI.binary] + command, input: input(template), at: 0, countFile: countFile)
        #expect(dry.code == 0, "\(name) without faults: \(dry.stderr)")
        let calls = Int(try String(contentsOfFile: countFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(calls > 10, "\(name): only \(calls) calls counted")
        let oldMaster = try Data(contentsOf: URL(fileURLWithPath: template.root + "/prepared-keystore/master.n11k"))
        for at in 1...max(calls, 1) where at % 2 == half {
            let trial = try CLI()
            try FileManager.default.copyItem(atPath: template.root + "/prepared-keystore", toPath: trial.keystore)
            try FileManager.default.copyItem(atPath: template.root + "/prepared-vault", toPath: trial.vault)
            let place = "\(name), killed at call \(at) of \(calls)"
            _ = try FaultShim.run(trial, [CLI.binary] + command, input: input(trial), at: at, kill: true)
            // The next unlock, with whichever PIN opens now, finishes what the kill cut short.
            var pin = trial.pin
            if let newPIN, try trial.with(newPIN, ["status", "--unlock"]).code == 0 { pin = newPIN }
            // The next command (an import: it unlocks, then writes under the current keys).
            let imported = try trial.with(pin, ["import", trial.file("added.txt", Array("added after".utf8))])
            #expect(imported.code == 0, "\(place): \(imported.stderr)")
            let forward = (try? FileManager.default.contentsOfDirectory(atPath: trial.keystore + "/forward")) ?? []
            #expect(forward.isEmpty, "\(place): forward records left after the next unlock: \(forward)")
            let added = String(imported.out.prefix(32))
            #expect(try trial.with(pin, ["export", kept, "-o", "-"]).stdout == Data("kept".utf8), "\(place): the kept item")
            // Only when the keys did rotate is there anything to revoke.
            let current = try Data(contentsOf: URL(fileURLWithPath: trial.keystore + "/master.n11k"))
            guard current != oldMaster else { continue }
            let thief = trial.root + "/thief"
            try FileManager.default.copyItem(atPath: trial.keystore, toPath: thief)
            try FileManager.default.removeItem(atPath: thief + "/master.n11k")
            try oldMaster.write(to: URL(fileURLWithPath: thief + "/master.n11k"))
            let stolen = try trial.spawn(CLI.binary, ["export", added, "-o", "-", "--keystore", thief, "--pin-stdin"],
                                         input: Data((trial.pin + "\n").utf8))
            #expect(stolen.code != 0 && stolen.stdout.isEmpty, "\(place): the old master record and the old PIN opened an item added after")
        }
    }

    @Test("rekey killed at every call", arguments: halves) func rekey(half: Int) throws {
        try killEverywhere("rekey", half: half, command: ["rekey", "--pin-stdin"], input: { Data(($0.pin + "\n").utf8) }, newPIN: nil)
    }

    @Test("pin change killed at every call", arguments: halves) func pinChange(half: Int) throws {
        try killEverywhere("pin change", half: half, command: ["pin", "change", "--pin-stdin", "--new-pin-fd", "0"],
                           input: { Data("\($0.pin)\nthe-new-pin-8\n".utf8) }, newPIN: "the-new-pin-8")
    }

    @Test("rekey killed at every call, then the key store lost: the folder and the phrase alone bring back every item with its name",
          arguments: halves)
    func recoverAfterKilledRotation(half: Int) throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let template = try CLI()
        let phrase = try template.initWithPhrase()
        #expect(try template.run(["album", "create", "Trip"], pinStdin: true).code == 0)
        var originals: [String: (name: String, bytes: Data)] = [:]
        for (i, name) in ["a.txt", "b.txt", "c.txt"].enumerated() {
            let bytes = Data("item \(i)".utf8)
            let id = try template.importIDs([template.file(name, Array(bytes))], extra: i == 2 ? ["--album", "Trip"] : [])[0]
            originals[id] = (name, bytes)
        }
        try FileManager.default.copyItem(atPath: template.keystore, toPath: template.root + "/prepared-keystore")
        try FileManager.default.copyItem(atPath: template.vault, toPath: template.root + "/prepared-vault")
        let countFile = template.root + "/.count"
        let command = [CLI.binary, "rekey", "--pin-stdin"]
        #expect(try FaultShim.run(template, command, input: Data((template.pin + "\n").utf8), at: 0, countFile: countFile).code == 0)
        let calls = Int(try String(contentsOfFile: countFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(calls > 10)
        for at in 1...max(calls, 1) where at % 2 == half {
            let trial = try CLI()
            try FileManager.default.copyItem(atPath: template.root + "/prepared-keystore", toPath: trial.keystore)
            try FileManager.default.copyItem(atPath: template.root + "/prepared-vault", toPath: trial.vault)
            _ = try FaultShim.run(trial, command, input: Data((trial.pin + "\n").utf8), at: at, kill: true)
            // The disk with the key store dies now, mid-rotation or after it.
            try FileManager.default.moveItem(atPath: trial.keystore, toPath: trial.root + "/lost")
            let place = "rekey killed at call \(at) of \(calls)"
            let r = try trial.recover(phrase: phrase, newPIN: "recovered pin")
            #expect(r.code == 0, "\(place): \(r.stderr)")
            // `list` prints each item's ID, name and album ("ID  size  date  name [album]");
            // `export --all` writes every item under its name: two programs check it all.
            let lines = try trial.with("recovered pin", ["list"]).out.split(separator: "\n").map(String.init)
            for (id, item) in originals {
                let line = lines.first { $0.hasPrefix(id) } ?? ""
                #expect(line.hasSuffix(item.name) || line.hasSuffix(item.name + " [Trip]"), "\(place): \(item.name) lost its name: \(lines)")
            }
            #expect(lines.filter { $0.hasSuffix(" [Trip]") }.count == 1, "\(place): the album lost its name: \(lines)")
            let out = trial.root + "/exported"
            let exported = try trial.with("recovered pin", ["export", "--all", "-o", out])
            #expect(exported.code == 0, "\(place): \(exported.stderr)")
            let files = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
            #expect(files.sorted() == originals.values.map(\.name).sorted(), "\(place): exported \(files)")
            for item in originals.values {
                #expect(FileManager.default.contents(atPath: out + "/" + item.name) == item.bytes, "\(place): \(item.name)")
            }
        }
    }
}
