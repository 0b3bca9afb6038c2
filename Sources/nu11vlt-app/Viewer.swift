// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Media
import Nu11Vault

/// The viewer (Loupe is the anchor): one item at a time filling the view, the screen preview
/// first, then the full image (decoded by the sandboxed helper) on "Full size" or when zoomed
/// past the fit; `+`/`-`/`0`, Ctrl+scroll and a pinch zoom, a drag pans; Left/Right (and a
/// swipe) step through the items; F11 full screen; `i` or the ⓘ button shows what is known
/// about the item; icon buttons with tooltips for Rotate left/right (a photo), Export, Delete,
/// Move to album, Fade, Back.
/// On a narrow window (a phone, under 600 px) the row keeps Back, Previous, Next, Play and
/// Information and folds the others into its "More actions" menu (GNOME's adaptive header
/// bar: every action stays one tap away, nothing lies off-screen at 360 px).
@MainActor
final class Viewer {
    unowned let screen: MainScreen
    let root: Widget
    private let image = ZoomableImage()
    private let info = InfoPane()
    var picture: Widget { image.picture }
    private let caption: Widget
    let badge: Widget
    private var items: [ItemSummary] = []
    private var position = 0
    var texture: TextureBox?
    private var zoomed = false
    /// Bumped on every step, so a late decode of the previous item is dropped.
    var generation = 0
    /// viewer.back, .previous, .next, .zoom, .export, .move, .fade, .delete (see `updateActions`).
    private let actions: Actions
    /// The buttons that fold into `more` on a narrow window, and the menu itself.
    private var foldable: [Widget] = []
    private var more: Widget?
    private let middle: Widget
    /// Play/Pause, and the video playing in place (`VideoPlayer`), if any.
    var playButton: Widget?
    var player: VideoPlayer?

    init(screen: MainScreen) {
        self.screen = screen
        caption = label("", style: "heading")
        badge = label("", style: "caption")
        let bar = box(false, spacing: 6)
        middle = box(false, spacing: 0, [image.root, info.root])
        // The buttons scroll sideways when the window is narrower than they are (a phone).
        let strip = must(gtk_scrolled_window_new())
        gtk_scrolled_window_set_child(op(strip), bar)
        gtk_scrolled_window_set_policy(op(strip), GTK_POLICY_AUTOMATIC, GTK_POLICY_NEVER)
        gtk_scrolled_window_set_propagate_natural_height(op(strip), 1)
        gtk_widget_set_hexpand(strip, 1)
        gtk_label_set_wrap(op(caption), 1)
        gtk_label_set_wrap(op(badge), 1)
        root = box(true, spacing: 6, [strip, middle, box(false, spacing: 12, [caption, image.level, badge])])
        margins(root, 6)
        actions = Actions(on: root, prefix: "viewer")
        actions.add("back") { [unowned self] in self.close() }
        actions.add("previous") { [unowned self] in self.step(-1) }
        actions.add("next") { [unowned self] in self.step(1) }
        actions.add("zoom") { [unowned self] in self.zoom() }
        actions.add("export") { [unowned self] in
            guard let item = self.current else { return }
            self.screen.transfers.chooseExport([item.id])
        }
        actions.add("move") { [unowned self] in self.moveToAlbum() }
        actions.add("info") { [unowned self] in self.info.toggle() }
        actions.add("zoom-in") { [unowned self] in self.zoomBy(1.25) }
        actions.add("zoom-out") { [unowned self] in self.zoomBy(0.8) }
        actions.add("fullscreen") { [unowned self] in self.toggleFullscreen() }
        actions.add("fade") { [unowned self] in self.fade() }
        actions.add("rotate-left") { [unowned self] in self.rotate(-1) }
        actions.add("rotate-right") { [unowned self] in self.rotate(1) }
        actions.add("play") { [unowned self] in self.play() }
        actions.add("delete") { [unowned self] in
            guard let item = self.current else { return }
            self.screen.confirmDelete([item.id]) { [weak self] in self?.close() }
        }
        for (icon, name, action) in [("view-grid-symbolic", "Back to gallery", "back"), ("go-previous-symbolic", "Previous item", "previous"),
                                     ("go-next-symbolic", "Next item", "next"), ("media-playback-start-symbolic", "Play", "play"),
                                     ("zoom-out-symbolic", "Zoom out", "zoom-out"),
                                     ("zoom-in-symbolic", "Zoom in", "zoom-in"), ("zoom-original-symbolic", "Full size", "zoom"),
                                     ("view-fullscreen-symbolic", "Full screen", "fullscreen"),
                                     ("object-rotate-left-symbolic", "Rotate left", "rotate-left"),
                                     ("object-rotate-right-symbolic", "Rotate right", "rotate-right"),
                                     ("document-save-symbolic", "Export item", "export"), ("folder-symbolic", "Move to album", "move"),
                                     ("alarm-symbolic", "Fade item", "fade"), ("dialog-information-symbolic", "Information", "info")] {
            let b = actions.iconButton(icon, name: name, action: action)
            if action == "play" { playButton = b }
            append(bar, b)
            if !Self.kept.contains(action) { foldable.append(b) }
        }
        let delete = actions.iconButton("user-trash-symbolic", name: "Delete item", action: "delete")
        gtk_widget_add_css_class(delete, "destructive-action")
        append(bar, delete)
        foldable.append(delete)
        let more = Self.moreMenu(actions)
        gtk_widget_set_visible(more, 0)
        append(bar, more)
        self.more = more
        let keys = controller(gtk_event_controller_key_new())
        onKeyValue(keys) { [unowned self] key in
            switch Int32(key) {
            case GDK_KEY_Left: self.actions.activate("previous"); return true
            case GDK_KEY_Right: self.actions.activate("next"); return true
            case GDK_KEY_Escape:
                if self.fullscreen { self.toggleFullscreen() } else { self.close() }
                return true
            case GDK_KEY_plus, GDK_KEY_equal, GDK_KEY_KP_Add: self.zoomBy(1.25); return true
            case GDK_KEY_minus, GDK_KEY_KP_Subtract: self.zoomBy(0.8); return true
            case GDK_KEY_0, GDK_KEY_KP_0: self.image.set(1); return true
            case GDK_KEY_F11: self.toggleFullscreen(); return true
            case GDK_KEY_i: self.info.toggle(); return true
            case GDK_KEY_Delete, GDK_KEY_KP_Delete: self.actions.activate("delete"); return true
            case GDK_KEY_space, GDK_KEY_Return, GDK_KEY_KP_Enter:
                guard let item = self.current, item.isVideo || item.motion != nil else { return false }
                self.play()
                return true
            default: return false
            }
        }
        gtk_widget_add_controller(root, keys)
        let swipe = gtk_gesture_swipe_new()
        onSwipe(controller(swipe)) { [unowned self] dx in if abs(dx) > 300 { self.step(dx < 0 ? 1 : -1) } }
        gtk_widget_add_controller(picture, controller(swipe))
    }

    var current: ItemSummary? { items.indices.contains(position) ? items[position] : nil }

    /// What stays in the row on a narrow window; the rest is in "More actions".
    static let kept: Set<String> = ["back", "previous", "next", "play", "info"]

    /// "More actions": the folded buttons as a menu of labelled buttons bound to the same
    /// actions (so a disabled action greys its entry too), each named as its icon button is.
    private static func moreMenu(_ actions: Actions) -> Widget {
        let menu = must(gtk_menu_button_new())
        gtk_menu_button_set_icon_name(op(menu), "view-more-symbolic")
        gtk_widget_set_tooltip_text(menu, "More actions")
        n11g_set_label(menu, "More actions")
        // GTK 4.8's menu button is a group around a toggle button: the toggle is what a screen
        // reader presses, so it carries the name too.
        if let toggle = gtk_widget_get_first_child(menu) { n11g_set_label(toggle, "More actions") }
        let popover = must(gtk_popover_new())
        let entries: [Widget] = [("Zoom Out", "Zoom out", "zoom-out"), ("Zoom In", "Zoom in", "zoom-in"), ("Full Size", "Full size", "zoom"),
                                 ("Full Screen", "Full screen", "fullscreen"), ("Rotate Left", "Rotate left", "rotate-left"),
                                 ("Rotate Right", "Rotate right", "rotate-right"), ("Export…", "Export item", "export"),
                                 ("Move to Album…", "Move to album", "move"), ("Fade…", "Fade item", "fade"),
                                 ("Delete…", "Delete item", "delete")].map { text, name, action in
            let b = actions.button(text, name: name, action: action, style: "flat")
            if let child = gtk_button_get_child(typed(b)) { gtk_label_set_xalign(op(child), 0) }
            // The menu closes as its entry runs (a dialog may open over it).
            on(raw(b), "clicked") { gtk_popover_popdown(typed(popover)) }
            return b
        }
        gtk_popover_set_child(typed(popover), box(true, spacing: 2, entries))
        gtk_menu_button_set_popover(op(menu), popover)
        return menu
    }

    /// A narrow window (under `MainScreen.narrowWidth`): the folded row, and the information
    /// under the picture rather than beside it.
    func setNarrow(_ narrow: Bool) {
        for b in foldable { gtk_widget_set_visible(b, narrow ? 0 : 1) }
        gtk_widget_set_visible(more, narrow ? 1 : 0)
        gtk_orientable_set_orientation(op(middle), narrow ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL)
    }

    func open(_ items: [ItemSummary], at index: Int) {
        self.items = items
        position = index
        showCurrent()
        gtk_widget_grab_focus(picture)
    }

    func tearDown() {
        generation += 1
        stopVideo()
        if fullscreen { toggleFullscreen() }
        image.show(nil)
        // No name of an item stays in the widget tree once the viewer is gone.
        setText(caption, "")
        setText(badge, "")
        info.clear()
        n11g_set_label(picture, "Photo")
        texture = nil
        items = []
    }

    func tick(now: Date) {
        guard let item = current, let fades = item.fadesAt else { return }
        if fades <= now {
            tearDown()
            screen.closeViewer()
        } else {
            setText(badge, "Fades in " + Countdown.text(fades.timeIntervalSince(now)))
        }
    }

    private func close() {
        tearDown()
        screen.closeViewer()
    }

    private func step(_ delta: Int) {
        guard !items.isEmpty else { return }
        stopVideo()
        position = (position + delta + items.count) % items.count
        showCurrent()
    }

    /// The preview (the sealed screen-size thumbnail) first; a file without one shows its name.
    private func showCurrent() {
        guard let item = current else { return }
        generation += 1
        stopVideo()
        zoomed = false
        let mine = generation
        setText(caption, item.name)
        n11g_set_label(picture, item.name)
        setText(badge, item.fadesAt.map { "Fades in " + Countdown.text($0.timeIntervalSinceNow) } ?? "")
        image.show(nil)
        info.show(item)
        // A shared vault: which device added it (its key file says, § 9.6).
        screen.app.session.run({ vault in vault.devices.addedBy(item.id) }) { [weak self] result in
            guard let self, mine == self.generation, case .success(let device?) = result else { return }
            self.info.show(item, addedOn: device)
        }
        updateActions()
        guard item.thumbnail else { return }
        screen.app.session.run({ vault in TextureBox(try Texture.decode(vault.photos.thumbnail(ItemRef(item.id), size: .preview))) }) { [weak self] result in
            self?.show(result, generation: mine)
        }
    }

    /// The full image, decoded by the helper (up to 4096 px), when asked for.
    private func zoom() {
        guard let item = current, item.isImage, !zoomed else { return }
        zoomed = true
        updateActions()
        let mine = generation
        screen.app.session.run({ vault -> TextureBox in
            var sink = MemorySink(capacity: Int(min(item.size, 1 << 30)))
            _ = try vault.items.export(ItemRef(item.id), to: &sink)
            defer { sink.zero() }
            var bytes = sink.bytes
            defer { secureZero(&bytes) }
            // A JPEG's export carries the user's turn in its EXIF orientation; other images
            // are turned by the helper.
            return TextureBox(try Texture.decodeImage(bytes, maxSide: 4096, turns: item.type == "image/jpeg" ? 0 : item.rotation))
        }) { [weak self] result in
            self?.show(result, generation: mine)
        }
    }

    /// What the current item allows: stepping needs another item, "Full size" an image not yet
    /// shown at full size, an album a permanent item (a fading one stays out of albums).
    private func updateActions() {
        let item = current
        actions.setEnabled("previous", items.count > 1)
        actions.setEnabled("next", items.count > 1)
        actions.setEnabled("zoom", item.map { $0.isImage && !zoomed } ?? false)
        actions.setEnabled("play", item.map { $0.isVideo || $0.motion != nil } ?? false)
        actions.setEnabled("move", item.map { $0.fadesAt == nil } ?? false)
        actions.setEnabled("rotate-left", item?.isImage ?? false)
        actions.setEnabled("rotate-right", item?.isImage ?? false)
        for name in ["export", "fade", "delete"] { actions.setEnabled(name, item != nil) }
    }

    private func show(_ result: Result<TextureBox, any Error>, generation mine: Int) {
        guard mine == generation else { return }
        switch result {
        case .success(let box):
            texture = box
            let scale = image.scale
            image.show(box.texture)
            image.set(scale)
        case .failure(let error):
            setText(badge, describe(error))
        }
    }

    private var fullscreen = false

    private func toggleFullscreen() {
        guard let window = screen.app.window else { return }
        fullscreen.toggle()
        if fullscreen { gtk_window_fullscreen(typed(window)) } else { gtk_window_unfullscreen(typed(window)) }
    }

    /// Zooming past the fit asks for the full image once (the preview is screen-sized).
    private func zoomBy(_ factor: Double) {
        image.zoom(by: factor)
        if image.scale > 1 && !zoomed { zoom() }
    }

    /// Turns the photo a quarter turn (`delta` -1 left, 1 right): the vault keeps the turn and
    /// makes its thumbnails again; the viewer shows the new preview and the grid its new tile.
    private func rotate(_ delta: Int) {
        guard let item = current, item.isImage else { return }
        let mine = generation
        screen.app.session.run({ vault in try vault.photos.rotate(ItemRef(item.id), quarterTurns: delta) }) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let turned):
                screen.gallery.textures.remove(turned.id)
                screen.reload()
                guard mine == generation, let i = items.firstIndex(where: { $0.id == turned.id }) else { return }
                items[i] = turned
                showCurrent()
            case .failure(let error): screen.app.tell("Rotate failed", describe(error))
            }
        }
    }

    private func moveToAlbum() {
        guard let item = current else { return }
        screen.transfers.askAlbum("Move “\(item.name)” to an album", current: item.album) { [unowned self] name, create in
            screen.app.session.run({ vault in
                if create { _ = try vault.albums.createAlbum(name) }
                for id in [item.id] + (item.motion.map { [$0] } ?? []) { try vault.albums.moveItem(ItemRef(id), toAlbum: name) }
            }) { [weak self] result in
                switch result {
                case .success: self?.screen.reload()
                case .failure(let error): self?.screen.app.tell("Move failed", describe(error))
                }
            }
        }
    }

    private func fade() {
        guard let item = current else { return }
        screen.transfers.askText("Fade", "Destroy this item after (e.g. 30s, 10m, 24h, 7d):", initial: "24h") { [unowned self] text in
            screen.app.session.run({ vault -> Date? in
                let seconds = try DurationText.parse(text)
                let id = try vault.items.setFade(ItemRef(item.id), seconds: seconds)
                return try vault.items.fadeDeadline(ItemRef(id.hex))
            }) { [weak self] result in
                switch result {
                case .success: self?.close()
                case .failure(let error): self?.screen.app.tell("Fade failed", describe(error))
                }
            }
        }
    }
}
