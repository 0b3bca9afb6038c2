// SPDX-License-Identifier: GPL-3.0-or-later

/// Tells a video that plays from one that has stopped: a decoder that sends nothing while
/// nothing is queued to show, for `limit` seconds of playing (paused time does not count),
/// has stalled — the player then stops it and says so, rather than show "Pause" over a still
/// picture for ever (issue 58). A decoder that waits because the queue is full is not stalled:
/// the queue draining as frames fall due is progress.
public struct PlaybackWatch: Sendable {
    public static let defaultLimit = 20.0
    public let limit: Double
    private var lastCount = -1
    private var lastChange = 0.0
    private var pausedAt: Double?

    public init(limit: Double = PlaybackWatch.defaultLimit) { self.limit = limit }

    /// Called on each tick: `now` (monotonic seconds), how many messages the decoder has sent
    /// so far, whether frames wait to be shown, whether the user paused. True once stalled.
    public mutating func stalled(now: Double, messages: Int, queued: Bool, paused: Bool) -> Bool {
        if paused {
            if pausedAt == nil { pausedAt = now }
            return false
        }
        if let pausedAt {
            lastChange += now - pausedAt
            self.pausedAt = nil
        }
        if messages != lastCount || queued {
            lastCount = messages
            lastChange = now
            return false
        }
        return now - lastChange > limit
    }
}
