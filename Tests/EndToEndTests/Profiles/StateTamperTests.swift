// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 57: a device state that is deleted or forged (every way a file can be: gone, empty,
/// cut short, one byte flipped, another key store's own valid state put in its place) must
/// impose the full hour of PIN delay that nine wrong PINs would — not a shorter one: the right
/// PIN is still refused after 50 minutes (faketime moves both clocks), and opens after 61.
@Suite("a deleted or forged device state waits a full hour")
struct StateTamperTests {
    @Test("deleted, empty, cut short, one byte flipped, another key store's state: refused at once and after 50 min, open after 61 min")
    func everyForgery() throws {
        let other = try CLI()
        try other.initVault()
        let foreign = try Data(contentsOf: URL(fileURLWithPath: other.keystore + "/state.n11s"))
        let forgeries: [(String, (Data) -> Data?)] = [
            ("deleted", { _ in nil }),
            ("empty", { _ in Data() }),
            ("cut short", { $0.dropLast(7) }),
            ("one byte flipped", { var d = $0; d[d.count / 2] ^= 0x01; return d }),
            ("another key store's state", { _ in foreign }),
        ]
        for (what, forge) in forgeries {
            let cli = try CLI()
            try cli.initVault()
            #expect(try cli.run(["list"], pinStdin: true).code == 0)
            let path = cli.keystore + "/state.n11s"
            let state = try Data(contentsOf: URL(fileURLWithPath: path))
            if let forged = forge(state) {
                try forged.write(to: URL(fileURLWithPath: path))
            } else {
                try FileManager.default.removeItem(atPath: path)
            }
            let now = try cli.run(["list"], pinStdin: true)
            #expect(now.code == 6 && now.stderr.contains("try again in"), "\(what): not delayed: \(now.code) \(now.stderr)")
            cli.clockAhead = "+50m"
            let later = try cli.run(["list"], pinStdin: true)
            #expect(later.code == 6, "\(what): the delay was shorter than an hour (open after 50 min): \(later.stderr)")
            cli.clockAhead = "+61m"
            let after = try cli.run(["list"], pinStdin: true)
            #expect(after.code == 0, "\(what): still refused after an hour: \(after.stderr)")
        }
    }
}
