// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// Import (file chooser, drag and drop), export (file chooser), with a progress bar and
/// Cancel. An import runs a file at a time on the worker; Cancel stops before the next file,
/// and every file is all or nothing, so nothing is left half-written.
@MainActor
final class Transfers {
    unowned let screen: MainScreen
    private var cancelled = false
    private var running = false

    init(screen: MainScreen) { self.screen = screen }

    func cancel() { cancelled = true }

    /// Whether an import is under way (it lists the section after each group itself).
    var isRunning: Bool { running }

    // MARK: import

    func chooseImport() {
        choose("Import into the vault", action: GTK_FILE_CHOOSER_ACTION_OPEN, accept: "Import", multiple: true) { [unowned self] paths in
            self.importFiles(paths)
        }
    }

    /// A whole folder (and its subfolders), as `nu11vlt import -r` does: a phone dump in one go.
    func chooseImportFolder() {
        choose("Import a folder into the vault", action: GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, accept: "Import folder", multiple: false) {
            [unowned self] paths in self.importFiles(paths)
        }
    }

    /// A drop of files or folders on the content area imports them (nothing is ever dragged out).
    func acceptDrops(on target: Widget) {
        let drop = gtk_drop_target_new(n11g_file_list_type(), GDK_ACTION_COPY)
        let handler: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<GValue>?, Double, Double, UnsafeMutableRawPointer?) -> Int32 = { _, value, _, _, data in
            guard let data, let joined = n11g_dropped_paths(value) else { return 0 }
            let paths = String(cString: joined).split(separator: "\n").map(String.init)
            g_free(joined)
            let body = ClosureBox<@MainActor ([String]) -> Void>.body(data)
            MainActor.assumeIsolated { body(paths) }
            return 1
        }
        let body: @MainActor ([String]) -> Void = { [unowned self] in self.importFiles($0) }
        connectSignal(UnsafeMutableRawPointer(drop), "drop", body, handler: unsafeBitCast(handler, to: GCallback.self))
        gtk_widget_add_controller(target, controller(drop))
    }

    /// Imports through the library's plan, a group at a time: each group is one group
    /// commit (as the command line does it), small enough that tiles scrolling into view
    /// get the worker between groups; a cancel stops before the next group.
    ///
    /// The plan walks the dropped or chosen folders on a thread of its own (a phone dump of
    /// thousands of files takes a while to list), never on the GTK main thread, and not on the
    /// vault's worker either, whose tiles keep coming meanwhile. The import counts as running
    /// from the first moment, so a second drop waits its turn.
    func importFiles(_ paths: [String]) {
        guard !running else { return screen.app.tell("An import is running", "Wait for it to finish or cancel it.") }
        let album: String? = if case .album(let name) = screen.section { name } else { nil }
        running = true
        screen.progress(0, "Looking at the files to import")
        let groupLimit = Self.groupFiles
        Self.planner.async { [weak self] in
            let plan = Result { try ImportPlan(paths: paths, recursive: true, album: album, groupLimit: groupLimit) }
            onMain { [weak self] in
                guard let self else { return }
                switch plan {
                case .failure(let error):
                    running = false
                    screen.progress(nil, "")
                    screen.app.tell("Nothing was imported", describe(error))
                case .success(let plan):
                    askAboutDuplicates(plan) { [weak self] plan in
                        guard let self else { return }
                        running = false
                        guard let plan else { return }
                        run(plan)
                    }
                }
            }
        }
    }

    /// Where import plans are made (folders walked): off the main thread and the vault's worker.
    private static let planner = DispatchQueue(label: "nu11vlt.import-plan", qos: .userInitiated)

    private func run(_ plan: ImportPlan) {
        var groups = plan.groups
        let total = plan.files.count
        running = true
        cancelled = false
        var failures: [String] = []
        var imported = 0
        func next(_ g: Int, tried: Int) {
            guard g < groups.count, !cancelled else {
                running = false
                screen.progress(nil, "")
                screen.reload()
                let done = cancelled ? "Import cancelled after \(tried) of \(total) files" : "Imported \(imported) of \(total) files"
                if !failures.isEmpty { screen.app.tell(done, failures.prefix(5).joined(separator: "\n")) }
                return
            }
            screen.progress(Double(tried) / Double(max(1, total)), "Importing \(tried + 1) of \(total)")
            let group = groups[g]
            screen.app.session.run({ vault -> [ItemSummary] in
                try vault.items.importGroup(group, of: plan)
            }) { [weak self] result in
                guard let self else { return }
                switch result {
                case .success(let items): imported += items.count
                case .failure(let stop as ImportStopped):
                    imported += stop.imported.count
                    failures.append(describe(stop.cause))
                    // The disk is full: the rest would not fit either. Another error stopped this
                    // group after some of its files went in (counted above); the next groups go on.
                    if stop.cause.diskFull { groups.removeLast(groups.count - g - 1) }
                case .failure where group.files.count > 1:
                    // Nothing of the group went in: try its files one by one, so one bad
                    // file costs only itself (and says which it was).
                    groups.insert(contentsOf: group.files.map { ImportPlan.Group(album: group.album, files: [$0]) }, at: g + 1)
                    return next(g + 1, tried: tried)
                case .failure(let error): failures.append(describe(error))
                }
                screen.reload()
                next(g + 1, tried: tried + group.files.count)
            }
        }
        next(0, tried: 0)
    }

    /// Files per group commit in the app (the command line commits up to 256 at once).
    static let groupFiles = 16

    // MARK: export

    func chooseExport(_ shown: [ItemID]) {
        guard !shown.isEmpty else { return screen.app.tell("Nothing selected", "Select items in the gallery first.") }
        let ids = screen.gallery.withMotions(shown)  // a Live Photo exports as its two files
        let single = ids.count == 1 ? screen.gallery.summary(ids[0]) : nil
        let action = single == nil ? GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER : GTK_FILE_CHOOSER_ACTION_SAVE
        choose(single == nil ? "Export \(ids.count) items to a folder" : "Export", action: action, accept: "Export",
               multiple: false, name: single?.name) { [unowned self] paths in
            guard let target = paths.first else { return }
            screen.progress(0, "Exporting")
            if let single {
                screen.app.session.run({ vault in
                    _ = try vault.items.export(ItemRef(single.id), toFile: target, overwrite: false, stripLocation: vault.photos.stripsLocationByDefault)
                }) { [weak self] result in
                    self?.screen.progress(nil, "")
                    if case .failure(let error) = result { self?.screen.app.tell("Export failed", describe(error)) }
                }
                return
            }
            exportMany(ids, to: target)
        }
    }

    // MARK: dialogs

    /// A file chooser over the app's window; `body` gets the chosen local paths.
    func choose(_ title: String, action: GtkFileChooserAction, accept: String, multiple: Bool, name: String? = nil,
                _ body: @escaping ([String]) -> Void) {
        chooseFiles(screen.app.window, title, action: action, accept: accept, multiple: multiple, name: name, body)
    }

    /// A dialog with one text field.
    func askText(_ heading: String, _ text: String, initial: String, _ body: @escaping (String) -> Void) {
        let entry = must(gtk_entry_new())
        gtk_editable_set_text(op(entry), initial)
        n11g_set_label(entry, heading)
        present(heading, text, extra: entry, action: "OK") {
            let value = string(gtk_editable_get_text(op(entry)))
            if !value.isEmpty { body(value) }
        }
    }

    /// A dialog with a password field (twice when `confirm`); the secret goes to `body`.
    func askPassword(_ heading: String, _ text: String, confirm: Bool, _ body: @escaping (SecretBytes) -> Void) {
        let first = must(gtk_password_entry_new())
        n11g_set_label(first, confirm ? "New password" : "Password")
        let second = must(gtk_password_entry_new())
        n11g_set_label(second, "Repeat password")
        let fields = box(true, spacing: 6, confirm ? [first, second] : [first])
        present(heading, text, extra: fields, action: "OK") { [unowned self] in
            let a = string(gtk_editable_get_text(op(first)))
            let b = string(gtk_editable_get_text(op(second)))
            gtk_editable_set_text(op(first), "")
            gtk_editable_set_text(op(second), "")
            guard !confirm || a == b else { return screen.app.tell(heading, "The two entries differ; nothing was changed.") }
            var bytes = Array(a.utf8)
            body(SecretBytes(consuming: &bytes))
        }
    }

    func present(_ heading: String, _ text: String, extra: Widget, action: String, _ onOK: @escaping () -> Void) {
        let dialog = adw_message_dialog_new(UnsafeMutablePointer(OpaquePointer(screen.app.window)), heading, text)
        let d = op(dialog).map { UnsafeMutablePointer<AdwMessageDialog>($0) }
        adw_message_dialog_set_extra_child(d, extra)
        adw_message_dialog_add_response(d, "cancel", "Cancel")
        adw_message_dialog_add_response(d, "ok", action)
        adw_message_dialog_set_default_response(d, "ok")
        adw_message_dialog_set_response_appearance(d, "ok", ADW_RESPONSE_SUGGESTED)
        onResponse(dialog) { response in if response == "ok" { onOK() } }
        gtk_window_present(UnsafeMutablePointer(OpaquePointer(dialog)))
    }
}

/// A file chooser (GTK's, or the desktop portal's); `body` gets the chosen local paths.
@MainActor
func chooseFiles(_ window: Widget?, _ title: String, action: GtkFileChooserAction, accept: String, multiple: Bool, name: String? = nil,
             _ body: @escaping ([String]) -> Void) {
    let chooser = gtk_file_chooser_native_new(title, UnsafeMutablePointer(OpaquePointer(window)), action, accept, "Cancel")
    let fc = chooser
    gtk_file_chooser_set_select_multiple(fc, multiple ? 1 : 0)
    if let name { gtk_file_chooser_set_current_name(fc, name) }
    gtk_native_dialog_set_modal(typed(chooser), 1)
    // One answer per chooser: GTK's own chooser can emit "response" again when a second
    // Return reaches it while it hides (a loaded machine), which imported the same files
    // twice — the second time after the first import's duplicate question was answered.
    var answered = false
    on1(UnsafeMutableRawPointer(chooser), "response") { response in
        guard !answered else { return }
        answered = true
        let code = Int32(truncatingIfNeeded: Int(bitPattern: response))
        var paths: [String] = []
        if code == GTK_RESPONSE_ACCEPT.rawValue, let list = gtk_file_chooser_get_files(fc) {
            for i in 0..<g_list_model_get_n_items(list) {
                guard let file = g_list_model_get_item(list, i) else { continue }
                if let path = g_file_get_path(OpaquePointer(file)) {
                    paths.append(String(cString: path))
                    g_free(path)
                }
                g_object_unref(file)
            }
            g_object_unref(UnsafeMutableRawPointer(list))
        }
        gtk_native_dialog_destroy(typed(chooser))
        if !paths.isEmpty { body(paths) }
    }
    gtk_native_dialog_show(typed(chooser))
}
