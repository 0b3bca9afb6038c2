import Foundation
import Nu11Fuzz
import Testing

/// CI replays the checked-in fuzz corpus (seeds and anything `make fuzz` found) as
/// regression tests: every input must run through its harness without a crash.
@Suite("fuzz corpus replay")
struct FuzzReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus").path

    @Test("every corpus input of every harness", arguments: FuzzEntries.harnesses)
    func replay(_ harness: String) {
        let count = FuzzEntries.replay(harness, folder: Self.corpus + "/" + harness)
        #expect(count >= 3, "the \(harness) corpus has \(count) inputs")
    }
}
