// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault
import Synchronization

/// The tiles' thumbnails: decrypted and decoded on the vault's worker, a few at a time.
///
/// Only `maxInFlight` thumbnails are ever queued on the worker. The rest wait here, the newest
/// binds first and the tiles on screen before those in GTK's margin, and each is dropped if
/// its tile has been unbound by the time a slot frees. A fling through thousands of photos
/// thus decodes what stops on screen, not every tile that flew past — that work would
/// otherwise take a core from the renderer (software OpenGL takes both) and arrive too late
/// to be seen.
extension Gallery {
    /// Enough to keep the worker busy while a finished thumbnail makes its way back to the
    /// main loop (a tile takes about 1.5 ms); few enough that the queue is never stale.
    static let maxInFlight = 4

    /// GTK binds more tiles than the window shows (a margin above and below); once the
    /// layout is done (an idle callback runs after it), the tiles on screen are queued first.
    func want(_ id: ItemID) {
        wanted.append(id)
        guard !pumpScheduled else { return }
        pumpScheduled = true
        onMain { [weak self] in self?.pump() }
    }

    /// Thumbnails made again for every bound tile (e.g. at a new scale factor).
    func wantAllBound() {
        for id in Set(bound.values) where summaries[id]?.thumbnail == true { want(id) }
    }

    private func pump() {
        pumpScheduled = false
        let ids = wanted
        wanted = []
        var visible: [ItemID] = [], rest: [ItemID] = []
        var seen = Set<ItemID>()
        for id in ids where seen.insert(id).inserted && !loading.contains(id) && textures.get(id) == nil {
            (isOnScreen(id) ? { visible.append(id) } : { rest.append(id) })()
        }
        // The newest binds go first: what was queued before has scrolled on, or waits its turn.
        queued = visible + rest + queued.filter { !seen.contains($0) }
        feed()
    }

    /// Sends queued thumbnails to the worker while fewer than `maxInFlight` are there,
    /// skipping those whose tiles are no longer bound (or that are already made).
    private func feed() {
        guard loading.count < Self.maxInFlight, !queued.isEmpty else { return }
        let shown = Set(bound.values)
        var next = 0
        var batch: [ItemID] = []
        while loading.count + batch.count < Self.maxInFlight && next < queued.count {
            let id = queued[next]
            next += 1
            guard shown.contains(id) && textures.get(id) == nil && !loading.contains(id) && !batch.contains(id) else { continue }
            batch.append(id)
            if batch.count == Self.batchSize {
                load(batch)
                batch = []
            }
        }
        if !batch.isEmpty { load(batch) }
        queued.removeFirst(next)
    }

    /// Thumbnails read per worker job: one job takes the vault's file lock (and looks at its
    /// state files) once for the batch, not once per tile; two jobs in flight keep the worker
    /// busy while the main loop hands out the previous batch's textures.
    static let batchSize = 2

    /// Whether a bound tile showing `id` lies (at least partly) inside the scrolled window.
    private func isOnScreen(_ id: ItemID) -> Bool {
        bound.contains { item, shown in shown == id && tiles[item].map(isOnScreen) == true }
    }

    private func isOnScreen(_ tile: Tile) -> Bool {
        guard gtk_widget_get_mapped(tile.root) != 0, gtk_widget_get_height(tile.root) > 0 else { return false }
        var origin = graphene_point_t(x: 0, y: 0), out = graphene_point_t(x: 0, y: 0)
        guard gtk_widget_compute_point(tile.root, scroller, &origin, &out) != 0 else { return false }
        let bottom = out.y + Float(gtk_widget_get_height(tile.root))
        return bottom > 0 && out.y < Float(gtk_widget_get_height(scroller))
    }

    /// How many tiles are on screen once every one shows its name and, if it has one, its
    /// thumbnail (nil before).
    var fullScreen: Int? {
        var shown = 0
        for (item, id) in bound {
            guard let tile = tiles[item], isOnScreen(tile) else { continue }
            guard let summary = summaries[id] else { return nil }
            if summary.thumbnail && gtk_picture_get_paintable(op(tile.picture)) == nil { return nil }
            shown += 1
        }
        return shown > 0 ? shown : nil
    }

    /// Decrypts a batch of thumbnails on the worker under one lock, then decodes them on as
    /// many helpers as there are at once; the textures come back to the main loop, which then
    /// sends the next queued ones.
    private func load(_ ids: [ItemID]) {
        loading.formUnion(ids)
        let scale = Int(gtk_widget_get_scale_factor(grid))
        screen.app.session.run({ vault -> [ItemID: TextureBox] in
            let start = Timings.enabled ? App.monotonic() : 0
            // One that cannot be read shows no picture (as before), the others still do.
            let sources = ids.compactMap { id in (try? Texture.tileSource(vault, id, scale: scale)).map { (id, $0) } }
            let made = Mutex<[ItemID: TextureBox]>([:])
            DispatchQueue.concurrentPerform(iterations: sources.count) { i in
                guard let box = try? TextureBox(sources[i].1.decode()) else { return }
                made.withLock { $0[sources[i].0] = box }
            }
            if Timings.enabled { for _ in ids { Timings.report("tile", (App.monotonic() - start) * 1000 / Double(max(1, ids.count))) } }
            return made.withLock { $0 }
        }) { [weak self] result in
            guard let self else { return }
            loading.subtract(ids)
            if case .success(let boxes) = result {
                for (id, box) in boxes {
                    guard let texture = box.texture else { continue }
                    textures.set(id, texture)
                    for (item, shown) in bound where shown == id {
                        if let tile = tiles[item] { gtk_picture_set_paintable(op(tile.picture), texture) }
                    }
                }
            }
            feed()
        }
    }
}
