// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

/// Issue 59: sharing with age. A post-quantum share from vault A to vault B's identity,
/// imported there byte for byte with names and dates; what `age -d` makes of a classical
/// share; an `age -p` file imported with its passphrase; and the refusals, which import
/// nothing.
@Suite("share and receive with age")
struct ShareTests {
    static let ageAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/age")

    /// Three items in `cli`'s vault with known modification times; their IDs and contents by name.
    func seed(_ cli: CLI) throws -> (ids: [String], files: [String: (bytes: [UInt8], modified: Date)]) {
        var files: [String: (bytes: [UInt8], modified: Date)] = [:]
        var paths: [String] = []
        let contents: [(String, [UInt8])] = [
            ("notes.txt", Array("a short note\n".utf8)),
            ("Straße ü — long name with spaces and more than one hundred bytes in its name so that pax carries it.bin",
             (0..<70_001).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }),
            ("empty.dat", []),
        ]
        for (n, (name, bytes)) in contents.enumerated() {
            let path = cli.file(name, bytes)
            let date = Date(timeIntervalSince1970: 1_600_000_000 + Double(n) * 86_400)
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
            files[name] = (bytes, date)
            paths.append(path)
        }
        return (try cli.importIDs(paths), files)
    }

    func items(_ cli: CLI) throws -> [String: [String: Any]] {
        Dictionary(uniqueKeysWithValues: try cli.listJSON(["--all"]).compactMap { item in (item["name"] as? String).map { ($0, item) } })
    }

    @Test("a post-quantum share from vault A to vault B's identity imports in B: the same bytes, names and dates; the log names no item")
    func postQuantumShare() throws {
        let a = try CLI(), b = try CLI(pin: "the other vault")
        try a.initVault()
        try b.initVault()
        let (ids, files) = try seed(a)
        let identity = try b.run(["identity", "--post-quantum"], pinStdin: true)
        #expect(identity.code == 0, "\(identity.stderr)")
        let recipient = identity.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(recipient.hasPrefix("age1pq1") && recipient.count > 1900)
        let out = a.root + "/to-b.age"
        let shared = try a.run(["share", "--to", recipient, "-o", out] + ids, pinStdin: true)
        #expect(shared.code == 0, "\(shared.stderr)")
        let file = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(file.starts(with: Data("age-encryption.org/v1\n-> mlkem768x25519 ".utf8)))
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let imported = try b.run(["import", out], pinStdin: true)
        #expect(imported.code == 0, "\(imported.stderr)")
        let there = try items(b)
        #expect(there.count == 3)
        for (name, expected) in files {
            let item = try #require(there[name], "\(name) missing in B: \(there.keys)")
            let id = try #require(item["id"] as? String)
            #expect(try b.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data(expected.bytes), "\(name): bytes differ")
            let modified = try #require(item["modified"] as? String)
            #expect(modified.hasPrefix(ISO8601DateFormatter().string(from: expected.modified).prefix(19)), "\(name): modified \(modified)")
        }
        // The sender's log has the share (count, recipient fingerprint), never a name.
        let log = try a.run(["log", "--json"], pinStdin: true)
        #expect(log.out.contains("\"share\"") && log.out.contains("post-quantum"))
        #expect(!log.out.contains("notes.txt") && !log.out.contains("Straße"))
        // A's own identity is not B's: the same file does not open in A.
        let wrong = try a.run(["import", out], pinStdin: true)
        expectCleanError(wrong, code: 3, mentions: "no identity")
        #expect(try items(a).count == 3)
    }

    @Test("a share cut short, or with its last chunk flipped, imports nothing")
    func damagedShare() throws {
        let a = try CLI(), b = try CLI(pin: "the other vault")
        try a.initVault()
        try b.initVault()
        let (ids, _) = try seed(a)
        let recipient = try b.run(["identity", "--post-quantum"], pinStdin: true).out.trimmingCharacters(in: .whitespacesAndNewlines)
        let out = a.root + "/to-b.age"
        #expect(try a.run(["share", "--to", recipient, "-o", out] + ids, pinStdin: true).code == 0)
        let file = try Data(contentsOf: URL(fileURLWithPath: out))
        var flipped = file
        flipped[flipped.count - 3] ^= 0x40
        for (label, bytes) in [("cut", file.prefix(file.count - 40)), ("flipped last chunk", flipped), ("cut at a chunk", file.prefix(file.count - 70))] {
            let path = b.root + "/bad.age"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let r = try b.run(["import", path], pinStdin: true)
            expectCleanError(r, code: 5, mentions: "age payload")
            #expect(try b.listJSON(["--all"]).isEmpty, "\(label): something was imported")
        }
    }

    @Test("items of MiBs (decrypted by the age workers straight into their slots) share byte for byte next to small ones; a damaged or cut one is refused in one line naming it, and no file is left")
    func largeItemsAndDamage() throws {
        let a = try CLI(), b = try CLI(pin: "the other vault")
        try a.initVault()
        try b.initVault()
        let contents: [(String, [UInt8])] = [
            ("big.bin", (0..<((3 << 20) + 4321)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }),
            ("small.txt", (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
            ("exact.bin", (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ $0 >> 13) }),
            ("chunks.bin", (0..<(5 * 16_384)).map { UInt8(truncatingIfNeeded: $0 >> 3) }),
        ]
        let ids = try a.importIDs(contents.map { a.file($0.0, $0.1) })
        let recipient = try b.run(["identity", "--post-quantum"], pinStdin: true).out.trimmingCharacters(in: .whitespacesAndNewlines)
        let out = a.root + "/big.age"
        let shared = try a.run(["share", "--to", recipient, "-o", out] + ids, pinStdin: true)
        #expect(shared.code == 0, "\(shared.stderr)")
        let imported = try b.run(["import", out], pinStdin: true)
        #expect(imported.code == 0, "\(imported.stderr)")
        let there = try items(b)
        for (name, bytes) in contents {
            let id = try #require(there[name]?["id"] as? String, "\(name) missing in B")
            #expect(try b.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data(bytes), "\(name): bytes differ")
        }

        // The big item's stored file damaged: flipped in the middle, in its last chunk, cut
        // inside its final chunk, cut at a chunk boundary (no final chunk), grown.
        let relative = try #require(FileManager.default.enumerator(atPath: a.vault)?.compactMap { $0 as? String }
            .first { $0.hasSuffix("\(ids[0]).n11") })
        let stored = a.vault + "/" + relative
        let original = try Data(contentsOf: URL(fileURLWithPath: stored))
        let finalChunk = 4321 + 16
        var middle = original, last = original, grown = original
        middle[original.count / 2] ^= 0x10
        last[original.count - 3] ^= 0x01
        grown.append(0)
        let damaged: [(String, Data)] = [("flipped in the middle", middle), ("flipped in the last chunk", last),
                                         ("cut", original.prefix(original.count - 40)),
                                         ("cut at a chunk", original.prefix(original.count - finalChunk)), ("grown", grown)]
        for (label, bytes) in damaged {
            try bytes.write(to: URL(fileURLWithPath: stored))
            try? FileManager.default.removeItem(atPath: out)
            let r = try a.run(["share", "--to", recipient, "-o", out] + ids, pinStdin: true)
            expectCleanError(r, code: 5, mentions: ids[0])
            #expect(!FileManager.default.fileExists(atPath: out), "\(label): a share file was left")
            let left = try FileManager.default.contentsOfDirectory(atPath: a.root).filter { $0.contains("n11tmp") }
            #expect(left.isEmpty, "\(label): a temporary file was left: \(left)")
        }
        try original.write(to: URL(fileURLWithPath: stored))
        try? FileManager.default.removeItem(atPath: out)
        #expect(try a.run(["share", "--to", recipient, "-o", out, ids[0]], pinStdin: true).code == 0)
    }

    @Test("a malformed recipient is one line with a hint, before the PIN is asked")
    func badRecipient() throws {
        let a = try CLI()
        try a.initVault()
        let (ids, _) = try seed(a)
        for bad in ["age1notarecipient", "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"] {
            let r = try a.run(["share", "--to", bad, "-o", a.root + "/x.age"] + ids, stdin: Data())
            expectCleanError(r, code: 64, mentions: "age1pq1")
            #expect(!r.stderr.contains("GFPYYSJZ"), "the secret key was echoed")
            #expect(!FileManager.default.fileExists(atPath: a.root + "/x.age"))
        }
        let mixed = try a.run(["share", "--to", "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj", "--to",
                               try a.run(["identity", "--post-quantum"], pinStdin: true).out.trimmingCharacters(in: .whitespacesAndNewlines),
                               "-o", a.root + "/x.age"] + ids, pinStdin: true)
        expectCleanError(mixed, code: 64, mentions: "cannot share one file")
    }

    @Test("a classical share opens with age -d and untars to the items; an age -p file imports with its passphrase",
          .enabled(if: ShareTests.ageAvailable))
    func withDebianAge() throws {
        let a = try CLI()
        try a.initVault()
        let (ids, files) = try seed(a)
        #expect(Program.run("/usr/bin/age-keygen", ["-o", a.root + "/key.txt"]) == 0)
        let key = try String(contentsOfFile: a.root + "/key.txt", encoding: .utf8)
        let recipient = try #require(key.split(separator: "\n").first { $0.hasPrefix("# public key: ") }).dropFirst(14)
        let out = a.root + "/classical.age"
        let shared = try a.run(["share", "--armor", "--to", String(recipient), "-o", out] + ids, pinStdin: true)
        #expect(shared.code == 0, "\(shared.stderr)")
        let untar = a.root + "/untar"
        try FileManager.default.createDirectory(atPath: untar, withIntermediateDirectories: true)
        let r = try a.spawn("/bin/sh", ["-c", "age -d -i \"$1\" \"$2\" | tar -x -C \"$3\"", "sh", a.root + "/key.txt", out, untar])
        #expect(r.code == 0, "\(r.stderr)")
        for (name, expected) in files {
            let path = untar + "/" + name
            #expect(FileManager.default.contents(atPath: path) == Data(expected.bytes), "age -d | tar x: \(name)")
            let date = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
            #expect(date == expected.modified, "\(name): date \(String(describing: date))")
        }

        // age -p (a terminal from `script`), then import with the passphrase on a descriptor.
        let plain = a.file("secret.pdf", Array("%PDF-1.4 not really\n".utf8))
        let passphrase = "share passphrase 7"
        // Typed after a pause: age flushes the terminal's input when it turns echo off.
        let typing = "(sleep 1; printf '%s\\n' \"$1\"; sleep 1; printf '%s\\n' \"$1\") | script -q -e -c \"age -p -o '$2' '$3'\" /dev/null"
        let p = try a.spawn("/bin/sh", ["-c", typing, "sh", passphrase, a.root + "/secret.pdf.age", plain])
        #expect(p.code == 0, "\(p.stderr)")
        let script = "exec \"$0\" import \"$1\" --pin-fd 3 --passphrase-fd 4 3<<'A' 4<<'B'\n\(a.pin)\nA\n\(passphrase)\nB\n"
        let imported = try a.spawn("/bin/sh", ["-c", script, CLI.binary, a.root + "/secret.pdf.age"])
        #expect(imported.code == 0, "\(imported.stderr)")
        let item = try #require(try items(a)["secret.pdf"])
        let id = try #require(item["id"] as? String)
        #expect(try a.run(["export", id, "-o", "-"], pinStdin: true).stdout == Data("%PDF-1.4 not really\n".utf8))
        // A wrong passphrase: nothing.
        let wrongScript = "exec \"$0\" import \"$1\" --pin-fd 3 --passphrase-fd 4 3<<'A' 4<<'B'\n\(a.pin)\nA\nnot it\nB\n"
        let wrong = try a.spawn("/bin/sh", ["-c", wrongScript, CLI.binary, a.root + "/secret.pdf.age"])
        expectCleanError(wrong, code: 3)
        #expect(try items(a).count == 4)
    }

    @Test("after rekey the recipients change, and a share sent to the old recipient still imports")
    func rotation() throws {
        let a = try CLI(), b = try CLI(pin: "the other vault")
        try a.initVault()
        try b.initVault()
        let (ids, _) = try seed(a)
        let old = try b.run(["identity", "--classical"], pinStdin: true).out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try b.run(["rekey"], pinStdin: true).code == 0)
        let new = try b.run(["identity", "--classical"], pinStdin: true).out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(old.hasPrefix("age1") && new.hasPrefix("age1") && old != new, "rekey kept the recipient")
        let out = a.root + "/to-old.age"
        #expect(try a.run(["share", "--to", old, "-o", out, ids[0]], pinStdin: true).code == 0)
        let r = try b.run(["import", out], pinStdin: true)
        #expect(r.code == 0, "a share to the recipient from before the rekey no longer imports: \(r.stderr)")
        #expect(try b.listJSON(["--all"]).count == 1)
    }

    @Test("a share removes a photo's location by default (exiftool finds no GPS after age -d | tar x); --keep-location keeps it",
          .enabled(if: ShareTests.ageAvailable && PhotoFixtures.tool("exiftool") != nil))
    func location() throws {
        let a = try CLI()
        try a.initVault()
        let land = try PhotoFixtures.orientedJPEGWithGPS(a)
        let id = try a.importIDs([land])[0]
        #expect(Program.run("/usr/bin/age-keygen", ["-o", a.root + "/key.txt"]) == 0)
        let key = try String(contentsOfFile: a.root + "/key.txt", encoding: .utf8)
        let recipient = String(try #require(key.split(separator: "\n").first { $0.hasPrefix("# public key: ") }).dropFirst(14))
        for (flag, keeps) in [([String](), false), (["--keep-location"], true)] {
            let out = a.root + "/photo-\(keeps).age", folder = a.root + "/untar-\(keeps)"
            #expect(try a.run(["share", "--to", recipient, "-o", out, id] + flag, pinStdin: true).code == 0)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let r = try a.spawn("/bin/sh", ["-c", "age -d -i \"$1\" \"$2\" | tar -x -C \"$3\"", "sh", a.root + "/key.txt", out, folder])
            #expect(r.code == 0, "\(r.stderr)")
            let gps = try PhotoFixtures.run(a, "exiftool", ["-a", "-s", "-gps:all", folder + "/land.jpg"]).out
            #expect(gps.contains("GPSLatitude") == keeps, "\(flag): \(gps)")
        }
        let log = try a.run(["log", "--json"], pinStdin: true).out
        #expect(log.contains("location removed") && log.contains("location kept"))
    }
}
