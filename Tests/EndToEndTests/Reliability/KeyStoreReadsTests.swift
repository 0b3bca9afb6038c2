// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 55 (the architecture review's first problem): an unlock reads the key store's master
/// record and device key once each — before, 8 and 10 opens per unlock — and a file another
/// process replaced meanwhile is read again (every write is a rename: a new inode).
@Suite("key store reads")
struct KeyStoreReadsTests {
    @Test("strace of an unlock (list, export): master.n11k and device.n11d each opened once", arguments: [["list"], ["status"]])
    func openedOnce(_ command: [String]) throws {
        let cli = try CLI()
        try cli.initVault()
        _ = try cli.importIDs([cli.file("a.txt", [1, 2, 3])])
        let trace = cli.root + "/unlock.trace"
        let r = try cli.spawn("/usr/bin/strace", ["-f", "-qq", "-e", "trace=openat,open", "-o", trace, CLI.binary] + command + ["--pin-stdin"],
                              input: Data((cli.pin + "\n").utf8))
        #expect(r.code == 0, "\(r.stderr)")
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        for name in ["master.n11k", "device.n11d"] {
            let opens = lines.filter { $0.contains("/" + name + "\"") }
            #expect(opens.count == 1, "\(command): \(name) opened \(opens.count) times")
        }
    }

    @Test("a master record replaced by another process is read again: a session follows a rekey made elsewhere")
    func replacedIsReadAgain() throws {
        let cli = try CLI()
        try cli.initVault()
        let id = try #require(try cli.importIDs([cli.file("a.txt", [4, 5])]).first)
        #expect(try cli.run(["rekey"], pinStdin: true).code == 0)
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data([4, 5]))
    }
}
