// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Nu11Fuzz
import Testing

/// CI replays the checked-in fuzz corpus (seeds and anything `make fuzz` found) as
/// regression tests: every input must run through its harness without a crash.
@Suite("fuzz corpus replay")
struct FuzzReplayTests {
    static let corpus = Repo.path("Fuzz/corpus")

    @Test("every corpus input of every harness", arguments: FuzzEntries.harnesses)
    func replay(_ harness: String) {
        let results = FuzzEntries.replay(harness, folder: Self.corpus + "/" + harness)
        #expect(results.count >= 3, "the \(harness) corpus has \(results.count) inputs")
        // The seeds that are valid must be accepted: a harness that rejected everything
        // (or swallowed every error) would otherwise pass.
        let seeds: [String: [String]] = ["n11": ["valid-1-0", "valid-1-100", "valid-1-20000", "valid-2-16384"],
                                         "keystore": ["device", "item-record", "master", "state"],
                                         "settings": ["doc-v1", "doc-v2", "duration"],
                                         "archive": ["portable-0", "portable-1", "portable-2"],
                                         "video-location": ["mp4-keys-loci", "mov-apple-keys", "mov-xyz", "mkv-tags", "webm-tags"]]
        for seed in seeds[harness] ?? [] { #expect(results[seed] == true, "\(harness): valid seed \(seed) rejected") }
    }

    @Test("a valid .n11 seed with any one byte flipped is refused by every decryption path")
    func flippedSeedsRefused() throws {
        for seed in ["valid-1-100", "valid-1-20000", "valid-2-16384"] {
            let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.corpus + "/n11/" + seed)))
            #expect(FuzzEntries.run("n11", data), "\(seed) no longer opens")
            for offset in stride(from: 0, to: data.count, by: max(1, data.count / 97)) {
                var flipped = data
                flipped[offset] ^= 0x01
                #expect(!FuzzEntries.run("n11", flipped), "\(seed): a flip at \(offset) was accepted")
            }
        }
    }
}
