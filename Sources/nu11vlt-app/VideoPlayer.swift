// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Glibc
import Nu11Format
import Nu11Media
import Synchronization

/// A video playing in the viewer (issue 58). Nothing of it is decoded here and no plaintext
/// file is made: a reading thread sends the video's bytes (held in memory, as a photo's are)
/// to an image helper of its own (`VideoDecoder`, the same lock-down as every decode), reads
/// back checked raw RGBA frames and PCM (`VideoStream.Reader`), wraps each frame in a
/// GdkMemoryTexture and queues a few of them; the sound goes straight to the desktop's sound
/// server when there is one (`n11g_sound_*`), else the video plays silently. On the main
/// thread a 10 ms GLib timeout shows the latest frame that is due by its presentation time.
/// `stop` (leaving the video, the viewer, a lock, quit) kills the helper.
@MainActor
final class VideoPlayer {
    private let feed = PlayFeed()
    private var timer: UInt32 = 0
    private(set) var paused = false
    /// The monotonic time (seconds) at which presentation time 0 is due; nil before the first frame.
    private var origin: Double?
    private var pausedAt: Double?
    private let show: @MainActor (TextureBox) -> Void
    private let ended: @MainActor (String?) -> Void
    private var stopped = false
    /// Frames handed to `show` (for `--timings`).
    private var shown = 0
    /// A decoder that stops answering ends playback with a message (`PlaybackWatch`).
    private var watch = PlaybackWatch()

    /// Starts playing `video` (consumed: zeroed by the reading thread once sent), frames at
    /// most `maxSide` on the long side; `show` gets each frame when it is due, `ended` once,
    /// with nil at the end of the video or a one-line reason.
    init(video: [UInt8], maxSide: Int, show: @escaping @MainActor (TextureBox) -> Void, ended: @escaping @MainActor (String?) -> Void) {
        self.show = show
        self.ended = ended
        let feed = self.feed
        let side = min(max(maxSide, 16), VideoStream.maxSide)
        Thread.detachNewThread { PlayFeed.read(video, maxSide: side, into: feed) }
        timer = every(milliseconds: 10) { [weak self] in self?.tick() ?? false }
    }

    private static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    private func tick() -> Bool {
        guard !stopped else { return false }
        if paused {
            _ = watch.stalled(now: Self.now(), messages: feed.messages(), queued: true, paused: true)
            return true
        }
        let now = Self.now()
        var latest: TextureBox?
        while let due = feed.peekTime() {
            if origin == nil { origin = now - Double(due) / 1e6 }
            guard let origin, Double(due) / 1e6 <= now - origin else { break }
            latest = feed.pop()
        }
        if let latest {
            shown += 1
            if shown == 1 { Timings.event("play-first-frame-shown") }
            show(latest)
        }
        if feed.outcome() == nil, watch.stalled(now: now, messages: feed.messages(), queued: feed.peekTime() != nil, paused: false) {
            Timings.event("play-stalled shown \(shown)")
            timer = 0
            stop()
            ended("its decoder stopped answering for \(Int(watch.limit)) seconds. Play it again; if it stops again, export it and play it in another player")
            return false
        }
        if let outcome = feed.outcome(), feed.peekTime() == nil {
            Timings.event("play-ended shown \(shown)")
            timer = 0
            stop()
            ended(outcome.reason)
            return false
        }
        return true
    }

    func pause() {
        guard !paused, !stopped else { return }
        paused = true
        pausedAt = Self.now()
        feed.setPaused(true)
    }

    func resume() {
        guard paused, !stopped else { return }
        paused = false
        if let pausedAt, let origin { self.origin = origin + (Self.now() - pausedAt) }
        pausedAt = nil
        feed.setPaused(false)
    }

    /// Ends playback at once: the helper is killed, the queued frames dropped.
    func stop() {
        guard !stopped else { return }
        Timings.event("play-stopped shown \(shown)")
        stopped = true
        if timer != 0 { g_source_remove(timer) }
        timer = 0
        feed.cancel()
    }
}

/// What the reading thread hands the main thread: up to `capacity` frames (a semaphore of free
/// slots: the reading thread waits for one, the main thread frees one per frame it takes), and
/// how the stream ended; the rest of the state under a `Mutex`.
final class PlayFeed: Sendable {
    struct Outcome: Sendable { var reason: String? }
    struct State: ~Copyable {
        var frames: [(pts: Int64, texture: TextureBox)] = []
        var finished: Outcome?
        var cancelled = false
        var paused = false
        var decoder: VideoDecoder?
        /// Messages read from the decoder so far (frames, sound, the end).
        var messages = 0
    }
    private let state = Mutex(State())
    /// Half a second at 25 frames a second: the sound, decoded in the same stream, runs ahead by as much.
    static let capacity = 12
    private let free = DispatchSemaphore(value: PlayFeed.capacity)

    func peekTime() -> Int64? { state.withLock { $0.frames.first?.pts } }

    func pop() -> TextureBox? {
        let box: TextureBox? = state.withLock { $0.frames.isEmpty ? nil : $0.frames.removeFirst().texture }
        if box != nil { free.signal() }
        return box
    }

    func outcome() -> Outcome? { state.withLock { $0.finished } }

    func messages() -> Int { state.withLock { $0.messages } }

    fileprivate func noteMessage() { state.withLock { $0.messages += 1 } }

    func setPaused(_ value: Bool) { state.withLock { $0.paused = value } }

    func cancel() {
        let decoder: VideoDecoder? = state.withLock {
            $0.cancelled = true
            $0.frames.removeAll()
            return $0.decoder
        }
        decoder?.cancel()
        free.signal()  // a reading thread waiting for a slot wakes and sees the cancel
    }

    /// Waits for a free slot; false once cancelled.
    private func push(_ pts: Int64, _ texture: TextureBox) -> Bool {
        free.wait()
        return state.withLock {
            guard !$0.cancelled else { return false }
            $0.frames.append((pts, texture))
            return true
        }
    }

    /// Waits while paused (the sound stops with the picture); false once cancelled.
    private func waitWhilePaused() -> Bool {
        while true {
            let (paused, cancelled) = state.withLock { ($0.paused, $0.cancelled) }
            if cancelled { return false }
            if !paused { return true }
            usleep(20_000)
        }
    }

    private func attach(_ decoder: VideoDecoder) -> Bool {
        state.withLock {
            $0.decoder = decoder
            return !$0.cancelled
        }
    }

    private func finish(_ reason: String?) {
        Timings.event(reason.map { "play-stream-failed: " + $0 } ?? "play-stream-ended")
        state.withLock { if $0.finished == nil { $0.finished = Outcome(reason: reason) } }
    }

    /// The reading thread: the helper, its messages, the sound.
    static func read(_ video: [UInt8], maxSide: Int, into feed: PlayFeed) {
        var video = video
        var sound: UnsafeMutableRawPointer?
        var soundFormat = (0, 0)
        defer { n11g_sound_close(sound) }
        let decoder: VideoDecoder
        do {
            decoder = try video.withUnsafeBytes { try VideoDecoder(video: $0, maxSide: maxSide, audio: true) }
        } catch {
            secureZero(&video)
            return feed.finish((error as? ImageDecodeError)?.reason ?? "the video decoder did not start")
        }
        secureZero(&video)
        Timings.event("play-helper-started")
        var frames = 0, sounds = 0
        defer {
            decoder.finish()
            Timings.event("play-reader-done frames \(frames) audio \(sounds) helper \(decoder.helperEnding)")
        }
        guard feed.attach(decoder) else { return }
        while true {
            let message: VideoStream.Message
            do { message = try decoder.next() } catch { return feed.finish(error.reason) }
            feed.noteMessage()
            switch message {
            case .frame(let frame):
                frames += 1
                if frames == 1 { Timings.event("play-first-frame-received") }
                guard feed.push(frame.ptsMicros, TextureBox(texture(frame))) else { return }
            case .audio(let audio):
                sounds += 1
                guard feed.waitWhilePaused() else { return }
                if soundFormat != (audio.rate, audio.channels) {
                    n11g_sound_close(sound)
                    sound = n11g_sound_open(UInt32(audio.rate), UInt32(audio.channels))
                    soundFormat = (audio.rate, audio.channels)
                }
                if let open = sound, audio.samples.withUnsafeBytes({ n11g_sound_write(open, $0.baseAddress, $0.count) }) != 0 {
                    n11g_sound_close(open)   // the server went away: the rest plays silently
                    sound = nil
                }
            case .end: return feed.finish(nil)
            case .refused(let reason): return feed.finish(reason)
            }
        }
    }

    /// A frame's checked RGBA rows as an immutable GdkMemoryTexture (made on this thread).
    static func texture(_ frame: VideoStream.Frame) -> OpaquePointer? {
        let bytes = frame.pixels.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(bytes) }
        return gdk_memory_texture_new(Int32(frame.width), Int32(frame.height), GDK_MEMORY_R8G8B8A8, bytes, gsize(frame.width * 4))
    }
}
