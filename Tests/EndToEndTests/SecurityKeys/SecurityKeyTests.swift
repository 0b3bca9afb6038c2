// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// Issue 35: FIDO2 security keys, against the project's software authenticator (the seed's
/// Face ID, the Linux way). Each test attacks as the adversary would: a key that never enrolled,
/// no key at all, a wrong PIN on the key, a key store copied with and without keys.
@Suite("FIDO2 security keys", .enabled(if: SoftwareFIDO2.available))
struct SecurityKeyTests {
    @Test("enrol, then a touch opens the vault with no PIN; the PIN still does; the key store has the same files and sizes with and without a key")
    func enrolAndTouch() throws {
        let key = try SoftwareFIDO2()
        let cli = try CLI()
        try cli.initVault()
        let id = try #require(try cli.importIDs([cli.file("a.bin", [1, 2, 3])]).first)
        let before = try cli.keyStoreShape()
        #expect(before.contains { $0.hasPrefix("security-keys.n11u ") }, "a new key store has the security-key decoy")

        let enrol = try cli.runWithKey(["fido2", "enroll", "--name", "blue key"], key: key, pinStdin: true)
        #expect(enrol.code == 0 && enrol.out.contains("security key 1 (blue key) enrolled"), "\(enrol.out) \(enrol.stderr)")
        #expect(try cli.keyStoreShape() == before, "enrolling changed the key store's files or sizes")
        #expect(try cli.run(["fido2", "status"]).out.contains("1  blue key  (touch)"))

        let opened = try cli.runWithKey(["export", id, "-o", "-", "--security-key"], key: key)
        #expect(opened.code == 0 && opened.stdout == Data([1, 2, 3]), "\(opened.stderr)")
        // No flag, no PIN descriptor: the key is asked first.
        let plain = try cli.runWithKey(["list"], key: key)
        #expect(plain.code == 0 && plain.out.contains(id), "\(plain.stderr)")
        // The vault PIN keeps working.
        #expect(try cli.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data([1, 2, 3]))
        // Nobody touches the key: one line, and then the PIN (here: none to read, so a second clean error).
        try key.start(denyTouch: true)
        expectCleanError(try cli.runWithKey(["list", "--security-key"], key: key), code: 3, mentions: "not touched")
    }

    @Test("a key that never enrolled and an absent key are refused with one line each; the wrong key counts as a failed unlock, the absent one does not")
    func wrongAndAbsent() throws {
        let key = try SoftwareFIDO2()
        let stranger = try SoftwareFIDO2()
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.runWithKey(["fido2", "enroll"], key: key, pinStdin: true).code == 0)

        expectCleanError(try cli.runWithKey(["list", "--security-key"], key: stranger), code: 3, mentions: "does not open the vault")
        expectCleanError(try cli.runWithKey(["list", "--security-key"], key: nil), code: 4, mentions: "no security key is plugged in")
        // Without --security-key the PIN is the fallback: one line says why, then the PIN opens.
        let fallback = try cli.runWithKey(["list"], key: stranger, pinStdin: false)
        #expect(fallback.stderr.contains("does not open the vault") && fallback.stderr.contains("asking for the PIN instead"), "\(fallback.stderr)")
        let log = try cli.run(["log"], pinStdin: true)
        // Exactly the two wrong-key attempts are journalled as failed unlocks (counted like wrong
        // PINs: the growing delay and erase-after apply); the absent key is not.
        #expect(log.out.components(separatedBy: "wrong security key").count - 1 == 2, "the two wrong-key attempts are journalled: \(log.out)")
    }

    @Test("touch + the key's own PIN: opens with it; a wrong key PIN costs one of the key's tries, not the vault's; the key blocks after 3 in a row")
    func keyPINPolicy() throws {
        let key = try SoftwareFIDO2(pin: "4242")
        let cli = try CLI()
        try cli.initVault()
        let noKeyPIN = try cli.runWithKey(["fido2", "enroll", "--require", "key-pin"], key: key, pinStdin: true)
        expectCleanError(noKeyPIN, code: 64, mentions: "PIN")  // the key has a PIN: no terminal to ask it, no descriptor
        let enrol = try cli.runWithKey(["fido2", "enroll", "--require", "key-pin"], key: key, keyPIN: "4242", pinStdin: true)
        #expect(enrol.code == 0, "\(enrol.stderr)")
        #expect(try cli.run(["fido2", "status", "--json"]).out.contains("\"requires\" : \"key-pin\""))

        let good = try cli.runWithKey(["list", "--security-key"], key: key, keyPIN: "4242")
        #expect(good.code == 0, "\(good.stderr)")
        #expect(try key.retries() == 8)
        let wrong = try cli.runWithKey(["list", "--security-key"], key: key, keyPIN: "0000")
        expectCleanError(wrong, code: 3, mentions: "own PIN is wrong")
        #expect(wrong.stderr.contains("7 tries left"), "\(wrong.stderr)")
        #expect(try key.retries() == 7)
        #expect(!(try cli.run(["log"], pinStdin: true).out.contains("wrong security key")), "a wrong key PIN is the key's to count")
        expectCleanError(try cli.runWithKey(["list", "--security-key"], key: key, keyPIN: "1111"), code: 3, mentions: "own PIN is wrong")
        let third = try cli.runWithKey(["list", "--security-key"], key: key, keyPIN: "2222")
        expectCleanError(third, code: 3, mentions: "blocked its own PIN")
        // Even the right PIN waits for the key to be plugged in again (3 in a row), as a real key does.
        expectCleanError(try cli.runWithKey(["list", "--security-key"], key: key, keyPIN: "4242"), code: 3, mentions: "blocked")
        try key.start()
        #expect(try cli.runWithKey(["list", "--security-key"], key: key, keyPIN: "4242").code == 0)
        #expect(try key.retries() == 8)
    }

    @Test("two keys enrolled, one removed: it no longer opens, the other does; a PIN change and a rotation keep them working; with none left the recovery phrase still opens")
    func twoKeysRemoveAndRecover() throws {
        let blue = try SoftwareFIDO2()
        let spare = try SoftwareFIDO2()
        let cli = try CLI()
        let phrase = try cli.initWithPhrase()
        let id = try #require(try cli.importIDs([cli.file("a.bin", [9, 9])]).first)
        let shape = try cli.keyStoreShape()
        #expect(try cli.runWithKey(["fido2", "enroll", "--name", "blue"], key: blue, pinStdin: true).code == 0)
        #expect(try cli.runWithKey(["fido2", "enroll", "--name", "spare"], key: spare, pinStdin: true).code == 0)
        #expect(try cli.keyStoreShape() == shape)
        for key in [blue, spare] { #expect(try cli.runWithKey(["list", "--security-key"], key: key).code == 0) }

        // A PIN change (keys rotated) and a rekey: the keys follow the new KEK.
        let change = try cli.spawn("/bin/sh", ["-c", "exec \"$0\" pin change --pin-stdin --new-pin-fd 3 3<<'EOF'\nnew passphrase 7\nEOF\n", CLI.binary],
                                   input: Data((cli.pin + "\n").utf8))
        #expect(change.code == 0, "\(change.stderr)")
        #expect(try cli.runPinFD(["rekey"], pin: "new passphrase 7").code == 0)
        for key in [blue, spare] {
            let r = try cli.runWithKey(["export", id, "-o", "-", "--security-key"], key: key)
            #expect(r.code == 0 && r.stdout == Data([9, 9]), "\(r.stderr)")
        }

        #expect(try cli.runPinFD(["fido2", "remove", "1"], pin: "new passphrase 7").code == 0)
        expectCleanError(try cli.runWithKey(["list", "--security-key"], key: blue), code: 3, mentions: "does not open")
        #expect(try cli.runWithKey(["list", "--security-key"], key: spare).code == 0)
        #expect(try cli.run(["fido2", "status"]).out.contains("1  spare"))
        expectCleanError(try cli.runPinFD(["fido2", "remove", "2"], pin: "new passphrase 7"), code: 4, mentions: "no security key number 2")
        let oneKey = try cli.keyStoreShape()
        #expect(try cli.runPinFD(["fido2", "remove", "1"], pin: "new passphrase 7").code == 0)
        let after = try cli.keyStoreShape()
        // A removal is a revocation: the keys rotate, so one more retired archive key is kept
        // (as after any rekey); everything else — the security-key file's size first — is as it was.
        let retired = { (shape: [String]) in shape.filter { $0.hasPrefix("archive-keys/") }.count }
        #expect(retired(after) == retired(oneKey) + 1, "the removal did not rotate the keys")
        // Files only: a folder's size on tmpfs (where `make test` runs) grows with its entries.
        let files = { (shape: [String]) in shape.filter { $0.hasSuffix(" f") && !$0.hasPrefix("archive-keys/") } }
        #expect(files(after) == files(oneKey),
                "with every key removed the file is a decoy of the same size: \(Set(files(after)).symmetricDifference(files(oneKey)))")
        expectCleanError(try cli.runWithKey(["list", "--security-key"], key: spare), code: 4, mentions: "no security key is enrolled")

        // Every key lost, the key store too: the recovery phrase still brings the vault back.
        try FileManager.default.removeItem(atPath: cli.keystore)
        let recovered = try cli.recover(phrase: phrase, newPIN: "after recovery 8")
        #expect(recovered.code == 0, "\(recovered.stderr)")
        #expect(try cli.runPinFD(["export", id, "-o", "-"], pin: "after recovery 8").stdout == Data([9, 9]))
    }

    @Test("the file a thief copies: without the device key it is noise; a key store holds no credential ID in clear")
    func nothingInClear() throws {
        let key = try SoftwareFIDO2()
        let cli = try CLI()
        try cli.initVault()
        #expect(try cli.runWithKey(["fido2", "enroll", "--name", "findme"], key: key, pinStdin: true).code == 0)
        let state = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: key.statePath))) as? [String: Any])
        let credentials = try #require(state["creds"] as? [String: Any]).keys.map { hex in
            Data(stride(from: 0, to: hex.count, by: 2).compactMap { UInt8(hex.dropFirst($0).prefix(2), radix: 16) })
        }
        #expect(credentials.count == 1)
        for path in cli.allFiles(cli.keystore) + cli.allFiles(cli.vault) {
            let content = FileManager.default.contents(atPath: path) ?? Data()
            for credential in credentials { #expect(content.range(of: credential) == nil, "\(path) holds the credential ID in clear") }
            #expect(content.range(of: Data("findme".utf8)) == nil, "\(path) holds the key's name in clear")
        }
    }
}
