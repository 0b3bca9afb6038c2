// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import Foundation
import Synchronization
import Nu11Format
import Nu11Media
import Nu11Vault

/// The first screen of a listing, made on the worker inside the listing's own call: the
/// summaries and decoded thumbnails of the items the window shows first. The grid's first
/// frame after an unlock is then complete, instead of filling in over several frames (each
/// frame costs tens of milliseconds when OpenGL runs in software). The rest of the grid still
/// loads lazily, tile by tile, as it scrolls into view.
final class FirstScreen: Sendable {
    let summaries: [ItemSummary]
    let textures: [ItemID: TextureBox]

    init() {
        summaries = []
        textures = [:]
    }

    /// Runs on the worker. A thumbnail that cannot be read is left to the tile's own load
    /// (which shows no picture), so one damaged item does not fail the listing.
    init(vault: Vault, ids: ArraySlice<ItemID>, scale: Int) throws {
        summaries = try vault.items.summaries(Array(ids))
        // The thumbnails are read from the vault here, one after the other, then decoded on
        // as many helpers as there are (one per core) at once.
        let sources = summaries.filter(\.thumbnail).compactMap { item in
            // One that cannot be read is loaded again by its tile when bound (no picture if
            // that fails too).
            (try? Texture.tileSource(vault, item.id, scale: scale)).map { (item.id, $0) }
        }
        let made = Mutex<[ItemID: TextureBox]>([:])
        DispatchQueue.concurrentPerform(iterations: sources.count) { i in
            let start = Timings.enabled ? App.monotonic() : 0
            guard let box = try? TextureBox(sources[i].1.decode()) else { return }
            made.withLock { $0[sources[i].0] = box }
            if Timings.enabled { Timings.report("tile", (App.monotonic() - start) * 1000) }
        }
        textures = made.withLock { $0 }
    }

    /// How many tiles a window of this size shows at once (a row more, for the partly visible
    /// one): the grid's tiles are 168 px wide (2 to 7 columns beside a 200 px sidebar) and
    /// about 190 px high.
    static func count(windowWidth: Int32, windowHeight: Int32) -> Int {
        let columns = Gallery.fittingColumns(width: windowWidth - 200)
        let rows = max(2, (Int(windowHeight) + 189) / 190 + 1)
        return columns * rows
    }
}

/// `--timings`' "first-screen": the time from the listing's start to the end of the first
/// frame in which every tile on screen shows its thumbnail (measured after the frame is
/// painted, not when the textures arrive); and "frame", the interval between painted frames
/// while the grid moves. One "after-paint" handler per gallery, blocked when the gallery goes
/// (on lock).
@MainActor
final class FirstScreenClock {
    private var start: Double?
    private var full: (() -> Int?)?
    private var clock: UnsafeMutableRawPointer?
    private var handler: UInt = 0
    private var lastPaint: Double?

    /// Starts counting (at each listing) if `--timings` is on.
    func begin() {
        guard Timings.enabled, start == nil else { return }
        start = App.monotonic()
    }

    var started: Double? { start }

    /// Watches the frames of `widget`'s window until `full` gives the number of tiles of a
    /// full screen (nil while some tile on screen still lacks its thumbnail).
    func watch(_ widget: Widget, full: @escaping () -> Int?) {
        guard start != nil else { return }
        self.full = full
        guard handler == 0, let frameClock = gtk_widget_get_frame_clock(widget) else { return }
        let clock = UnsafeMutableRawPointer(frameClock)
        g_object_ref(clock)
        self.clock = clock
        handler = on(clock, "after-paint") { [weak self] in self?.afterPaint() }
    }

    private func afterPaint() {
        // `--timings`' "frame": the time between two painted frames of one burst (a fling, a
        // scroll), from the same frame clock; the first frame after a pause of a second or
        // more starts a burst and is not a frame time.
        let now = App.monotonic()
        if let lastPaint, now - lastPaint < 1 { Timings.report("frame", (now - lastPaint) * 1000) }
        lastPaint = now
        guard let start, let tiles = full?() else { return }
        Timings.report("first-screen", (App.monotonic() - start) * 1000)
        Timings.count("first-screen-tiles", tiles)
        self.start = nil
        full = nil
    }

    isolated deinit {
        guard let clock else { return }
        g_signal_handler_block(clock, gulong(handler))
        g_object_unref(clock)
    }
}
