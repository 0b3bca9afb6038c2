// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// The unlocked vault: a sidebar of sections (Photos, each album, Notes, Fade, Settings),
/// the section's content, and a header bar with Import, Export, Delete, Lock.
@MainActor
final class MainScreen {
    unowned let app: App
    let root: Widget
    let content: Widget
    private(set) lazy var gallery = Gallery(screen: self)
    private(set) lazy var notes = NotesPane(screen: self)
    private(set) lazy var settings = SettingsPane(screen: self)
    private(set) lazy var viewer = Viewer(screen: self)
    private(set) lazy var transfers = Transfers(screen: self)
    private let sidebar: Widget
    private let title: Widget
    private let progressBar: Widget
    private let progressRow: Widget
    private var albums: [AlbumSummary] = []
    /// What the gallery shows now.
    enum Section: Equatable { case photos, album(String), fade, notes, settings }
    private(set) var section: Section = .photos
    private var sectionRows: [(row: Widget, section: Section)] = []
    /// Sidebar and content side by side, or one at a time when the window is narrow (a phone:
    /// 360 px); libadwaita 1.2's leaflet (its split views came in 1.4).
    private let leaflet: OpaquePointer
    private let sideScroll: Widget
    /// Shown only while folded: back to the sections.
    private let sectionsButton: Widget
    /// Hidden while folded (the main menu has them too).
    private var wideOnly: [Widget] = []

    init(app: App) {
        self.app = app
        title = label("Photos", style: "heading")
        gtk_label_set_ellipsize(op(title), PANGO_ELLIPSIZE_END)
        let header = adw_header_bar_new()
        adw_header_bar_set_title_widget(op(header), title)
        content = gtk_stack_new()
        gtk_stack_set_transition_type(op(content), GTK_STACK_TRANSITION_TYPE_CROSSFADE)
        gtk_widget_set_hexpand(content, 1)
        gtk_widget_set_vexpand(content, 1)
        sidebar = gtk_list_box_new()
        gtk_widget_add_css_class(sidebar, "navigation-sidebar")
        n11g_set_label(sidebar, "Sections")
        sideScroll = must(gtk_scrolled_window_new())
        gtk_scrolled_window_set_child(op(sideScroll), sidebar)
        gtk_scrolled_window_set_policy(op(sideScroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_widget_set_size_request(sideScroll, 200, -1)
        let fold = must(adw_leaflet_new())
        leaflet = must(op(fold))
        adw_leaflet_set_can_navigate_back(leaflet, 1)
        _ = adw_leaflet_append(leaflet, sideScroll)
        adw_leaflet_page_set_navigatable(adw_leaflet_append(leaflet, gtk_separator_new(GTK_ORIENTATION_VERTICAL)), 0)
        _ = adw_leaflet_append(leaflet, content)
        adw_leaflet_set_visible_child(leaflet, content)
        gtk_widget_set_vexpand(fold, 1)
        sectionsButton = must(gtk_button_new_from_icon_name("go-previous-symbolic"))
        progressBar = gtk_progress_bar_new()
        gtk_progress_bar_set_show_text(op(progressBar), 1)
        gtk_widget_set_hexpand(progressBar, 1)
        n11g_set_label(progressBar, "Progress")
        progressRow = box(false, spacing: 12, [progressBar])
        margins(progressRow, 8)
        gtk_widget_set_visible(progressRow, 0)
        root = box(true, spacing: 0, [header, fold, progressRow])
        append(progressRow, button("Cancel", name: "Cancel transfer") { [unowned self] in self.transfers.cancel() })
        gtk_stack_add_named(op(content), gallery.root, "gallery")
        gtk_stack_add_named(op(content), notes.root, "notes")
        gtk_stack_add_named(op(content), settings.root, "settings")
        gtk_stack_add_named(op(content), viewer.root, "viewer")
        gtk_widget_set_tooltip_text(sectionsButton, "Sections")
        n11g_set_label(sectionsButton, "Sections")
        gtk_widget_set_visible(sectionsButton, 0)
        adw_header_bar_pack_start(op(header), sectionsButton)
        let importFolder = app.actions.iconButton("folder-new-symbolic", name: "Import a folder", action: "import-folder")
        let move = app.actions.iconButton("folder-symbolic", name: "Move selected to album", action: "move-selected")
        let archives = app.actions.iconButton("package-x-generic-symbolic", name: "Archives", action: "archives")
        let export = app.actions.iconButton("document-save-symbolic", name: "Export selected", action: "export-selected")
        let delete = app.actions.iconButton("user-trash-symbolic", name: "Delete selected", action: "delete-selected")
        wideOnly = [importFolder, export, move, delete, archives]
        adw_header_bar_pack_start(op(header), app.actions.iconButton("list-add-symbolic", name: "Import", action: "import"))
        adw_header_bar_pack_start(op(header), importFolder)
        adw_header_bar_pack_start(op(header), export)
        adw_header_bar_pack_start(op(header), move)
        adw_header_bar_pack_start(op(header), delete)
        adw_header_bar_pack_end(op(header), mainMenuButton(app, vault: true))
        adw_header_bar_pack_end(op(header), app.actions.iconButton("system-lock-screen-symbolic", name: "Lock", action: "lock"))
        adw_header_bar_pack_end(op(header), archives)
        on1(raw(sidebar), "row-activated") { [unowned self] row in
            guard let entry = self.sectionRows.first(where: { raw($0.row) == row }) else { return }
            self.select(entry.section)
            adw_leaflet_set_visible_child(self.leaflet, self.content)
        }
        on(raw(sectionsButton), "clicked") { [unowned self] in adw_leaflet_set_visible_child(self.leaflet, self.sideScroll) }
        on(raw(fold), "notify::folded") { [unowned self] in self.foldChanged() }
        on(raw(fold), "notify::visible-child") { [unowned self] in self.foldChanged() }
        transfers.acceptDrops(on: content)
        rebuildSidebar()
        // The window's width alone decides (not the pages' natural widths, which change from
        // page to page): under 600 px one pane at a time, and the header's extra buttons hidden,
        // so they never hold the window wider than a phone's screen.
        if let window = app.window {
            on(raw(window), "notify::default-width") { [weak self] in self?.fitWidth() }
        }
        fitWidth()
    }

    static let narrowWidth: Int32 = 600

    /// Follows the window's width (on resize, and every second as a fallback: `tick`).
    func fitWidth() {
        guard let window = app.window else { return }
        var width = gtk_widget_get_width(window)
        if width <= 0 { gtk_window_get_default_size(typed(window), &width, nil) }
        let unfold: gboolean = width >= Self.narrowWidth ? 1 : 0
        if adw_leaflet_get_can_unfold(leaflet) != unfold {
            adw_leaflet_set_can_unfold(leaflet, unfold)
            notes.setNarrow(unfold == 0)
        }
        foldChanged()
    }

    /// Narrow (folded): one pane at a time, a back button to the sections, fewer header buttons.
    private func foldChanged() {
        // A leaflet that may not unfold is folded already, though it says so only at its next
        // allocation: the extra buttons must not show (and widen the window) in between.
        let folded = adw_leaflet_get_folded(leaflet) != 0 || adw_leaflet_get_can_unfold(leaflet) == 0
        let onContent = adw_leaflet_get_visible_child(leaflet) == content
        gtk_widget_set_visible(sectionsButton, folded && onContent ? 1 : 0)
        for widget in wideOnly { gtk_widget_set_visible(widget, folded ? 0 : 1) }
    }

    func tearDown() {
        notes.tearDown()
        viewer.tearDown()
        gallery.tearDown()
        transfers.cancel()
    }

    func tick() {
        fitWidth()
        let now = Date()
        gallery.tick(now: now)
        viewer.tick(now: now)
        notes.tick(now: now)
    }

    // MARK: sections

    private func rebuildSidebar() {
        while let child = gtk_widget_get_first_child(sidebar) { gtk_list_box_remove(op(sidebar), child) }
        sectionRows = []
        func add(_ text: String, _ section: Section, icon: String) {
            let row = gtk_list_box_row_new()
            let content = box(false, spacing: 8, [gtk_image_new_from_icon_name(icon), label(text)])
            margins(content, 6)
            gtk_list_box_row_set_child(typed(row), content)
            n11g_set_label(row, text)
            gtk_list_box_append(op(sidebar), row)
            if let row { sectionRows.append((row, section)) }
            if section == self.section { gtk_list_box_select_row(op(sidebar), typed(row)) }
        }
        add("Photos", .photos, icon: "image-x-generic-symbolic")
        for album in albums { add("Album \(album.name)", .album(album.name), icon: "folder-pictures-symbolic") }
        add("Notes", .notes, icon: "text-x-generic-symbolic")
        add("Fade", .fade, icon: "alarm-symbolic")
        add("Settings", .settings, icon: "emblem-system-symbolic")
    }

    func select(_ section: Section) {
        self.section = section
        switch section {
        case .photos: setText(title, "Photos")
        case .album(let name): setText(title, "Album \(name)")
        case .fade: setText(title, "Fade")
        case .notes: setText(title, "Notes")
        case .settings: setText(title, "Settings")
        }
        switch section {
        case .notes:
            gtk_stack_set_visible_child_name(op(content), "notes")
            notes.reload()
        case .settings:
            gtk_stack_set_visible_child_name(op(content), "settings")
            settings.reload()
        default:
            gtk_stack_set_visible_child_name(op(content), "gallery")
            reload()
        }
    }

    /// Lists the section's items, sorted by capture date (newest first), then the albums: those
    /// are read after the first screen is handed over, so the sidebar never delays it.
    /// `first` runs on the main thread before the items are shown; returning false drops them.
    func reload(first: (() -> Bool)? = nil) {
        let section = self.section
        gallery.firstScreen.begin()
        let window = app.window
        let headCount = FirstScreen.count(windowWidth: window.map { gtk_widget_get_width($0) } ?? 1024,
                                          windowHeight: window.map { gtk_widget_get_height($0) } ?? 720)
        let scale = Int(window.map { gtk_widget_get_scale_factor($0) } ?? 1)
        app.session.run({ vault -> ([(id: ItemID, date: Date)], [ItemSummary]?, FirstScreen) in
            let album: String? = if case .album(let name) = section { name } else { nil }
            let start = Timings.enabled ? App.monotonic() : 0
            defer { if Timings.enabled { Timings.report("list-call", (App.monotonic() - start) * 1000) } }
            if section == .fade {
                // A handful of items: their summaries (with the deadlines) at once.
                let items = try vault.items.list(limit: Int.max, order: .taken).items.filter { $0.fadesAt != nil }
                return ([], items.reversed(), FirstScreen())
            }
            let dated = Array(try vault.items.datedItemIDs(album: album).reversed())
            if Timings.enabled { Timings.report("list-ids", (App.monotonic() - start) * 1000) }
            let head = try FirstScreen(vault: vault, ids: dated.prefix(headCount).map(\.id)[...], scale: scale)
            if Timings.enabled { Timings.report("list-head", (App.monotonic() - start) * 1000) }
            return (dated, nil, head)
        }) { [weak self] result in
            guard let self, first?() ?? true else { return }
            switch result {
            case .success(let (dated, summaries, head)):
                if let start = gallery.firstScreen.started { Timings.report("listed", (App.monotonic() - start) * 1000) }
                reloadAlbums()
                if let summaries {
                    gallery.show(summaries)
                } else {
                    gallery.show(ids: dated.map(\.id), dates: dated.map(\.date), head: head)
                }
                if let start = gallery.firstScreen.started { Timings.report("shown", (App.monotonic() - start) * 1000) }
            case .failure(let error): app.tell("The vault cannot be listed", describe(error))
            }
        }
    }

    var albumNames: [String] { albums.map(\.name) }

    /// Re-reads the albums for the sidebar (after one is renamed or deleted in the settings).
    func reloadAlbums() {
        app.session.run({ vault in try vault.albums.list() }) { [weak self] result in
            guard let self, case .success(let albums) = result, albums != self.albums else { return }
            self.albums = albums
            if case .album(let name) = section, !albums.contains(where: { $0.name == name }) { section = .settings }
            rebuildSidebar()
        }
    }

    func openViewer(_ items: [ItemSummary], at index: Int) {
        viewer.open(items, at: index)
        gtk_stack_set_visible_child_name(op(content), "viewer")
    }

    func closeViewer() {
        gtk_stack_set_visible_child_name(op(content), "gallery")
        reload()
    }

    // MARK: progress

    func progress(_ fraction: Double?, _ text: String) {
        gtk_widget_set_visible(progressRow, fraction == nil ? 0 : 1)
        gtk_progress_bar_set_fraction(op(progressBar), fraction ?? 0)
        gtk_progress_bar_set_text(op(progressBar), text)
    }

    // MARK: delete

    /// Asks before deleting, naming what goes ("Delete “IMG_2041.jpg”?", or the first names and
    /// how many more).
    func confirmDelete(_ ids: [ItemID], then: @escaping () -> Void = {}) {
        guard !ids.isEmpty else { return app.tell("Nothing selected", "Select items in the gallery first.") }
        // A Live Photo's motion has no tile of its own: its file name is fetched, so the
        // question names it too (a pairing by name may join files the user did not pair).
        let motions = gallery.withMotions(ids).filter { !ids.contains($0) }
        guard !motions.isEmpty else { return askDelete(ids, motions: [], then: then) }
        app.session.run({ vault in try vault.items.summaries(motions) }) { [weak self] result in
            switch result {
            case .success(let found): self?.askDelete(ids, motions: found, then: then)
            case .failure(let error): self?.app.tell("Delete failed", describe(error))
            }
        }
    }

    /// `motions`: the Live Photo motions still there, which go with their stills.
    private func askDelete(_ ids: [ItemID], motions: [ItemSummary], then: @escaping () -> Void) {
        let motionNames = motions.map(\.name)
        let names = ids.map { gallery.name(of: $0) ?? "an item" }
        let heading = ids.count == 1 ? "Delete “\(names[0])”?" : "Delete \(ids.count) items?"
        var what = ""
        if ids.count > 1 {
            what = names.prefix(5).map { "“\($0)”" }.joined(separator: ", ")
                + (ids.count > 5 ? " and \(ids.count - 5) more" : "") + " will be destroyed. "
        }
        if !motionNames.isEmpty {
            what += (motionNames.count == 1 ? "Its Live Photo motion " : "Their Live Photo motions ")
                + motionNames.prefix(5).map { "“\($0)”" }.joined(separator: ", ")
                + (motionNames.count > 5 ? " and \(motionNames.count - 5) more" : "") + (motionNames.count == 1 ? " goes too. " : " go too. ")
        }
        let all = ids + motions.map(\.id)
        confirm(heading, what + "Deleted items are destroyed as the “Delete securely” setting says. This cannot be undone.",
                action: "Delete") { [unowned self] in
            app.session.run({ vault in try vault.items.delete(all.map(ItemRef.init)) }) { [weak self] result in
                if case .failure(let error) = result { self?.app.tell("Delete failed", describe(error)) }
                then()
                self?.reload()
            }
        }
    }

    /// Moves the selection to an album chosen from the list (or a new one, named), in one
    /// worker call; says how many moved.
    func moveToAlbum(_ ids: [ItemID]) {
        guard !ids.isEmpty else { return app.tell("Nothing selected", "Select items in the gallery first.") }
        let heading = ids.count == 1 ? "Move “\(gallery.name(of: ids[0]) ?? "the item")” to an album" : "Move \(ids.count) items to an album"
        let all = gallery.withMotions(ids)
        transfers.askAlbum(heading, current: nil) { [unowned self] name, create in
            app.session.run({ vault in
                if create { _ = try vault.albums.createAlbum(name) }
                for id in all { try vault.albums.moveItem(ItemRef(id), toAlbum: name) }
            }) { [weak self] result in
                if case .failure(let error) = result { self?.app.tell("Move failed", describe(error)) }
                self?.reload()
            }
        }
    }

    /// A yes/no dialog; `body` runs on yes.
    func confirm(_ heading: String, _ text: String, action: String, _ body: @escaping () -> Void) {
        app.ask(heading, text, [("cancel", "Cancel", ADW_RESPONSE_DEFAULT), ("yes", action, ADW_RESPONSE_DESTRUCTIVE)]) { response in
            if response == "yes" { body() }
        }
    }
}

/// AdwMessageDialog's "response" signal: (dialog, response id, user data).
@MainActor
func onResponse(_ dialog: UnsafeMutablePointer<GtkWidget>?, _ body: @escaping @MainActor (String) -> Void) {
    on1(raw(dialog), "response") { response in
        body(string(response?.assumingMemoryBound(to: CChar.self)))
    }
}
