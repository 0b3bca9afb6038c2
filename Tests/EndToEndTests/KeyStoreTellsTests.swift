import Foundation
import Testing

/// Issue 29: the key store tells nothing it need not. Whoever holds the backup PIN (and
/// watches the key store's files) must not learn whether a guess is another PIN.
@Suite("the key store tells nothing")
struct KeyStoreTellsTests {
    @Test("pin set-duress writes the master record the same way whether the guess is free or the primary PIN")
    func duressOracle() throws {
        let cli = try CLI()
        try cli.initVault()
        try cli.setBackup("backup-pin")
        let master = cli.keystore + "/master.n11k"
        var answers: [(code: Int32, out: String, err: String)] = []
        for candidate in [cli.pin, "a fresh duress pin", "backup-pin"] {
            // A primary unlock resets the growing wait between duress attempts.
            #expect(try cli.run(["status", "--unlock"], pinStdin: true).code == 0)
            let before = try Data(contentsOf: URL(fileURLWithPath: master))
            let r = try cli.spawn(CLI.binary, ["pin", "set-duress", "--pin-stdin", "--new-pin-fd", "0"],
                                  input: Data("backup-pin\n\(candidate)\n".utf8))
            let after = try Data(contentsOf: URL(fileURLWithPath: master))
            #expect(after != before, "guessing \(candidate == cli.pin ? "the primary PIN" : candidate) left master.n11k unchanged: the file tells")
            #expect(after.count == before.count)
            answers.append((r.code, r.out, r.stderr))
        }
        #expect(answers.allSatisfy { $0.code == answers[0].code && $0.out == answers[0].out && $0.err == answers[0].err },
                "the answers differ: \(answers)")
        // The primary and backup PINs still open their vaults.
        #expect(try cli.run(["list"], pinStdin: true).code == 0)
        #expect(try cli.with("backup-pin", ["list"]).code == 0)
    }
}
