// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import Nu11Media

/// Issue 58: a decoder that stops sending is told from a video that plays, pauses, or waits
/// on a full queue.
@Suite("playback watch")
struct PlaybackWatchTests {
    /// The watch's verdicts at each (time, messages so far, queued, paused) in turn.
    static func verdicts(_ steps: [(Double, Int, Bool, Bool)], limit: Double = 20) -> [Bool] {
        var watch = PlaybackWatch(limit: limit)
        return steps.map { watch.stalled(now: $0.0, messages: $0.1, queued: $0.2, paused: $0.3) }
    }

    @Test("silence with nothing queued for longer than the limit is a stall; before it, not")
    func stall() {
        #expect(Self.verdicts([(100, 0, false, false), (119.9, 0, false, false), (120.1, 0, false, false)]) == [false, false, true])
    }

    @Test("messages arriving, or frames queued (the decoder waits for room), are not a stall")
    func progress() {
        let arriving = stride(from: 0.0, to: 100, by: 5).map { ($0, Int($0), false, false) }
        let queued = stride(from: 100.0, to: 200, by: 5).map { ($0, 99, true, false) }
        let verdicts = Self.verdicts(arriving + queued + [(215, 99, false, false), (221, 99, false, false)])
        #expect(verdicts.dropLast().allSatisfy { !$0 }, "\(verdicts)")
        #expect(verdicts.last == true)
    }

    @Test("paused time does not count toward the limit; after resuming it counts again")
    func paused() {
        let verdicts = Self.verdicts([(0, 3, false, false), (10, 3, false, true), (500, 3, false, true),
                                      (505, 3, false, false), (515, 3, false, false), (516, 3, false, false)])
        #expect(verdicts == [false, false, false, false, false, true])
    }
}
