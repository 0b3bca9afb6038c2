import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Media
import Nu11Vault

/// The gallery: a virtualised `GtkGridView` over the items' IDs. A tile is bound when it
/// scrolls into view; its thumbnail is then decrypted (through the vault's in-memory LRU)
/// and decoded into a texture on the vault's worker thread — never on the main thread — and
/// kept in a bounded texture cache here. Tiles carry the item's name as their accessible name.
final class Gallery {
    unowned let screen: MainScreen
    let root: Widget
    let grid: Widget
    private let model: OpaquePointer
    private let selection: OpaquePointer
    private(set) var items: [ItemSummary] = []
    private var index: [String: Int] = [:]
    /// The Swift side of each tile widget GTK made (by list item), and the ID each shows now.
    private var tiles: [UnsafeMutableRawPointer: Tile] = [:]
    private var bound: [UnsafeMutableRawPointer: String] = [:]
    private var textures = TextureCache(capacity: 600)
    private var loading: Set<String> = []
    private let empty: Widget
    private let stack: Widget
    /// For `--timings`: when the listing was asked for, and whether the first screen was reported.
    var firstScreenStart: Double?
    private var firstScreenPending = 0

    init(screen: MainScreen) {
        self.screen = screen
        model = must(gtk_string_list_new(nil))
        g_object_ref(UnsafeMutableRawPointer(model))  // the selection takes one reference
        selection = must(gtk_multi_selection_new(model))
        let factory = gtk_signal_list_item_factory_new()
        g_object_ref(UnsafeMutableRawPointer(selection))
        grid = must(gtk_grid_view_new(selection, factory))
        gtk_grid_view_set_max_columns(op(grid), 12)
        gtk_grid_view_set_min_columns(op(grid), 2)
        gtk_grid_view_set_enable_rubberband(op(grid), 1)
        n11g_set_label(grid, "Gallery")
        let scroller = gtk_scrolled_window_new()
        gtk_scrolled_window_set_child(op(scroller), grid)
        gtk_widget_set_vexpand(scroller, 1)
        gtk_widget_set_hexpand(scroller, 1)
        empty = label("Nothing here yet. Import photos with the Import button or drop them here.", style: "dim-label", wrap: true)
        stack = gtk_stack_new()
        gtk_stack_add_named(op(stack), scroller, "grid")
        gtk_stack_add_named(op(stack), empty, "empty")
        root = stack
        on1(raw(factory), "setup") { [unowned self] item in self.setup(item) }
        on1(raw(factory), "bind") { [unowned self] item in self.bind(item) }
        on1(raw(factory), "unbind") { [unowned self] item in if let item { self.bound[item] = nil } }
        on1(raw(factory), "teardown") { [unowned self] item in
            if let item { self.tiles[item] = nil; self.bound[item] = nil }
        }
        on1(raw(grid), "activate") { [unowned self] position in
            let i = Int(UInt32(truncatingIfNeeded: UInt(bitPattern: position)))
            if i < self.items.count { self.screen.openViewer(self.items, at: i) }
        }
    }

    /// Shows `items` (already sorted); tiles bind lazily as they come into view.
    func show(_ items: [ItemSummary]) {
        self.items = items
        index = Dictionary(items.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        let ids = items.map { strdup($0.id) } + [nil]
        defer { for p in ids { free(p) } }
        let old = g_list_model_get_n_items(model)
        ids.withUnsafeBufferPointer { buffer in
            buffer.baseAddress?.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { p in
                gtk_string_list_splice(model, 0, old, p)
            }
        }
        gtk_stack_set_visible_child_name(op(stack), items.isEmpty ? "empty" : "grid")
        if firstScreenStart != nil { firstScreenPending = 0 }
    }

    /// The IDs of the selected tiles.
    var selectedIDs: [String] {
        var out: [String] = []
        for (i, item) in items.enumerated() where gtk_selection_model_is_selected(selection, UInt32(i)) != 0 {
            out.append(item.id)
        }
        return out
    }

    func tearDown() {
        show([])
        textures.removeAll()
    }

    /// Once a second: fade badges count down; an item whose deadline passed leaves the grid.
    func tick(now: Date) {
        var expired = false
        for (item, id) in bound {
            guard let i = index[id], let fades = items[i].fadesAt, let tile = tiles[item] else { continue }
            let left = fades.timeIntervalSince(now)
            if left <= 0 { expired = true }
            setText(tile.badge, "⏳ " + Countdown.text(left))
        }
        if expired || items.contains(where: { ($0.fadesAt ?? .distantFuture) <= now }) {
            let kept = items.filter { ($0.fadesAt ?? .distantFuture) > now }
            for item in items where (item.fadesAt ?? .distantFuture) <= now { textures.remove(item.id) }
            show(kept)
        }
    }

    // MARK: tiles

    private func setup(_ item: UnsafeMutableRawPointer?) {
        let tile = Tile()
        gtk_list_item_set_child(OpaquePointer(item), tile.root)
        if let item { tiles[item] = tile }
    }

    private func bind(_ item: UnsafeMutableRawPointer?) {
        guard let item, let object = gtk_list_item_get_item(OpaquePointer(item)), let tile = tiles[item] else { return }
        let id = string(gtk_string_object_get_string(OpaquePointer(object)))
        bound[item] = id
        guard let i = index[id] else { return }
        let summary = items[i]
        tile.show(summary)
        if let texture = textures.get(id) {
            gtk_picture_set_paintable(op(tile.picture), texture)
        } else {
            gtk_picture_set_paintable(op(tile.picture), nil)
            if summary.thumbnail { load(id) }
        }
    }

    /// Decrypts and decodes a thumbnail on the worker; the texture comes back to the main loop.
    private func load(_ id: String) {
        guard !loading.contains(id) else { return }
        loading.insert(id)
        if firstScreenPending >= 0 { firstScreenPending += 1 }
        screen.app.session.run({ vault -> TextureBox in
            let start = Timings.enabled ? App.monotonic() : 0
            let thumb = try vault.thumbnail(ItemRef(id), size: .grid)
            let texture = TextureBox(try Texture.decode(thumb))
            if Timings.enabled { Timings.report("tile", (App.monotonic() - start) * 1000) }
            return texture
        }) { [weak self] result in
            guard let self else { return }
            loading.remove(id)
            if case .success(let box) = result, let texture = box.texture {
                textures.set(id, texture)
                for (item, shown) in bound where shown == id {
                    if let tile = tiles[item] { gtk_picture_set_paintable(op(tile.picture), texture) }
                }
            }
            if firstScreenPending > 0 {
                firstScreenPending -= 1
                if firstScreenPending == 0, let start = firstScreenStart {
                    Timings.report("first-screen", (App.monotonic() - start) * 1000)
                    firstScreenStart = nil
                    firstScreenPending = -1
                }
            }
        }
    }
}

/// One tile: the thumbnail, the name, and (for fade items) a countdown badge.
final class Tile {
    let root: Widget
    let picture: Widget
    let name: Widget
    let badge: Widget

    init() {
        picture = gtk_picture_new()
        gtk_picture_set_content_fit(op(picture), GTK_CONTENT_FIT_COVER)
        gtk_widget_set_size_request(picture, 160, 160)
        name = label("")
        gtk_label_set_ellipsize(op(name), PANGO_ELLIPSIZE_MIDDLE)
        gtk_label_set_max_width_chars(op(name), 18)
        badge = label("", style: "caption")
        gtk_widget_set_visible(badge, 0)
        root = box(true, spacing: 4, [picture, name, badge])
        margins(root, 4)
        // No drag-out of plaintext: tiles offer no drag source (export is explicit).
    }

    func show(_ item: ItemSummary) {
        setText(name, item.name)
        n11g_set_label(root, item.name)
        n11g_set_label(picture, item.name)
        gtk_widget_set_visible(badge, item.fadesAt == nil ? 0 : 1)
        if let fades = item.fadesAt { setText(badge, "⏳ " + Countdown.text(fades.timeIntervalSinceNow)) }
    }
}

enum Countdown {
    static func text(_ seconds: Double) -> String {
        let s = max(0, Int(seconds.rounded(.up)))
        if s >= 86400 { return "\(s / 86400)d \(s % 86400 / 3600)h" }
        if s >= 3600 { return "\(s / 3600)h \(s % 3600 / 60)m" }
        if s >= 60 { return "\(s / 60)m \(s % 60)s" }
        return "\(s)s"
    }
}
