// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 56: `delete` (and `delete --secure`) reports an item deleted only once its key record
/// is destroyed. A delete whose zeroing of the key record failed used to exit 0 "deleted <id>"
/// with the record still in its pack until some later unlock. Failed at every file-system
/// call, the report is read against the key packs right after the command, before anything
/// else runs: done means the record is gone; a failure says either that nothing was changed
/// (the record and the item are there) or that the deletion is pending.
extension FaultTests {
    final class Seen {
        var outcome: CLI.Outcome?
    }

    /// `exact`: a failure also means the item is still listed (plain `delete`, whose steps
    /// before the key record's destruction are all undone).
    func deleteReportScenario(secure: Bool, exact: Bool = false) -> Scenario {
        nonisolated(unsafe) var victim = ""
        let seen = Seen()
        return Scenario(
            prepare: { cli in
                let ids = try cli.importIDs([cli.file("a.jpg", [1, 1]), cli.file("b.jpg", [2, 2])])
                victim = ids[0]
                return [ids[1]: Data([2, 2])]
            },
            command: { _ in [CLI.binary, "delete", "--pin-stdin", victim] + (secure ? ["--secure"] : []) },
            input: { cli in Data((cli.pin + "\n").utf8) },
            verify: { cli, ok in
                let present = try listed(cli).contains { ($0["id"] as? String) == victim }
                if ok { #expect(!present, "delete said done but the item is there") }
                if exact { #expect(present == !ok, "delete said \(ok ? "done" : "failed") but the item is \(present ? "there" : "gone")") }
                if seen.outcome?.stderr.contains("nothing was changed") == true {
                    #expect(present, "delete said nothing was changed but the item is gone")
                }
                if present { try exports(cli, [victim: Data([1, 1])], pin: cli.pin, "the item not deleted") }
                return cli.pin
            },
            report: { cli, r in
                seen.outcome = r
                let key = cli.hasKeyRecord(victim)
                if r.code == 0 {
                    #expect(!key, "delete said \"\(r.out.trimmingCharacters(in: .whitespacesAndNewlines))\" but the key record is still in its pack")
                } else if !r.stderr.contains("pending") {
                    // Failed (at the unlock, or at the key record itself) without saying the
                    // deletion is pending: nothing was destroyed.
                    #expect(key, "delete failed without saying the deletion is pending, but the key record is gone: \(r.stderr)")
                }
            })
    }

    // Plain `delete` runs this scenario as FaultTests.delete (one pass over every call, both
    // checks).
    @Test("delete --secure: reported deleted only once the key record is destroyed")
    func deleteSecureReport() throws { try run("delete --secure (the report)", deleteReportScenario(secure: true)) }
}
