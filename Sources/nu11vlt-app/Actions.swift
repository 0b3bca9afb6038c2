// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk

/// The app's commands as GActions on the application (`app.NAME`): the header bar's buttons,
/// the main menu and the keyboard accelerators all reach the same action, and an action that
/// needs an unlocked vault is disabled in one place while it is locked.
@MainActor
final class Actions {
    private let application: UnsafeMutablePointer<AdwApplication>
    private var actions: [String: OpaquePointer] = [:]
    /// The actions that need an unlocked vault.
    private var needVault: [String] = []

    init(_ application: UnsafeMutablePointer<AdwApplication>) { self.application = application }

    /// Adds `app.NAME`, run by `body`, with its keyboard accelerators (e.g. "<Control>l").
    func add(_ name: String, accels: [String] = [], needsVault: Bool = false, _ body: @escaping MainAction) {
        guard let action = g_simple_action_new(name, nil) else { return }
        // "activate" is (action, parameter, user data): swapped, the handler sees the box first.
        on(UnsafeMutableRawPointer(action), "activate", body)
        g_action_map_add_action(OpaquePointer(application), action)
        actions[name] = action
        if needsVault { needVault.append(name) }
        guard !accels.isEmpty else { return }
        var strings = accels.map { strdup($0) }
        strings.append(nil)
        defer { for s in strings { free(s) } }
        strings.withUnsafeBufferPointer { list in
            list.baseAddress?.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: list.count) {
                gtk_application_set_accels_for_action(typed(OpaquePointer(application)), "app." + name, $0)
            }
        }
    }

    /// Enables or disables every action that needs an unlocked vault.
    func vaultOpen(_ open: Bool) {
        for name in needVault { if let action = actions[name] { g_simple_action_set_enabled(action, open ? 1 : 0) } }
    }
}

/// An icon button that runs `app.ACTION` (greyed while the action is disabled).
@MainActor
func actionButton(_ icon: String, name: String, action: String) -> Widget {
    let b = must(gtk_button_new_from_icon_name(icon))
    gtk_widget_set_tooltip_text(b, name)
    n11g_set_label(b, name)
    gtk_actionable_set_action_name(OpaquePointer(b), "app." + action)
    return b
}
