// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11Sys
import Testing

@Suite("process hygiene")
struct HygieneTests {
    @Test("the hygiene call makes the process non-dumpable")
    func dumpable() {
        #expect(nu11_process_hygiene() == 0)
        #expect(nu11_is_dumpable() == 0)
    }
}
