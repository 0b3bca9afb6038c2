// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation

/// Above the grid: a search by name, and Filters (kind, album, has location, a date range,
/// shown under the search while the Filters toggle is pressed) — the `LibraryFilter` the
/// section's listing applies. Narrow enough for a phone: the entry takes what the Filters
/// button leaves, the albums wrap. Every control has an accessible name and an action.
@MainActor
final class FilterBar {
    let root: Widget
    private(set) var filter = LibraryFilter()
    private let search: Widget
    private let menu: Widget
    private let kinds: [(button: Widget, kind: LibraryFilter.Kind)]
    private let albumList: Widget
    private let albumBox: Widget
    private var albumRows: [(row: Widget, name: String?)] = []
    private let location: Widget
    private let from: Widget
    private let to: Widget
    /// The filters under the search, shown while "Filters" is pressed.
    private let panel: Widget
    /// Set while the controls are written from `filter` (their signals then change nothing).
    private var writing = false
    private let changed: MainAction

    init(changed: @escaping MainAction) {
        self.changed = changed
        search = must(gtk_search_entry_new())
        n11g_set_label(search, "Search by name")
        gtk_widget_set_hexpand(search, 1)
        // A toggle that shows the filters under the search (inline, not a popover: they stay
        // in the window, which a phone's screen and a screen reader both handle best).
        menu = must(gtk_toggle_button_new_with_label("Filters"))
        n11g_set_label(menu, "Filters")
        gtk_widget_set_tooltip_text(menu, "Kind, album, location, dates")
        let kindRow = box(false, spacing: 0)
        gtk_widget_add_css_class(kindRow, "linked")
        var first: Widget?
        var kindButtons: [(button: Widget, kind: LibraryFilter.Kind)] = []
        for kind in LibraryFilter.Kind.allCases {
            let b = must(gtk_toggle_button_new_with_label(kind.label))
            n11g_set_label(b, "Kind: " + kind.label)
            if let first { gtk_toggle_button_set_group(typed(b), typed(first)) } else { first = b }
            if kind == .all { gtk_toggle_button_set_active(typed(b), 1) }
            append(kindRow, b)
            kindButtons.append((b, kind))
        }
        kinds = kindButtons
        // One choice of several: "Any album", then each album (toggle buttons in a group; a
        // flow box wraps them on a narrow window).
        albumList = must(gtk_flow_box_new())
        gtk_flow_box_set_selection_mode(op(albumList), GTK_SELECTION_NONE)
        gtk_flow_box_set_max_children_per_line(op(albumList), 8)
        n11g_set_label(albumList, "Album filter")
        albumBox = albumList
        location = must(gtk_toggle_button_new_with_label("Has a location"))
        n11g_set_label(location, "Has a location")
        from = must(gtk_entry_new())
        to = must(gtk_entry_new())
        for (entry, name) in [(from, "Taken from"), (to, "Taken to")] {
            gtk_entry_set_placeholder_text(typed(entry), "YYYY-MM-DD")
            gtk_editable_set_width_chars(op(entry), 11)
            n11g_set_label(entry, name)
        }
        let dates = box(false, spacing: 6, [label("Taken"), from, label("to"), to])
        let content = box(true, spacing: 6, [box(false, spacing: 6, [kindRow, location]), albumList, dates])
        panel = content
        gtk_widget_set_visible(content, 0)
        root = box(true, spacing: 6, [box(false, spacing: 6, [search, menu]), content])
        margins(root, 6)
        gtk_widget_set_margin_bottom(root, 0)
        append(dates, button("Clear filters") { [unowned self] in self.clear() })
        on(raw(menu), "toggled") { [unowned self] in
            gtk_widget_set_visible(self.panel, gtk_toggle_button_get_active(typed(self.menu)))
        }
        on(raw(search), "search-changed") { [unowned self] in self.read() }
        for (b, _) in kinds { on(raw(b), "toggled") { [unowned self] in self.read() } }
        on(raw(location), "toggled") { [unowned self] in self.read() }
        on(raw(from), "changed") { [unowned self] in self.read() }
        on(raw(to), "changed") { [unowned self] in self.read() }
        setAlbums([])
    }

    /// The albums the album filter offers (`showAlbums`: false in an album's own section).
    func setAlbums(_ names: [String], showAlbums: Bool = true) {
        gtk_widget_set_visible(albumBox, showAlbums && !names.isEmpty ? 1 : 0)
        // The same albums: the same buttons (a screen reader keeps the ones it found).
        guard albumRows.isEmpty || albumRows.compactMap(\.name) != names else { return markAlbum() }
        while let child = gtk_widget_get_first_child(albumList) { gtk_flow_box_remove(op(albumList), child) }
        albumRows = []
        writing = true
        for name in [nil] + names.map(Optional.some) {
            let text = name.map { "In album \($0)" } ?? "Any album"
            let row = must(gtk_toggle_button_new_with_label(text))
            n11g_set_label(row, text)
            if let first = albumRows.first { gtk_toggle_button_set_group(typed(row), typed(first.row)) }
            gtk_flow_box_insert(op(albumList), row, -1)
            albumRows.append((row, name))
            on(raw(row), "toggled") { [unowned self] in
                guard !self.writing, gtk_toggle_button_get_active(typed(row)) != 0, self.filter.album != name else { return }
                self.filter.album = name
                self.markAlbum()
                self.changed()
            }
        }
        writing = false
        if let album = filter.album, !names.contains(album) {
            filter.album = nil
            changed()
        }
        markAlbum()
    }

    private func markAlbum() {
        let wasWriting = writing
        writing = true
        for (row, name) in albumRows where name == filter.album { gtk_toggle_button_set_active(typed(row), 1) }
        writing = wasWriting
        gtk_button_set_label(typed(menu), filter.isEmpty || filter == LibraryFilter(text: filter.text) ? "Filters" : "Filters •")
    }

    /// Reads the controls into `filter`; a change reloads the section. A date that is not
    /// (yet) a date is marked and ignored.
    private func read() {
        guard !writing else { return }
        var new = filter
        new.text = string(gtk_editable_get_text(op(search))).trimmingCharacters(in: .whitespaces)
        new.kind = kinds.first { gtk_toggle_button_get_active(typed($0.button)) != 0 }?.kind ?? .all
        new.hasLocation = gtk_toggle_button_get_active(typed(location)) != 0
        new.from = date(from, current: filter.from)
        new.to = date(to, current: filter.to)
        guard new != filter else { return }
        filter = new
        markAlbum()
        changed()
    }

    private func date(_ entry: Widget, current: Date?) -> Date? {
        let text = string(gtk_editable_get_text(op(entry)))
        if text.isEmpty {
            gtk_widget_remove_css_class(entry, "error")
            return nil
        }
        guard let day = LibraryFilter.day(text) else {
            gtk_widget_add_css_class(entry, "error")
            return current
        }
        gtk_widget_remove_css_class(entry, "error")
        return day
    }

    /// Back to no filter (and an empty search).
    func clear() {
        writing = true
        gtk_editable_set_text(op(search), "")
        gtk_editable_set_text(op(from), "")
        gtk_editable_set_text(op(to), "")
        gtk_toggle_button_set_active(typed(location), 0)
        if let all = kinds.first { gtk_toggle_button_set_active(typed(all.button), 1) }
        writing = false
        let had = !filter.isEmpty
        filter = LibraryFilter()
        markAlbum()
        if had { changed() }
    }
}
