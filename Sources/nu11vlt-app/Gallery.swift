// SPDX-License-Identifier: GPL-3.0-or-later
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
@MainActor
final class Gallery {
    unowned let screen: MainScreen
    let root: Widget
    let grid: Widget
    private let model: OpaquePointer
    private let selection: OpaquePointer
    /// The section's item IDs in display order, and the summaries fetched so far (a tile's
    /// summary is fetched when it is first bound, a screenful at a time).
    private(set) var ids: [ItemID] = []
    var summaries: [ItemID: ItemSummary] = [:]
    /// What the grid's model holds: the items with their date sections (`GallerySections`).
    /// (Kept by `cellSource`, which the model asks for a row's text.)
    private var cells: [GalleryCell] {
        get { cellSource.cells }
        set { cellSource.cells = newValue }
    }
    private let cellSource = CellSource()
    /// Each item's sort date (capture, else import), for the section headers.
    /// Aligned with `ids` while they are the listing's own order (no dictionary of 100,000
    /// made before the first screen); by ID once `ids` changed some other way.
    private var dates = ItemDates.byID([:])
    private var columns = 2
    private var grouping = Grouping.day

    /// The name of a listed item (nil while its summary is on its way).
    func name(of id: ItemID) -> String? { summaries[id]?.name }
    /// The items whose summaries bound tiles wait for, each with its cell's position when it
    /// was bound (the fetch goes in display order, and skips an item no longer at its cell).
    private var summaryWanted: [ItemID: Int] = [:]
    private var summaryFetching = false
    /// The Swift side of each tile widget GTK made (by list item), and the ID each shows now.
    var tiles: [UnsafeMutableRawPointer: Tile] = [:]
    var bound: [UnsafeMutableRawPointer: ItemID] = [:]
    var textures = TextureCache(capacity: 600)
    var loading: Set<ItemID> = []
    private let empty: Widget
    private let stack: Widget
    /// The search and filters above the grid (`LibraryFilter`).
    let filters: FilterBar
    /// For `--timings`: from the listing's start to the first full screen of tiles.
    let firstScreen = FirstScreenClock()
    /// Tiles bound since the last pump, waiting for their thumbnails (visible ones go first).
    var wanted: [ItemID] = []
    /// Thumbnails waiting for a place on the worker (`GalleryThumbnails`), the next first.
    var queued: [ItemID] = []
    var pumpScheduled = false
    let scroller: Widget

    init(screen: MainScreen) {
        self.screen = screen
        let windowWidth: Int32 = screen.app.window.map { gtk_widget_get_width($0) } ?? 1000
        model = must(cellSource.model())
        g_object_ref(UnsafeMutableRawPointer(model))  // the selection takes one reference
        selection = must(gtk_multi_selection_new(model))
        let factory = gtk_signal_list_item_factory_new()
        g_object_ref(UnsafeMutableRawPointer(selection))
        grid = must(gtk_grid_view_new(selection, factory))
        // GTK 4.8 makes max_columns × 30 rows of tiles up front, whatever fits: the most
        // columns follow the width (`fitColumns`), so a narrow window makes fewer tiles.
        columns = Self.fittingColumns(width: windowWidth - 200)
        // GTK 4.8 lays out width / 168 columns within [min, max]: the most is what fits now, the
        // least is 2, so the window can still shrink (to a phone's 360 px).
        gtk_grid_view_set_max_columns(op(grid), UInt32(columns))
        gtk_grid_view_set_min_columns(op(grid), 2)
        gtk_grid_view_set_enable_rubberband(op(grid), 1)
        n11g_set_label(grid, "Gallery")
        scroller = must(gtk_scrolled_window_new())
        gtk_scrolled_window_set_child(op(scroller), grid)
        gtk_widget_set_vexpand(scroller, 1)
        gtk_widget_set_hexpand(scroller, 1)
        empty = label(Self.emptyText, style: "dim-label", wrap: true)
        stack = gtk_stack_new()
        gtk_stack_add_named(op(stack), scroller, "grid")
        gtk_stack_add_named(op(stack), empty, "empty")
        filters = FilterBar { [unowned screen] in screen.reload() }
        root = box(true, spacing: 0, [filters.root, stack])
        if let adjustment = gtk_scrollable_get_hadjustment(op(grid)) {
            on(UnsafeMutableRawPointer(adjustment), "notify::page-size") { [unowned self] in self.fitColumns() }
        }
        on1(raw(factory), "setup") { [unowned self] item in self.setup(item) }
        on1(raw(factory), "bind") { [unowned self] item in self.bind(item) }
        on1(raw(factory), "unbind") { [unowned self] item in if let item { self.bound[item] = nil } }
        on1(raw(factory), "teardown") { [unowned self] item in
            if let item { self.tiles[item] = nil; self.bound[item] = nil }
        }
        // Delete asks, naming what goes (deletion destroys the keys: nothing to undo).
        let keys = controller(gtk_event_controller_key_new())
        onKeyValue(keys) { [unowned self] key in
            switch Int32(key) {
            case GDK_KEY_Delete, GDK_KEY_KP_Delete: self.screen.app.actions.activate("delete-selected")
            // The sections' zoom level: days, months, years.
            case GDK_KEY_minus, GDK_KEY_KP_Subtract: self.regroup(self.grouping.coarser)
            case GDK_KEY_plus, GDK_KEY_equal, GDK_KEY_KP_Add: self.regroup(self.grouping.finer)
            default: return false
            }
            return true
        }
        gtk_widget_add_controller(grid, keys)
        // Ctrl+A selects the items of the current view, never the section headers and the
        // empty cells that end their rows (GTK's own select-all would paint those too).
        let selectAll = controller(gtk_event_controller_key_new())
        gtk_event_controller_set_propagation_phase(selectAll, GTK_PHASE_CAPTURE)
        onKeyState(selectAll) { [unowned self] key, state in
            guard Int32(key) == GDK_KEY_a || Int32(key) == GDK_KEY_A, state & GDK_CONTROL_MASK.rawValue != 0 else { return false }
            self.selectAllItems()
            return true
        }
        gtk_widget_add_controller(grid, selectAll)
        zoomGestures()
        // A window moved to a screen of another scale: the tiles get pictures of its size.
        on(raw(grid), "notify::scale-factor") { [unowned self] in
            textures.removeAll()
            wantAllBound()
        }
        on1(raw(grid), "activate") { [unowned self] position in
            let i = Int(UInt32(truncatingIfNeeded: UInt(bitPattern: position)))
            guard i < self.cells.count, case .item(let id) = self.cells[i] else { return }
            let known = self.ids.compactMap { self.summaries[$0] }
            if let at = known.firstIndex(where: { $0.id == id }) { self.screen.openViewer(known, at: at) }
        }
    }

    /// Shows `items` (already sorted, summaries known); tiles bind lazily as they come into view.
    func show(_ items: [ItemSummary]) {
        summaries = Dictionary(items.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        dates = .byID(Dictionary(items.map { ($0.id, $0.sortDate) }, uniquingKeysWith: { a, _ in a }))
        show(ids: items.map(\.id))
    }

    /// Shows `ids` (already sorted) with the first screen's summaries and thumbnails made,
    /// in sections by their dates.
    func show(ids newIDs: [ItemID], dates newDates: [Date], head: FirstScreen) {
        for summary in head.summaries { summaries[summary.id] = summary }
        for (id, box) in head.textures { if let texture = box.texture { textures.set(id, texture) } }
        ids = newIDs
        dates = newDates.count == newIDs.count ? .aligned(newDates) : .byID([:])
        layOut()
        if let window = screen.app.window { firstScreen.watch(window) { [unowned self] in self.fullScreen } }
    }

    /// Shows `ids` (already sorted); each tile's summary is fetched when it is bound.
    func show(ids newIDs: [ItemID]) {
        if case .aligned(let list) = dates {
            dates = .byID(Dictionary(zip(ids, list), uniquingKeysWith: { a, _ in a }))
        }
        ids = newIDs
        layOut()
    }

    /// The sections' zoom level by Ctrl+scroll (up for finer) and by a pinch (in for coarser),
    /// as `-`/`+` do: one step per notch, one per pinch.
    private func zoomGestures() {
        let scroll = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL)
        // Before the scrolled window's own scrolling, which would otherwise take the wheel.
        gtk_event_controller_set_propagation_phase(controller(scroll), GTK_PHASE_CAPTURE)
        onScroll(controller(scroll)) { [unowned self] dy, control in
            guard control, dy != 0 else { return false }
            regroup(dy < 0 ? grouping.finer : grouping.coarser)
            return true
        }
        gtk_widget_add_controller(scroller, controller(scroll))
        let pinch = gtk_gesture_zoom_new()
        onPinch(controller(pinch)) { [unowned self] factor in
            guard !pinched, factor < 0.7 || factor > 1.4 else { return }
            pinched = true
            regroup(factor < 1 ? grouping.coarser : grouping.finer)
        }
        on1(raw(pinch), "end") { [unowned self] _ in pinched = false }
        gtk_widget_add_controller(scroller, controller(pinch))
    }

    private var pinched = false

    private func regroup(_ new: Grouping) {
        guard new != grouping else { return }
        grouping = new
        layOut()
    }

    /// Fills the grid's model with the items and their section headers.
    private func layOut() {
        let start = Timings.enabled ? App.monotonic() : 0
        let dates = self.dates
        cells = grouping.cells(ids, date: { i, id in
            switch dates {
            case .aligned(let list): list[i]
            case .byID(let map): map[id]
            }
        }, columns: columns)
        if Timings.enabled { Timings.report("show-cells", (App.monotonic() - start) * 1000) }
        defer { if Timings.enabled { Timings.report("show-model", (App.monotonic() - start) * 1000) } }
        let newIDs = ids
        // The GTK model asks `cellSource` for a row's text when it first shows the row; `bind`
        // reads it back.
        if n11g_cell_model_reset(model, UInt32(cells.count)) != 0 {
            return screen.app.tell("The gallery cannot be shown", "Out of memory: close other programs, then try again.")
        }
        setText(empty, filters.filter.isEmpty ? Self.emptyText : "No item matches the search and filters.")
        gtk_stack_set_visible_child_name(op(stack), newIDs.isEmpty ? "empty" : "grid")
    }

    static let emptyText = "Nothing here yet. Import photos with the Import button or drop them here."

    /// Selects every item cell of the view (what the section and its filters show).
    func selectAllItems() {
        guard let selected = gtk_bitset_new_empty(), let mask = gtk_bitset_new_range(0, UInt32(cells.count)) else { return }
        defer {
            gtk_bitset_unref(selected)
            gtk_bitset_unref(mask)
        }
        for (i, cell) in cells.enumerated() { if case .item = cell { gtk_bitset_add(selected, UInt32(i)) } }
        _ = gtk_selection_model_set_selection(selection, selected, mask)
    }

    /// How many tiles (160 px and their margins) fit across `width`, from 2 to 7.
    nonisolated static func fittingColumns(width: Int32) -> Int {
        min(7, max(2, Int(width) / 168))
    }

    /// Follows the grid's width (called when it changes; applied after the layout in progress).
    private func fitColumns() {
        let width = gtk_widget_get_width(grid)
        guard width > 0 else { return }
        let wanted = Self.fittingColumns(width: width)
        guard wanted != columns else { return }
        onMain { [weak self] in
            guard let self, wanted != self.columns else { return }
            // As many columns as fit, which is what GTK lays out: every section header starts a row.
            self.columns = wanted
            gtk_grid_view_set_max_columns(op(grid), UInt32(wanted))
            layOut()
        }
    }

    /// The IDs of the selected tiles.
    var selectedIDs: [ItemID] {
        var out: [ItemID] = []
        for (i, cell) in cells.enumerated() where gtk_selection_model_is_selected(selection, UInt32(i)) != 0 {
            if case .item(let id) = cell { out.append(id) }
        }
        return out
    }

    func summary(_ id: ItemID) -> ItemSummary? { summaries[id] }

    /// `ids` with each Live Photo's motion after its still: what an action on them acts on
    /// (the motion is part of the item the user sees).
    func withMotions(_ ids: [ItemID]) -> [ItemID] {
        ids.flatMap { id in [id] + (summaries[id]?.motion.map { [$0] } ?? []) }
    }

    func tearDown() {
        show([])
        summaries.removeAll()
        textures.removeAll()
    }

    /// Items whose sealed record changed since they were shown (another process turned,
    /// renamed or moved them): what is held of them goes, and their bound tiles are bound again
    /// (summary and thumbnail fetched anew).
    func refresh(_ changed: Set<ItemID>) {
        Timings.count("tiles-changed", changed.count)
        for id in changed {
            textures.remove(id)
            summaries[id] = nil
        }
        for (item, id) in bound where changed.contains(id) { bind(item) }
    }

    /// The vault's fade deadlines now (`Items.fadeDeadlines`): an item keeps its ID when it
    /// moves into or out of Fade (issue 58, here or by another process), so a summary held from
    /// before would keep showing its old countdown, or none — and `tick` would take an item that
    /// is permanent again off the grid at its old deadline. The summaries and bound badges follow.
    func followFades(_ deadlines: [ItemID: Date]) {
        for (id, summary) in summaries where summary.fadesAt != deadlines[id] { summaries[id]?.fadesAt = deadlines[id] }
        for (item, id) in bound {
            guard let tile = tiles[item], let summary = summaries[id] else { continue }
            gtk_widget_set_visible(tile.badge, summary.fadesAt == nil ? 0 : 1)
        }
        tick(now: Date())
    }

    /// Once a second: fade badges count down; an item whose deadline passed leaves the grid.
    func tick(now: Date) {
        for (item, id) in bound {
            guard let fades = summaries[id]?.fadesAt, let tile = tiles[item] else { continue }
            setText(tile.badge, "fades in " + Countdown.text(fades.timeIntervalSince(now)))
        }
        let expired = Set(summaries.values.filter { ($0.fadesAt ?? .distantFuture) <= now }.map(\.id))
        guard !expired.isEmpty else { return }
        for id in expired {
            textures.remove(id)
            summaries[id] = nil
        }
        show(ids: ids.filter { !expired.contains($0) })
    }

    // MARK: tiles

    private func setup(_ item: UnsafeMutableRawPointer?) {
        let tile = Tile()
        gtk_list_item_set_child(OpaquePointer(item), tile.root)
        if let item { tiles[item] = tile }
    }

    private func bind(_ item: UnsafeMutableRawPointer?) {
        guard let item, let object = gtk_list_item_get_item(OpaquePointer(item)), let tile = tiles[item] else { return }
        guard let cell = GalleryCell(modelText: string(gtk_string_object_get_string(OpaquePointer(object)))) else { return }
        let isItem: Bool = if case .item = cell { true } else { false }
        gtk_list_item_set_selectable(OpaquePointer(item), isItem ? 1 : 0)
        gtk_list_item_set_activatable(OpaquePointer(item), isItem ? 1 : 0)
        let id: ItemID
        switch cell {
        case .header(let text): bound[item] = nil; tile.showHeader(text); return
        case .spacer: bound[item] = nil; tile.showSpacer(); return
        case .item(let itemID): id = itemID
        }
        bound[item] = id
        guard let summary = summaries[id] else {
            tile.clear()
            summaryWanted[id] = Int(gtk_list_item_get_position(OpaquePointer(item)))
            scheduleSummaries()
            return
        }
        present(summary, on: tile)
    }

    private func present(_ summary: ItemSummary, on tile: Tile) {
        tile.show(summary)
        if let texture = textures.get(summary.id) {
            gtk_picture_set_paintable(op(tile.picture), texture)
        } else {
            gtk_picture_set_paintable(op(tile.picture), nil)
            if summary.thumbnail { want(summary.id) }
        }
    }

    /// Fetches the summaries of the tiles bound since the last fetch, in one worker call.
    private func scheduleSummaries() {
        guard !summaryFetching else { return }
        summaryFetching = true
        onMain { [weak self] in
            guard let self else { return }
            let cells = self.cells
            let batch = summaryWanted.filter { id, at in at < cells.count && cells[at] == .item(id) }
                .sorted { $0.value < $1.value }.map(\.key)
            summaryWanted = [:]
            screen.app.session.run({ vault in try vault.items.summaries(batch) }) { [weak self] result in
                guard let self else { return }
                summaryFetching = false
                guard case .success(let found) = result else { return }
                for summary in found {
                    summaries[summary.id] = summary
                    for (item, shown) in bound where shown == summary.id {
                        if let tile = tiles[item] { present(summary, on: tile) }
                    }
                }
                let gone = Set(batch).subtracting(found.map(\.id))
                if !gone.isEmpty { show(ids: ids.filter { !gone.contains($0) }) }
                if !summaryWanted.isEmpty { scheduleSummaries() }
            }
        }
    }
}
