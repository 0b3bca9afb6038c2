// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk

/// The app's commands as GActions: `app.NAME` on the application, and `viewer.NAME` and
/// `settings.NAME` on their panes (a widget's action group, reached from inside it). Buttons,
/// menus and keyboard accelerators all reach the same action, and an action that cannot run
/// now (the vault is locked, there is no next item, the Skeleton Switch is off) is disabled in
/// one place, which greys every button bound to it.
@MainActor
final class Actions {
    /// "app", "viewer", "settings": what the actions' full names begin with.
    let prefix: String
    private let map: OpaquePointer
    private let application: UnsafeMutablePointer<AdwApplication>?
    private var actions: [String: OpaquePointer] = [:]
    /// The actions that need an unlocked vault.
    private var needVault: [String] = []

    /// The application's own actions (`app.NAME`), which may have keyboard accelerators.
    init(_ application: UnsafeMutablePointer<AdwApplication>) {
        prefix = "app"
        map = OpaquePointer(application)
        self.application = application
    }

    /// Actions that belong to `widget` and what it holds (`PREFIX.NAME`).
    init(on widget: Widget, prefix: String) {
        self.prefix = prefix
        let group = must(g_simple_action_group_new())
        map = OpaquePointer(group)
        application = nil
        gtk_widget_insert_action_group(widget, prefix, OpaquePointer(group))
        g_object_unref(UnsafeMutableRawPointer(group))  // the widget holds it now
    }

    /// Adds NAME, run by `body`, with its keyboard accelerators (e.g. "<Control>l"; app only).
    func add(_ name: String, accels: [String] = [], needsVault: Bool = false, _ body: @escaping MainAction) {
        guard let action = g_simple_action_new(name, nil) else { return }
        // "activate" is (action, parameter, user data): swapped, the handler sees the box first.
        on(UnsafeMutableRawPointer(action), "activate", body)
        register(name, action, needsVault: needsVault)
        guard !accels.isEmpty, let application else { return }
        var strings = accels.map { strdup($0) }
        strings.append(nil)
        defer { for s in strings { free(s) } }
        strings.withUnsafeBufferPointer { list in
            list.baseAddress?.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: list.count) {
                gtk_application_set_accels_for_action(typed(OpaquePointer(application)), "app." + name, $0)
            }
        }
    }

    /// Adds NAME with a string parameter (a button gives it as its target: `button(…, target:)`).
    func add(_ name: String, parameter body: @escaping @MainActor (String) -> Void) {
        let type = g_variant_type_new("s")
        defer { g_variant_type_free(type) }
        guard let action = g_simple_action_new(name, type) else { return }
        on1(UnsafeMutableRawPointer(action), "activate") { variant in
            guard let variant else { return }
            body(string(g_variant_get_string(OpaquePointer(variant), nil)))
        }
        register(name, action, needsVault: false)
    }

    private func register(_ name: String, _ action: OpaquePointer, needsVault: Bool) {
        g_action_map_add_action(map, action)
        actions[name] = action
        if needsVault { needVault.append(name) }
    }

    /// Enables or disables NAME (and so every button bound to it).
    func setEnabled(_ name: String, _ enabled: Bool) {
        if let action = actions[name] { g_simple_action_set_enabled(action, enabled ? 1 : 0) }
    }

    /// Runs NAME as a button bound to it would (nothing when it is disabled).
    func activate(_ name: String) {
        guard let action = actions[name], g_action_get_enabled(action) != 0 else { return }
        g_action_activate(action, nil)
    }

    /// Enables or disables every action that needs an unlocked vault.
    func vaultOpen(_ open: Bool) {
        for name in needVault { setEnabled(name, open) }
    }

    /// A text button that runs NAME (with `target` as its parameter when the action takes one).
    func button(_ text: String, name: String, action: String, target: String? = nil, style: String? = nil) -> Widget {
        let b = must(gtk_button_new_with_label(text))
        if let style { gtk_widget_add_css_class(b, style) }
        n11g_set_label(b, name)
        bind(b, action, target: target)
        return b
    }

    /// An icon button that runs NAME; `name` is what screen readers (and the tests) call it.
    func iconButton(_ icon: String, name: String, action: String) -> Widget {
        let b = must(gtk_button_new_from_icon_name(icon))
        gtk_widget_set_tooltip_text(b, name)
        n11g_set_label(b, name)
        bind(b, action, target: nil)
        return b
    }

    private func bind(_ button: Widget, _ action: String, target: String?) {
        gtk_actionable_set_action_name(OpaquePointer(button), prefix + "." + action)
        if let target { gtk_actionable_set_action_target_value(OpaquePointer(button), g_variant_new_string(target)) }
    }
}
