// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Testing
@testable import Nu11Vault

/// The metadata's hand-written JSON says exactly what `JSONEncoder` says: the same object,
/// decoded to the same metadata, whatever the names hold.
@Suite("item metadata JSON")
struct ItemMetadataJSONTests {
    func encoded(_ meta: ItemMetadata) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return [UInt8](try encoder.encode(meta))
    }

    func object(_ bytes: [UInt8]) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
    }

    func decoded(_ bytes: [UInt8]) throws -> ItemMetadata {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(ItemMetadata.self, from: Data(bytes))
    }

    func sameFields(_ a: ItemMetadata, _ b: ItemMetadata) -> Bool {
        a.name == b.name && a.size == b.size && a.type == b.type && a.created == b.created && a.modified == b.modified
            && a.width == b.width && a.height == b.height && a.taken == b.taken && a.camera == b.camera && a.gps == b.gps
            && a.thumbnail == b.thumbnail && a.duration == b.duration && a.motion == b.motion
    }

    static let hostileNames = [
        "plain.txt", "", "quote\"d", "back\\slash", "slash/in/name", "\u{0}nul", "tab\tnew\nline\r\u{1f}\u{7f}",
        "ünïcödé ✓ 🏳️‍🌈 日本語", "\u{2028}\u{2029}", "\\\"\\\"", String(repeating: "x", count: 300), "{\"name\":\"evil\"}",
    ]

    @Test("every field, every optional present or absent, hostile names: the same JSON object and the same metadata as JSONEncoder's")
    func sameAsEncoder() throws {
        var generator = SystemRandomNumberGenerator()
        for (i, name) in Self.hostileNames.enumerated() {
            for round in 0..<8 {
                var meta = ItemMetadata(name: name, size: UInt64.random(in: 0...UInt64.max, using: &generator),
                                        type: round % 2 == 0 ? "image/jpeg" : "application/x-\(name)",
                                        created: Date(timeIntervalSince1970: Double.random(in: -1e9...4e9)),
                                        modified: round % 3 == 0 ? nil : Date(timeIntervalSince1970: Double(round * 1_000_000 + i) + 0.25))
                if round >= 4 {
                    meta.width = Int.random(in: 0...100_000)
                    meta.height = round == 5 ? nil : -1
                    meta.taken = Date(timeIntervalSince1970: 1e-7 * Double(round))
                    meta.camera = name
                    meta.gps = round % 2 == 0
                    meta.thumbnail = true
                    meta.duration = round == 6 ? 1e300 : Double.random(in: 0...1e6)
                    meta.motion = ItemID()
                }
                let fast = try meta.json()
                let reference = try encoded(meta)
                #expect(try object(fast) == object(reference), "name \(i), round \(round)")
                #expect(sameFields(try decoded(fast), meta), "name \(i), round \(round)")
            }
        }
    }

    @Test("a number JSON cannot hold is refused, as the encoder refuses it")
    func notFinite() {
        var meta = ItemMetadata(name: "clip.mp4", size: 1, type: "video/mp4", created: Date())
        meta.duration = .nan
        #expect(throws: (any Error).self) { _ = try meta.json() }
        meta.duration = nil
        meta.taken = Date(timeIntervalSince1970: .infinity)
        #expect(throws: (any Error).self) { _ = try meta.json() }
    }
}
