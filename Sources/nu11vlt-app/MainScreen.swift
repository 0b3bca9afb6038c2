// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// The unlocked vault: a sidebar of sections (Photos and videos, Files, each album, Notes,
/// Fade, Settings), the section's content, and a header bar with the section's actions
/// (Import, Export, Delete for the gallery; New note for the notes) and Lock. What another
/// process changes in the vault meanwhile shows up by itself (`VaultWatcher`).
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
    enum Section: Equatable { case photos, files, album(String), fade, notes, settings }
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
    /// The gallery's actions: shown only in a gallery section (not in Notes or Settings).
    private var galleryOnly: [Widget] = []
    /// "New note": shown only in Notes.
    private var newNote: Widget?
    /// Follows other processes' changes to the vault (nil without inotify).
    private var watcher: VaultWatcher?

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
        let share = app.actions.iconButton("emblem-shared-symbolic", name: "Share selected", action: "share-selected")
        let delete = app.actions.iconButton("user-trash-symbolic", name: "Delete selected", action: "delete-selected")
        wideOnly = [importFolder, export, share, move, delete, archives]
        let importButton = app.actions.iconButton("list-add-symbolic", name: "Import", action: "import")
        galleryOnly = [importButton, importFolder, export, share, move, delete]
        let newNote = iconButton("document-new-symbolic", name: "New note") { [unowned self] in self.notes.newNote() }
        gtk_widget_set_visible(newNote, 0)
        self.newNote = newNote
        adw_header_bar_pack_start(op(header), newNote)
        adw_header_bar_pack_start(op(header), importButton)
        adw_header_bar_pack_start(op(header), importFolder)
        adw_header_bar_pack_start(op(header), export)
        adw_header_bar_pack_start(op(header), share)
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
        let location = app.session.locked.location
        watcher = VaultWatcher(folder: location.vaultRoot, arrivals: { location.arrivalFolders },
                               changed: { [weak self] in self?.followVault() }, arrived: { [weak self] in self?.followOtherDevices() })
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
            viewer.setNarrow(unfold == 0)
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
        let gallerySection = section != .notes && section != .settings
        for widget in Set(wideOnly + galleryOnly) {
            gtk_widget_set_visible(widget, (!folded || !wideOnly.contains(widget)) && (gallerySection || !galleryOnly.contains(widget)) ? 1 : 0)
        }
        gtk_widget_set_visible(newNote, section == .notes ? 1 : 0)
    }

    /// Another process changed the vault (`VaultWatcher`): the section shown is listed again,
    /// and the screen changes only where the listing did. Not while this app imports (it lists
    /// after each group itself) nor in the viewer (its item stays until it is left).
    private func followVault() {
        guard !transfers.isRunning else { return }
        switch section {
        case .notes:
            notes.reload()
            reloadAlbums()
        case .settings: reloadAlbums()
        default:
            guard string(gtk_stack_get_visible_child_name(op(content))) == "gallery" else { return reloadAlbums() }
            reload(quiet: true)
        }
    }

    /// Files another device's synchronizer wrote (`VaultWatcher`): the session takes them in
    /// (FORMAT.md § 9.6), and the gallery follows when that changed what the vault lists.
    private func followOtherDevices() {
        app.session.run({ vault in vault.devices.followOtherDevices() }) { [weak self] result in
            if case .success(true) = result { self?.followVault() }
        }
    }

    func tearDown() {
        watcher?.stop()
        watcher = nil
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
        add("Files", .files, icon: "folder-documents-symbolic")
        for album in albums { add("Album \(album.name)", .album(album.name), icon: "folder-pictures-symbolic") }
        add("Notes", .notes, icon: "text-x-generic-symbolic")
        add("Fade", .fade, icon: "alarm-symbolic")
        add("Settings", .settings, icon: "emblem-system-symbolic")
    }

    func select(_ section: Section) {
        self.section = section
        switch section {
        case .photos: setText(title, "Photos")
        case .files: setText(title, "Files")
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
            gtk_widget_set_visible(gallery.filters.root, section == .fade ? 0 : 1)
            gallery.filters.setAlbums(albumNames, showAlbums: !isAlbum)
            reload()
        }
        foldChanged()
    }

    private var isAlbum: Bool { if case .album = section { true } else { false } }

    /// Lists the section's items, sorted by capture date (newest first), then the albums: those
    /// are read after the first screen is handed over, so the sidebar never delays it.
    /// `first` runs on the main thread before the items are shown; returning false drops them.
    /// `quiet`: a refresh (another process changed the vault) that leaves the grid alone when
    /// it lists the same items.
    func reload(quiet: Bool = false, first: (() -> Bool)? = nil) {
        let section = self.section
        let filter = section == .fade ? LibraryFilter() : gallery.filters.filter
        gallery.firstScreen.begin()
        let window = app.window
        let headCount = FirstScreen.count(windowWidth: window.map { gtk_widget_get_width($0) } ?? 1024,
                                          windowHeight: window.map { gtk_widget_get_height($0) } ?? 720)
        let scale = Int(window.map { gtk_widget_get_scale_factor($0) } ?? 1)
        // A refresh makes the first screen only of the items it does not show yet (the new ones).
        let known: Set<ItemID> = quiet ? Set(gallery.summaries.keys) : []
        app.session.run({ vault -> ([(id: ItemID, date: Date)], [ItemSummary]?, FirstScreen, Set<ItemID>, [ItemID: Date]) in
            let album: String? = if case .album(let name) = section { name } else { nil }
            let start = Timings.enabled ? App.monotonic() : 0
            defer { if Timings.enabled { Timings.report("list-call", (App.monotonic() - start) * 1000) } }
            if section == .fade {
                // A handful of items: their summaries (with the deadlines) at once.
                let items = try vault.items.list(limit: Int.max, order: .taken).items.filter { $0.fadesAt != nil }
                return ([], items.reversed(), FirstScreen(), [], vault.items.fadeDeadlines())
            }
            let scope: LibraryFilter.Scope = section == .photos ? .media : section == .files ? .files : .everything
            let entries = try filter.entries(vault, album: album, scope: scope)
            let dated = entries.map { (id: $0.id, date: $0.date) }
            let changed = Set(entries.lazy.filter(\.changed).map(\.id))
            if Timings.enabled { Timings.count("listed-changed", changed.count) }
            if Timings.enabled { Timings.report("list-ids", (App.monotonic() - start) * 1000) }
            let head = try FirstScreen(vault: vault, ids: dated.prefix(headCount).map(\.id).filter { !known.contains($0) }[...], scale: scale)
            if Timings.enabled { Timings.report("list-head", (App.monotonic() - start) * 1000) }
            return (dated, nil, head, changed, vault.items.fadeDeadlines())
        }) { [weak self] result in
            guard let self, first?() ?? true else { return }
            switch result {
            case .success(let (dated, summaries, head, changed, deadlines)):
                guard self.section == section, filter == (section == .fade ? LibraryFilter() : gallery.filters.filter) else { return }
                // Items another process turned, renamed or moved: their tiles are made again.
                if !changed.isEmpty { gallery.refresh(changed) }
                gallery.followFades(deadlines)
                if quiet, summaries == nil, dated.map(\.id) == gallery.ids { return reloadAlbums() }
                if quiet && Timings.enabled { reportPainted() }
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

    /// `--timings`: when the first frame after a refresh was painted (monotonic clock; the GUI
    /// test compares it with the moment the command line's import ended).
    private func reportPainted() {
        guard let clock = gtk_widget_get_frame_clock(gallery.grid).map(UnsafeMutableRawPointer.init) else { return }
        var handler: UInt = 0
        handler = on(clock, "after-paint") {
            Timings.report("refresh-painted-at", App.monotonic() * 1000)
            g_signal_handler_disconnect(clock, gulong(handler))
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
            gallery.filters.setAlbums(albumNames, showAlbums: !isAlbum)
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
