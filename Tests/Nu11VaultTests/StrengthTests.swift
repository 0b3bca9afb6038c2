// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Testing
@testable import Nu11Vault

@Suite("the PIN strength estimate and the offline-guessing time it warns with")
struct StrengthTests {
    /// The bits whose offline time at 1 pass / 1 MiB is `seconds` (half the candidates).
    static func bits(for seconds: Double) -> Double { log2(seconds / 0.00065) + 1 }
    static let cost = KDFParameters(iterations: 1, memoryKiB: 1024)

    @Test("the time reads as English: one year, 2 years, one day, 3 hours, and the ends of the scale")
    func offlineTimeWords() {
        let day = 86400.0, year = 86400.0 * 365
        let cases: [(Double, String)] = [
            (30, "under a minute"), (90, "about one minute"), (150, "about 2 minutes"),
            (3 * 3600 + 60, "about 3 hours"), (1.5 * day, "about one day"), (1.5 * year, "about one year"),
            (2.5 * year, "about 2 years"), (2000 * year, "more than a thousand years"),
        ]
        for (seconds, words) in cases {
            #expect(Strength.offlineTime(bits: Self.bits(for: seconds), parameters: Self.cost) == words, "\(seconds) s")
        }
    }

    @Test("six digits are weak, common passwords weaker, a passphrase of five words strong")
    func estimates() {
        #expect(Strength.bits("482913") < 21)
        #expect(Strength.bits("password1") < Strength.bits("482913"))
        #expect(Strength.bits("111111") < 10)
        #expect(Strength.bits("violet quartz tulip orbit canyon") >= 60)
    }
}
