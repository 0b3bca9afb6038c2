// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport
@testable import Nu11Format

/// Round trips with Debian's `age` 1.1.1 (X25519 and scrypt, both ways, armored and not).
/// age reads a passphrase only from a terminal: `script` gives it one.
@Suite("age: round trips with Debian's age", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")))
struct AgeInteropTests {
    let folder: String

    init() throws {
        folder = (ProcessInfo.processInfo.environment["TMPDIR"] ?? NSTemporaryDirectory()) + "/age-interop-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { folder + "/" + name }

    func write(_ bytes: [UInt8], _ name: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path(name)))
    }

    func read(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path(name)))) }

    /// Runs `age` (or `age-keygen`); with a passphrase, under `script` so that age finds a terminal.
    func age(_ args: [String], passphrase: String? = nil, tool: String = "/usr/bin/age") throws -> Int32? {
        guard let passphrase else { return Program.run(tool, args, directory: folder) }
        // Typed after a pause (twice: encryption confirms): age flushes the terminal's input
        // when it turns echo off, so what arrives before would be lost.
        let command = ([tool] + args).map { "'\($0)'" }.joined(separator: " ")
        let typing = "(sleep 1; printf '%s\\n' \"$1\"; sleep 1; printf '%s\\n' \"$1\") | script -q -e -c \"$2\" /dev/null"
        let process = try Program.start("/bin/sh", ["-c", typing, "sh", passphrase, command], directory: folder)
        process.waitUntilExit()
        return process.terminationStatus
    }

    static let sizes = [0, 65_536, 200_003]

    @Test("X25519: our files open with age -d; age -e files open here; armored and not")
    func x25519() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try age(["-o", path("key.txt"), ], tool: "/usr/bin/age-keygen") == 0)
        let keyFile = String(decoding: try read("key.txt"), as: UTF8.self)
        let identity = try #require(try AgeIdentity.parseFile(keyFile).first)
        let recipient = try #require(identity.recipient)
        #expect(keyFile.contains("# public key: \(recipient.encoded)"))
        for size in Self.sizes {
            let plain = AgeFormatTests.plaintext(size)
            try write(plain, "plain")
            for armor in [false, true] {
                // Ours → age.
                try write(try AgeFormatTests.encrypt(plain, to: [recipient], armor: armor), "ours.age")
                try? FileManager.default.removeItem(atPath: path("out1"))
                #expect(try age(["-d", "-i", path("key.txt"), "-o", path("out1"), path("ours.age")]) == 0)
                // age makes its output file at the first byte: an empty plaintext leaves none.
                let opened = size == 0 && !FileManager.default.fileExists(atPath: path("out1")) ? [] : try read("out1")
                #expect(opened == plain, "age -d of our \(size)-byte file (armor \(armor))")
                // age → ours.
                try? FileManager.default.removeItem(atPath: path("theirs.age"))
                #expect(try age(["-e", "-r", recipient.encoded] + (armor ? ["-a"] : []) + ["-o", path("theirs.age"), path("plain")]) == 0)
                #expect(try AgeFormatTests.decrypt(try read("theirs.age"), with: [identity]) == plain,
                        "our decryption of age -e's \(size)-byte file (armor \(armor))")
            }
        }
    }

    /// Sizes around the sealing slots (16 chunks, 1 MiB; four of them in a ring): one slot
    /// exactly (sealed on the caller's thread), one byte more (the sealer thread), the whole
    /// ring exactly, and past it (slots reused).
    static let slotSizes = [1 << 20, (1 << 20) + 1, 4 << 20, (5 << 20) + 65_543]

    @Test("payloads of several sealing slots, written in odd pieces: age -d opens them", arguments: AgeInteropTests.slotSizes)
    func slots(size: Int) throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try age(["-o", path("key.txt")], tool: "/usr/bin/age-keygen") == 0)
        let identity = try #require(try AgeIdentity.parseFile(String(decoding: try read("key.txt"), as: UTF8.self)).first)
        let plain = AgeFormatTests.plaintext(size)
        var encryptor = try AgeEncryptor(to: MemorySink(), recipients: [try #require(identity.recipient)])
        var at = 0, step = 0
        let pieces = [1, 65_535, 3, 1 << 20, 700_001, 65_536, 17]
        try plain.withUnsafeBytes { all in
            while at < all.count {
                let n = min(pieces[step % pieces.count], all.count - at)
                try encryptor.write(UnsafeRawBufferPointer(rebasing: all[at..<(at + n)]))
                at += n
                step += 1
            }
        }
        try write(try encryptor.finish().bytes, "ours.age")
        #expect(try age(["-d", "-i", path("key.txt"), "-o", path("out1"), path("ours.age")]) == 0)
        #expect(try read("out1") == plain, "age -d of our \(size)-byte file")
        #expect(try AgeFormatTests.decrypt(try read("ours.age"), with: [identity]) == plain)
    }

    @Test("scrypt: our passphrase files open with age -d; age -p files open here; armored and not")
    func scrypt() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let passphrase = "interop passphrase 1"
        var bytes = Array(passphrase.utf8)
        let secret = SecretBytes(consuming: &bytes)
        let plain = AgeFormatTests.plaintext(70_001)
        try write(plain, "plain")
        for armor in [false, true] {
            var source = MemorySource(plain)
            var sink = MemorySink()
            try Age.encrypt(from: &source, to: &sink, passphrase: secret, workFactor: 14, armor: armor)
            try write(sink.bytes, "ours.age")
            try? FileManager.default.removeItem(atPath: path("out1"))
            #expect(try age(["-d", "-o", path("out1"), path("ours.age")], passphrase: passphrase) == 0)
            #expect(try read("out1") == plain, "age -d of our passphrase file (armor \(armor))")
            try? FileManager.default.removeItem(atPath: path("theirs.age"))
            #expect(try age(["-p"] + (armor ? ["-a"] : []) + ["-o", path("theirs.age"), path("plain")], passphrase: passphrase) == 0)
            #expect(try AgeFormatTests.decrypt(try read("theirs.age"), with: [.passphrase(secret)]) == plain,
                    "our decryption of age -p's file (armor \(armor))")
        }
    }
}
