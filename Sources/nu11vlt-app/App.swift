// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// The application: one window whose content is the unlock screen or, once unlocked, the
/// vault (gallery, notes, fade, settings), under a cover that hides it whenever the window is
/// not focused. Lock (Ctrl+L, the Lock button, idle time) zeroes the keys and the caches and
/// tears the vault's widgets down.
@MainActor
final class App {
    /// Replaced only while no vault is open (`open`: a vault elsewhere, or a found half).
    private(set) var session: Session
    /// Videos in the user's player, from a private RAM folder (emptied on lock and quit).
    let application: UnsafeMutablePointer<AdwApplication>
    private(set) var window: Widget?
    private var stack: Widget?
    private var cover: Widget?
    private(set) var unlockScreen: UnlockScreen?
    /// The first run's screen (create, then the recovery phrase) while it is up.
    var firstRun: AnyObject?
    private(set) var main: MainScreen?
    private(set) lazy var actions = Actions(application)
    private(set) var role: DomainKeys.Role?
    /// Monotonic seconds of the last key press, click or pointer motion in the window.
    private var lastInput = App.monotonic()
    var idleLimit: Double = 300
    /// Files named on the command line (or opened with the app), imported after unlock.
    var pendingImports: [String] = []

    init(location: VaultLocation) {
        session = Session(location: location)
        application = adw_application_new("org.nu11vlt.Nu11VLT", G_APPLICATION_NON_UNIQUE)
        followSession()
    }

    /// When the library ends the session under an operation (the PIN was changed by another
    /// program), the app locks: the unlock screen says why, and nothing stays on screen.
    private func followSession() {
        session.onEndedByVault { [weak self] reason in self?.lock(reason: reason) }
    }

    nonisolated static func monotonic() -> Double { Double(g_get_monotonic_time()) / 1e6 }

    func activate() {
        if let window { gtk_window_present(UnsafeMutablePointer(OpaquePointer(window))); return }
        n11g_harden_settings()
        // Software OpenGL (no GPU) takes both cores of a small machine to draw what cairo draws
        // in a third of the time: the gallery's fling ran at 59.6 ms p95 a frame with llvmpipe,
        // 22.4 ms with cairo (bench/results/latest.md, 2 cores, 100,000 photos).
        if n11g_prefer_cairo_over_software_gl() != 0, Timings.enabled {
            FileHandle.standardError.write(Data("renderer cairo (OpenGL is software here)\n".utf8))
        }
        let win = adw_application_window_new(UnsafeMutablePointer(OpaquePointer(application)))
        window = win
        gtk_window_set_title(UnsafeMutablePointer(OpaquePointer(win)), "Nu11VLT")
        gtk_window_set_default_size(UnsafeMutablePointer(OpaquePointer(win)), 1024, 720)
        let stack = gtk_stack_new()
        self.stack = stack
        // No transition between the unlock screen and the vault: a lock hides the content in the
        // same frame (a crossfade would show it fading for 200 ms), and an unlock shows the
        // gallery at once (a crossfade costs full-window frames: 190 ms with software OpenGL).
        gtk_stack_set_transition_type(op(stack), GTK_STACK_TRANSITION_TYPE_NONE)
        let overlay = gtk_overlay_new()
        gtk_overlay_set_child(op(overlay), stack)
        let cover = box(true, spacing: 12, [
            label("Nu11VLT", style: "title-1"),
            label("Hidden while the window is not focused", style: "dim-label"),
        ])
        gtk_widget_add_css_class(cover, "background")
        gtk_widget_set_valign(cover, GTK_ALIGN_FILL)
        gtk_widget_set_halign(cover, GTK_ALIGN_FILL)
        gtk_widget_set_hexpand(cover, 1)
        gtk_widget_set_vexpand(cover, 1)
        n11g_set_label(cover, "Privacy cover")
        gtk_widget_set_visible(cover, 0)
        self.cover = cover
        gtk_overlay_add_overlay(op(overlay), cover)
        adw_application_window_set_content(UnsafeMutablePointer(OpaquePointer(win)), overlay)
        on(raw(win), "notify::is-active") { [unowned self] in self.updateCover() }
        addActions()
        trackInput(win)
        showUnlock(message: nil)
        gtk_window_present(UnsafeMutablePointer(OpaquePointer(win)))
        every(milliseconds: 1000) { [unowned self] in self.tick(); return true }
    }

    /// The app's commands (see `Actions`): Ctrl+L locks, Ctrl+Q quits; the header bar's
    /// buttons run the same actions, disabled while the vault is locked.
    private func addActions() {
        actions.add("lock", accels: ["<Control>l"], needsVault: true) { [unowned self] in self.lock(reason: "Locked") }
        actions.add("quit", accels: ["<Control>q"]) { [unowned self] in self.quit() }
        actions.add("about") { [unowned self] in self.showAbout() }
        actions.add("shortcuts", accels: ["<Control>question"]) { [unowned self] in self.showShortcuts() }
        actions.add("import", accels: ["<Control>o"], needsVault: true) { [unowned self] in self.main?.transfers.chooseImport() }
        actions.add("import-folder", accels: ["<Control><Shift>o"], needsVault: true) { [unowned self] in self.main?.transfers.chooseImportFolder() }
        actions.add("export-selected", accels: ["<Control>e"], needsVault: true) { [unowned self] in
            guard let main = self.main else { return }
            main.transfers.chooseExport(main.gallery.selectedIDs)
        }
        actions.add("share-selected", needsVault: true) { [unowned self] in
            guard let main = self.main else { return }
            main.transfers.shareSelected(main.gallery.selectedIDs)
        }
        actions.add("delete-selected", needsVault: true) { [unowned self] in
            guard let main = self.main else { return }
            main.confirmDelete(main.gallery.selectedIDs)
        }
        actions.add("move-selected", accels: ["<Control>m"], needsVault: true) { [unowned self] in
            guard let main = self.main else { return }
            main.moveToAlbum(main.gallery.selectedIDs)
        }
        actions.add("archives", needsVault: true) { [unowned self] in self.main?.transfers.archiveMenu() }
        actions.vaultOpen(false)
    }

    /// The cover is up whenever the window is not the focused one and the vault is open.
    /// The app's own dialogs (a file chooser, a confirmation) do not count as leaving it: the
    /// cover goes up only when no window of this app has the focus. The main window's focus
    /// change is signalled; a dialog's is seen by the one-second tick (and a re-check just after
    /// the main window lets the focus go, when the dialog takes it).
    private func updateCover() {
        guard let cover else { return }
        let ours = App.anyWindowActive()
        gtk_widget_set_visible(cover, (!ours && main != nil) ? 1 : 0)
        if !ours && main != nil {
            every(milliseconds: 150) { [weak self] in
                guard let self, let cover = self.cover else { return false }
                gtk_widget_set_visible(cover, (!App.anyWindowActive() && self.main != nil) ? 1 : 0)
                return false
            }
        }
    }

    static func anyWindowActive() -> Bool {
        guard let list = gtk_window_list_toplevels() else { return false }
        defer { g_list_free(list) }
        var node: UnsafeMutablePointer<GList>? = list
        while let current = node {
            // A hidden window (a chooser closed earlier) can keep reporting is-active: only a mapped one counts.
            if let data = current.pointee.data, gtk_widget_get_mapped(data.assumingMemoryBound(to: GtkWidget.self)) != 0,
               gtk_window_is_active(data.assumingMemoryBound(to: GtkWindow.self)) != 0 { return true }
            node = current.pointee.next
        }
        return false
    }

    private func trackInput(_ win: Widget?) {
        let key = gtk_event_controller_key_new()
        gtk_event_controller_set_propagation_phase(key, GTK_PHASE_CAPTURE)
        onKey(key) { [unowned self] in self.lastInput = App.monotonic() }
        gtk_widget_add_controller(win, key)
        let motion = gtk_event_controller_motion_new()
        gtk_event_controller_set_propagation_phase(motion, GTK_PHASE_CAPTURE)
        on(raw(motion), "motion") { [unowned self] in self.lastInput = App.monotonic() }
        gtk_widget_add_controller(win, motion)
        let click = controller(gtk_gesture_click_new())
        gtk_event_controller_set_propagation_phase(click, GTK_PHASE_CAPTURE)
        on(raw(click), "pressed") { [unowned self] in self.lastInput = App.monotonic() }
        gtk_widget_add_controller(win, click)
    }

    /// Once a second: idle auto-lock, and the screens' own clocks (countdowns, fade badges).
    private func tick() {
        updateCover()
        if main != nil, idleLimit > 0, App.monotonic() - lastInput >= idleLimit {
            lock(reason: "Locked after \(DurationText.format(idleLimit)) without input")
            return
        }
        unlockScreen?.tick()
        main?.tick()
    }

    func noteInput() { lastInput = App.monotonic() }

    // MARK: states

    func showUnlock(message: String?) {
        let screen = UnlockScreen(app: self, message: message)
        unlockScreen = screen
        replace(with: screen.root, name: "unlock")
        screen.start()
    }

    /// Half a vault here: what is missing, and how to find it (`HalfScreen`).
    func showHalf(_ presence: LockedVault.Presence) {
        unlockScreen = nil
        let screen = HalfScreen(app: self, presence: presence)
        firstRun = screen
        replace(with: screen.root, name: "half")
    }

    /// Another vault (a folder chooser, or a moved half found): a new session on it, then its
    /// unlock screen — or its first run, or what is missing there. Only while locked.
    func open(_ location: VaultLocation) {
        guard main == nil else { return }
        session.close()
        session = Session(location: location)
        followSession()
        showUnlock(message: nil)
    }

    /// No vault yet: the first run creates one here (no terminal needed).
    func showCreate() {
        unlockScreen = nil
        let screen = CreateScreen(app: self)
        firstRun = screen
        replace(with: screen.root, name: "create")
    }

    /// The new vault's recovery phrase, once; then the vault opens.
    func showPhrase(_ phrase: String, backups: Bool) {
        let screen = PhraseScreen(app: self, phrase: phrase, backups: backups)
        firstRun = screen
        replace(with: screen.root, name: "phrase")
    }

    func unlocked(role: DomainKeys.Role) {
        firstRun = nil
        self.role = role
        actions.vaultOpen(true)
        unlockScreen = nil
        lastInput = App.monotonic()
        let screen = MainScreen(app: self)
        main = screen
        session.run({ vault in vault.settings.lockIdle }) { [weak self] result in
            if case .success(let idle) = result { self?.idleLimit = idle }
        }
        // The vault's screen replaces the unlock screen ("Unlocking…") once its first listing is
        // in, so the first frame drawn shows the gallery filled in (not an empty one first,
        // drawn while the listing runs and competing with it for the CPU).
        screen.reload { [weak self, unowned screen] in
            guard let self, self.main === screen else { return false }  // locked meanwhile
            replace(with: screen.root, name: "vault")
            updateCover()
            return true
        }
        if !pendingImports.isEmpty {
            let files = pendingImports
            pendingImports = []
            screen.transfers.importFiles(files)
        }
    }

    /// Zeroes the keys and caches and returns to the unlock screen.
    func lock(reason: String) {
        guard main != nil else { return }
        main?.tearDown()
        main = nil
        role = nil
        actions.vaultOpen(false)
        session.lock()
        showUnlock(message: reason)
        updateCover()
    }

    func quit() {
        main?.tearDown()
        main = nil
        session.close()
        g_application_quit(UnsafeMutablePointer(OpaquePointer(application)))
    }

    private func replace(with child: Widget, name: String) {
        guard let stack else { return }
        let old = gtk_stack_get_visible_child(op(stack))
        gtk_stack_add_named(op(stack), child, name + "-\(UInt64(App.monotonic() * 1000))")
        gtk_stack_set_visible_child(op(stack), child)
        if let old { gtk_stack_remove(op(stack), old) }
    }

    // MARK: dialogs

    /// A question in a modal dialog: `responses` in order (id, button label, and the
    /// suggested or destructive look), `preferred` answered by Enter, Escape answering
    /// "cancel"; `answer` gets the chosen id.
    func ask(_ heading: String, _ body: String, _ responses: [(id: String, label: String, look: AdwResponseAppearance)],
             preferred: String? = nil, _ answer: @escaping @MainActor (String) -> Void) {
        let dialog = adw_message_dialog_new(UnsafeMutablePointer(OpaquePointer(window)), heading, body)
        let d = op(dialog).map { UnsafeMutablePointer<AdwMessageDialog>($0) }
        for response in responses {
            adw_message_dialog_add_response(d, response.id, response.label)
            if response.look != ADW_RESPONSE_DEFAULT { adw_message_dialog_set_response_appearance(d, response.id, response.look) }
        }
        if let preferred { adw_message_dialog_set_default_response(d, preferred) }
        adw_message_dialog_set_close_response(d, "cancel")
        onResponse(dialog, answer)
        gtk_window_present(UnsafeMutablePointer(OpaquePointer(dialog)))
    }

    /// A one-line message in a modal dialog.
    func tell(_ heading: String, _ body: String) {
        let dialog = adw_message_dialog_new(UnsafeMutablePointer(OpaquePointer(window)), heading, body)
        adw_message_dialog_add_response(op(dialog).map { UnsafeMutablePointer($0) }, "ok", "OK")
        gtk_window_present(UnsafeMutablePointer(OpaquePointer(dialog)))
    }
}

/// A key-press handler (the "key-pressed" signal returns a gboolean: FALSE lets the key on).
@MainActor
func onKey(_ controller: OpaquePointer?, _ body: @escaping MainAction) {
    let handler: @convention(c) (UnsafeMutableRawPointer?, UInt32, UInt32, UInt32, UnsafeMutableRawPointer?) -> Int32 = { _, _, _, _, data in
        if let data {
            let body = ClosureBox<MainAction>.body(data)
            MainActor.assumeIsolated { body() }
        }
        return 0
    }
    connectSignal(raw(controller), "key-pressed", body, handler: unsafeBitCast(handler, to: GCallback.self))
}
