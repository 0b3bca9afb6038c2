// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport
@testable import Nu11Format

/// The tar inside a share: what we write reads back (long and non-ASCII names through pax,
/// dates, empty files), a tar that GNU tar made of a folder reads as its regular files, and
/// damaged tars are refused.
@Suite("share tar")
struct ShareTarTests {
    static func write(_ entries: [(String, [UInt8], Date)]) throws -> [UInt8] {
        var out = [UInt8]()
        for (name, bytes, date) in entries {
            out += ShareTar.header(name: name, size: UInt64(bytes.count), modified: date) + bytes + ShareTar.padding(UInt64(bytes.count))
        }
        return out + ShareTar.end
    }

    static func read(_ tar: [UInt8]) throws -> [(String, [UInt8], Date?)] {
        let reader = ShareTarReader(MemorySource(tar))
        #expect(try reader.isTar())
        var out: [(String, [UInt8], Date?)] = []
        while let entry = try reader.next() {
            var source = reader.content()
            var bytes = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 1000)
            while true {
                let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
                if n == 0 { break }
                bytes += buffer[..<n]
            }
            #expect(UInt64(bytes.count) == entry.size)
            out.append((entry.name, bytes, entry.modified))
        }
        return out
    }

    @Test("what the share writes reads back: names (pax for long and non-ASCII ones), contents, dates")
    func roundTrip() throws {
        let long = String(repeating: "ü", count: 80) + ".jpg"
        let entries: [(String, [UInt8], Date)] = [
            ("a.txt", Array("hello".utf8), Date(timeIntervalSince1970: 1_700_000_000)),
            (long, (0..<1500).map { UInt8(truncatingIfNeeded: $0) }, Date(timeIntervalSince1970: 1_600_000_000)),
            ("empty", [], Date(timeIntervalSince1970: 1)),
        ]
        let back = try Self.read(try Self.write(entries))
        #expect(back.map(\.0) == entries.map(\.0))
        #expect(back.map(\.1) == entries.map(\.1))
        #expect(back.map(\.2) == entries.map(\.2))
    }

    @Test("a tar made by GNU tar of a folder reads as its regular files (folders skipped, names are the last component)")
    func gnuTar() throws {
        let folder = (ProcessInfo.processInfo.environment["TMPDIR"] ?? NSTemporaryDirectory()) + "/tar-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/in/sub", withIntermediateDirectories: true)
        let long = "sub/" + String(repeating: "é", count: 70) + ".bin"
        try Data("one".utf8).write(to: URL(fileURLWithPath: folder + "/in/one.txt"))
        try Data(repeating: 9, count: 70_000).write(to: URL(fileURLWithPath: folder + "/in/" + long))
        #expect(Program.run("/usr/bin/tar", ["--format=pax", "-cf", folder + "/t.tar", "-C", folder, "in"]) == 0)
        let entries = try Self.read(Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/t.tar"))))
        #expect(Set(entries.map(\.0)) == ["one.txt", String(long.dropFirst(4))])
        #expect(entries.first { $0.0 == "one.txt" }?.1 == Array("one".utf8))
    }

    @Test("damaged tars are refused", arguments: ["checksum", "cut", "trailing", "no end"])
    func damaged(kind: String) throws {
        var tar = try Self.write([("a.txt", Array("hello".utf8), Date())])
        switch kind {
        case "checksum": tar[0] ^= 1
        case "cut": tar = Array(tar.prefix(600))
        case "trailing": tar += [UInt8](repeating: 0, count: 512) + [1] + [UInt8](repeating: 0, count: 511)
        default: tar = Array(tar.dropLast(1024))
        }
        let reader = ShareTarReader(MemorySource(tar))
        #expect(throws: Nu11Error.self, "\(kind) accepted") {
            while let _ = try reader.next() {
                var source = reader.content()
                var buffer = [UInt8](repeating: 0, count: 100)
                while try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }) > 0 {}
            }
        }
    }
}
