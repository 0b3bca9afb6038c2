// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// Notes: a list and an editor (`GtkTextView`), in memory only — never a temp file. Edits are
/// sealed into the vault a second after typing stops, when another note is chosen, and on lock.
/// "New note" (in the header) puts the focus in the new note's title at once, so what is typed
/// next is its title; with no note yet the pane says so (an AdwStatusPage).
@MainActor
final class NotesPane {
    unowned let screen: MainScreen
    let root: Widget
    private let list: Widget
    private let titleEntry: Widget
    private let text: Widget
    private let status: Widget
    private var notes: [NoteSummary] = []
    private var rows: [(row: Widget, id: ItemID)] = []
    /// The note in the editor (nil: none chosen) and whether it has unsaved edits.
    private var currentID: ItemID?
    private var dirty = false
    private var lastEdit = 0.0
    private var loadingText = false

    private let listScroll: Widget
    /// The list beside (or above) the editor; `root` shows it, or the empty state.
    private let panes: Widget
    private let emptyState: Widget
    /// The note's text, hidden with the list while there are no notes (`showEmptyState`).
    private var textScroll: Widget?
    /// A new note is being sealed (its ID is not known yet); `typedMeanwhile`: the user typed in it.
    private var creating = false
    private var typedMeanwhile = false

    /// On a narrow window (a phone) the list sits above the editor, not beside it.
    func setNarrow(_ narrow: Bool) {
        gtk_orientable_set_orientation(op(panes), narrow ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL)
        gtk_widget_set_size_request(listScroll, narrow ? -1 : 220, narrow ? 140 : -1)
    }

    init(screen: MainScreen) {
        self.screen = screen
        list = must(gtk_list_box_new())
        n11g_set_label(list, "Notes")
        listScroll = must(gtk_scrolled_window_new())
        gtk_scrolled_window_set_child(op(listScroll), list)
        gtk_widget_set_size_request(listScroll, 220, -1)
        gtk_widget_set_vexpand(listScroll, 1)
        titleEntry = must(gtk_entry_new())
        n11g_set_label(titleEntry, "Note title")
        text = must(gtk_text_view_new())
        gtk_text_view_set_wrap_mode(typed(text), GTK_WRAP_WORD_CHAR)
        n11g_set_label(text, "Note text")
        let textScroll = must(gtk_scrolled_window_new())
        gtk_scrolled_window_set_child(op(textScroll), text)
        gtk_widget_set_vexpand(textScroll, 1)
        gtk_widget_set_hexpand(textScroll, 1)
        status = label("", style: "dim-label", wrap: true)
        n11g_set_label(status, "Note status")
        emptyState = must(adw_status_page_new())
        adw_status_page_set_icon_name(op(emptyState), "text-x-generic-symbolic")
        adw_status_page_set_title(op(emptyState), "No Notes")
        adw_status_page_set_description(op(emptyState), "Notes are sealed in the vault like your photos. Start one with New note, the button at the top left.")
        n11g_set_label(emptyState, "No notes")
        gtk_widget_set_vexpand(emptyState, 1)
        gtk_widget_set_hexpand(emptyState, 1)
        gtk_widget_set_visible(emptyState, 0)
        // The empty state stands in for the list and the text, never for the title entry: the
        // entry stays mapped, so "New note" can give it the focus at once (GTK gives none to a
        // widget that is not laid out yet, and the keys typed meanwhile would go to the button).
        // One of the two is visible (not a stack: its hidden page would still count as visible
        // to a screen reader).
        self.textScroll = textScroll
        let left = box(true, spacing: 6, [listScroll])
        let editor = box(true, spacing: 6, [titleEntry, textScroll, emptyState, status])
        panes = box(false, spacing: 12, [left, editor])
        margins(panes, 8)
        root = box(true, spacing: 0, [panes])
        on1(raw(list), "row-activated") { [unowned self] row in
            guard let entry = self.rows.first(where: { raw($0.row) == row }) else { return }
            self.open(entry.id)
        }
        let buffer = gtk_text_view_get_buffer(typed(text))
        on(UnsafeMutableRawPointer(buffer), "changed") { [unowned self] in self.edited() }
        on(raw(titleEntry), "changed") { [unowned self] in self.edited() }
        setEditable(false)
    }

    private func showEmptyState(_ empty: Bool) {
        gtk_widget_set_visible(listScroll, empty ? 0 : 1)
        gtk_widget_set_visible(textScroll, empty ? 0 : 1)
        gtk_widget_set_visible(emptyState, empty ? 1 : 0)
    }

    private func setEditable(_ on: Bool) {
        gtk_widget_set_sensitive(text, on ? 1 : 0)
        gtk_widget_set_sensitive(titleEntry, on ? 1 : 0)
    }

    func reload() {
        screen.app.session.run({ vault in try vault.notes.list() }) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let notes): show(notes)
            case .failure(let error): screen.app.tell("Notes cannot be listed", describe(error))
            }
        }
    }

    private func show(_ notes: [NoteSummary]) {
        // The same list: the rows stay (and so do the focus and the selection).
        if !rows.isEmpty, notes.map(\.id) == self.notes.map(\.id), notes.map(\.title) == self.notes.map(\.title),
           rows.map(\.id) == notes.map(\.id) {
            return
        }
        self.notes = notes
        showEmptyState(notes.isEmpty && !creating && currentID == nil)
        while let child = gtk_widget_get_first_child(list) { gtk_list_box_remove(op(list), child) }
        rows = []
        for note in notes {
            let row = must(gtk_list_box_row_new())
            let title = label(note.title)
            gtk_label_set_ellipsize(op(title), PANGO_ELLIPSIZE_END)
            gtk_widget_set_halign(title, GTK_ALIGN_START)
            margins(title, 6)
            gtk_list_box_row_set_child(typed(row), title)
            n11g_set_label(row, note.title)
            gtk_list_box_append(op(list), row)
            rows.append((row, note.id))
        }
    }

    /// A new, empty note: the editor is cleared and the title entry takes the focus at once
    /// (what is typed next is the title, even before the vault has sealed the note); the note
    /// is "Note N" until a title is typed.
    func newNote() {
        guard !creating else {
            gtk_entry_grab_focus_without_selecting(typed(titleEntry))
            return
        }
        saveNow()
        creating = true
        typedMeanwhile = false
        currentID = nil
        loadingText = true
        gtk_editable_set_text(op(titleEntry), "")
        gtk_text_buffer_set_text(gtk_text_view_get_buffer(typed(text)), "", 0)
        loadingText = false
        dirty = false
        let title = "Note \(notes.count + 1)"
        gtk_entry_set_placeholder_text(typed(titleEntry), title)
        setEditable(true)
        showEmptyState(false)
        setText(status, "New note")
        // Without selecting (a selection would be replaced by the next key typed); again once
        // the editor, hidden behind the empty state a moment ago, is laid out (GTK does not give
        // the focus to a widget that is not mapped yet).
        gtk_entry_grab_focus_without_selecting(typed(titleEntry))
        onMain { [weak self] in
            guard let self, creating, gtk_widget_has_focus(titleEntry) == 0 else { return }
            gtk_entry_grab_focus_without_selecting(typed(titleEntry))
        }
        screen.app.session.run({ vault in try vault.notes.addNote(title: title, body: []) }) { [weak self] result in
            guard let self, creating else { return }
            creating = false
            switch result {
            case .success(let note):
                currentID = note.id
                if typedMeanwhile {
                    // Sealed by the autosave, as any edit.
                    dirty = true
                    lastEdit = App.monotonic()
                } else {
                    setText(status, "Saved")
                }
                reload()
            case .failure(let error):
                setEditable(false)
                screen.app.tell("The note cannot be created", describe(error))
                reload()
            }
        }
    }

    private func open(_ id: ItemID) {
        guard !creating else { return }
        saveNow()
        screen.app.session.run({ vault -> (NoteSummary?, SecretBytes) in
            let note = try vault.notes.list().first { $0.id == id }
            var plain = try vault.notes.noteBody(ItemRef(id))
            return (note, SecretBytes(consuming: &plain))  // guarded memory; the array is zeroed
        }) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let (note, body)):
                currentID = id
                loadingText = true
                gtk_editable_set_text(op(titleEntry), note?.title ?? "")
                let buffer = gtk_text_view_get_buffer(typed(text))
                // With its length: no terminating NUL appended (a grown array would leave a copy).
                body.withUnsafeBytes { p in
                    if let base = p.baseAddress {
                        gtk_text_buffer_set_text(buffer, base.assumingMemoryBound(to: CChar.self), Int32(clamping: p.count))
                    }
                }
                loadingText = false
                dirty = false
                setEditable(true)
                setText(status, note?.fadesAt.map { "Fades in " + Countdown.text($0.timeIntervalSinceNow) } ?? "Saved")
            case .failure(let error): screen.app.tell("The note cannot be opened", describe(error))
            }
        }
    }

    private func edited() {
        guard !loadingText else { return }
        if creating {
            typedMeanwhile = true
            setText(status, "Editing…")
            return
        }
        guard currentID != nil else { return }
        dirty = true
        lastEdit = App.monotonic()
        setText(status, "Editing…")
    }

    /// Once a second: autosave a second after the last edit.
    func tick(now: Date) {
        if dirty, App.monotonic() - lastEdit >= 1 { saveNow() }
    }

    /// Seals the editor's text into the vault (queued before anything later, lock included).
    func saveNow() {
        guard dirty, let id = currentID else { return }
        dirty = false
        let buffer = gtk_text_view_get_buffer(typed(text))
        var start = GtkTextIter(), end = GtkTextIter()
        gtk_text_buffer_get_bounds(buffer, &start, &end)
        guard let raw = gtk_text_buffer_get_text(buffer, &start, &end, 0) else { return }
        let count = strlen(raw)
        let body = SecretBytes(copying: UnsafeRawBufferPointer(start: raw, count: count))
        memset(raw, 0, count)
        g_free(raw)
        let title = string(gtk_editable_get_text(op(titleEntry)))
        screen.app.session.run({ vault in
            var plain = body.withUnsafeBytes { Array($0) }
            defer { secureZero(&plain) }
            return try vault.notes.updateNote(ItemRef(id), body: plain, title: title.isEmpty ? nil : title)
        }) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let note):
                if currentID == id { currentID = note.id }  // a sealed edit is a new item
                setText(status, "Saved")
                if let i = rows.firstIndex(where: { $0.id == id }) { rows[i].id = note.id }
                // A new title: its row says it too (changed in place: the list is not rebuilt
                // under the typing).
                if !title.isEmpty, let row = rows.first(where: { $0.id == note.id })?.row,
                   let child = gtk_list_box_row_get_child(typed(row)) {
                    setText(child, title)
                    n11g_set_label(row, title)
                }
            case .failure(let error):
                setText(status, "Not saved: " + describe(error))
            }
        }
    }

    func tearDown() {
        saveNow()
        creating = false
        currentID = nil
        loadingText = true
        gtk_text_buffer_set_text(gtk_text_view_get_buffer(typed(text)), "", 0)
        gtk_editable_set_text(op(titleEntry), "")
        loadingText = false
        show([])
    }
}
