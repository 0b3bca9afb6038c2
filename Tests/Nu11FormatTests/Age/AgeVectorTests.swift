// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation
import Testing
@testable import Nu11Format

/// One CCTV age test vector (C2SP/CCTV `age/testdata`, see Vectors/age/README-CCTV.md).
struct AgeVector {
    let name: String
    var expect = ""
    var payloadHash: String?
    var identities: [String] = []
    var passphrases: [String] = []
    var armored = false
    var compressed = false
    var file: [UInt8] = []

    init(name: String, contents: [UInt8]) throws {
        self.name = name
        var index = 0
        // "key: value" lines up to the first empty line; the age file follows.
        while index < contents.count {
            guard let lf = contents[index...].firstIndex(of: 0x0A) else { throw Nu11Error(.corrupted, "\(name): no blank line") }
            let line = String(decoding: contents[index..<lf], as: UTF8.self)
            index = lf + 1
            if line.isEmpty { break }
            guard let colon = line.range(of: ": ") else { throw Nu11Error(.corrupted, "\(name): bad line \(line)") }
            let key = String(line[..<colon.lowerBound]), value = String(line[colon.upperBound...])
            switch key {
            case "expect": expect = value
            case "payload": payloadHash = value
            case "identity": identities.append(value)
            case "passphrase": passphrases.append(value)
            case "armored": armored = value == "yes"
            case "compressed": compressed = value == "zlib"
            default: break
            }
        }
        file = Array(contents[index...])
        if compressed { file = try inflate(file) }
    }
}

@Suite("age: CCTV test vectors")
struct AgeVectorTests {
    static func loadAll() throws -> [AgeVector] {
        let folder = try Vectors.url("age/testdata")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        return try names.map { name in
            try AgeVector(name: name, contents: Array(Data(contentsOf: folder.appendingPathComponent(name))))
        }
    }

    static func outcome(_ error: any Error) -> String {
        switch AgeFailure.of(error) {
        case .armor: "armor failure"
        case .header: "header failure"
        case .headerMAC: "HMAC failure"
        case .noMatch: "no match"
        case .payload: "payload failure"
        case .key: "key failure"
        case nil: "other: \(error)"
        }
    }

    static func run(_ v: AgeVector, step: Int? = nil) throws -> (outcome: String, released: [UInt8], message: String) {
        let identities = try v.identities.map { try AgeIdentity(parsing: $0) }
            + v.passphrases.map { pass in
                var bytes = Array(pass.utf8)
                return AgeIdentity.passphrase(SecretBytes(consuming: &bytes))
            }
        var sink = MemorySink()
        do {
            if let step {
                try Age.decrypt(from: TricklingSource(v.file, step: step), to: &sink, identities: identities,
                                armor: v.armored ? .armored : .detect)
            } else {
                try Age.decrypt(from: MemorySource(v.file), to: &sink, identities: identities, armor: v.armored ? .armored : .detect)
            }
            return ("success", sink.bytes, "")
        } catch {
            return (outcome(error), sink.bytes, "\(error)")
        }
    }

    @Test("every vector gives its expected outcome, and the released plaintext its hash")
    func everyVector() throws {
        let vectors = try Self.loadAll()
        // All 143 files run: a file silently skipped or lost from the resources fails here.
        #expect(vectors.count == 143)
        var counts = [String: Int]()
        for v in vectors {
            counts[v.expect, default: 0] += 1
            let (outcome, released, message) = try Self.run(v)
            #expect(outcome == v.expect, "\(v.name): expected \(v.expect), got \(outcome) (\(message))")
            if let hash = v.payloadHash, outcome == "success" || outcome == "payload failure" {
                #expect(Hex.encode(SHA256.hash(data: released)) == hash, "\(v.name): released plaintext differs")
            }
            if outcome != "success" && outcome != "payload failure" { #expect(released.isEmpty, "\(v.name): released bytes") }
        }
        #expect(counts == ["success": 26, "no match": 13, "header failure": 62, "HMAC failure": 1,
                           "payload failure": 19, "armor failure": 22])
        // The post-quantum cases are all there.
        #expect(vectors.filter { $0.name.hasPrefix("hybrid") || $0.name == "armor_hybrid" }.count == 19)
    }

    @Test("the vectors give the same outcome when the file arrives a few bytes at a time")
    func trickled() throws {
        for v in try Self.loadAll() where v.file.count < 4096 {
            let (outcome, _, message) = try Self.run(v, step: 7)
            #expect(outcome == v.expect, "\(v.name) trickled: expected \(v.expect), got \(outcome) (\(message))")
        }
    }
}
