// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 56: `recovery setup` failing after `recovery.n11r` was replaced (at the folder's sync,
/// at the index write) exited 74 without the phrase, and the old phrase no longer opened the
/// recovery data either: no phrase recovered the vault. Now one phrase recovers it at every
/// instant — the old one until the new one takes effect, then the new one, which is then shown.
extension FaultTests {
    @Test("recovery setup failing at every call: the phrase it shows recovers the vault, or (none shown) the old one does")
    func recoverySetupEveryCall() throws {
        try #require(FaultShim.library != nil, "the fault shim did not build (cc missing?)")
        let template = try CLI()
        let oldPhrase = try template.initWithPhrase()
        let item = try template.importIDs([template.file("kept.txt", Array("kept bytes".utf8))])[0]
        for part in ["vault", "keystore"] {
            try FileManager.default.copyItem(atPath: template.root + "/" + part, toPath: template.root + "/prepared-" + part)
        }
        let command = [CLI.binary, "recovery", "setup", "--pin-stdin"]
        let countFile = template.root + "/.count"
        let dry = try FaultShim.run(template, command, input: Data((template.pin + "\n").utf8), at: 0, countFile: countFile)
        #expect(dry.code == 0, "\(dry.stderr)")
        let calls = Int(try String(contentsOfFile: countFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(calls > 10)
        let pattern = "[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}"
        for at in 1...max(calls, 1) {
            let trial = try CLI()
            for part in ["vault", "keystore"] {
                try FileManager.default.copyItem(atPath: template.root + "/prepared-" + part, toPath: trial.root + "/" + part)
            }
            let r = try FaultShim.run(trial, command, input: Data((trial.pin + "\n").utf8), at: at)
            let place = "recovery setup failing at call \(at) of \(calls)"
            let shown = r.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.range(of: "^" + pattern + "$", options: .regularExpression) != nil }
            if r.code != 0 { #expect(shown == nil, "\(place): a phrase was shown with a failure: \(r.stderr)") }
            if shown != nil {
                // The next unlock finishes the setup; it must not call the recovery data it
                // just made "an old copy" and advise a new phrase (the one shown would be lost).
                let next = try trial.run(["status"], pinStdin: true)
                #expect(next.code == 0 && !next.stderr.contains("recovery setup") && !next.stderr.contains("old copy"),
                        "\(place): the unlock after the shown phrase: \(next.stderr)")
            }
            // The key store is lost now: the phrase the person holds must bring the item back.
            try FileManager.default.moveItem(atPath: trial.keystore, toPath: trial.root + "/lost")
            let phrase = shown ?? oldPhrase
            let recovered = try trial.recover(phrase: phrase, newPIN: "recovered pin")
            #expect(recovered.code == 0, "\(place): the \(shown == nil ? "old" : "new") phrase does not recover the vault: \(recovered.stderr)")
            #expect(try trial.with("recovered pin", ["export", item, "-o", "-"]).stdout == Data("kept bytes".utf8), "\(place)")
        }
    }
}
