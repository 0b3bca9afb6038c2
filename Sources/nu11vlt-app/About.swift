// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Nu11Release

/// The main menu (the header bar's ☰, where GNOME apps keep About) and the About window: the
/// name, the version (the VERSION file, stamped at build time) and the license.
@MainActor
func mainMenuButton(_ app: App, vault: Bool = false) -> Widget {
    let menu = must(gtk_menu_button_new())
    gtk_menu_button_set_icon_name(op(menu), "open-menu-symbolic")
    gtk_widget_set_tooltip_text(menu, "Main menu")
    n11g_set_label(menu, "Main menu")
    let popover = must(gtk_popover_new())
    let shortcuts = button("Keyboard Shortcuts", style: "flat") { [unowned app] in
        gtk_popover_popdown(typed(popover))
        app.showShortcuts()
    }
    let about = button("About Nu11VLT", style: "flat") { [unowned app] in
        gtk_popover_popdown(typed(popover))
        app.showAbout()
    }
    // In the vault, the header bar's less frequent actions too (a narrow window hides their buttons).
    let vaultItems: [Widget] = !vault ? [] : [("Import a Folder…", "import-folder"), ("Export Selection…", "export-selected"),
                                              ("Share Selection…", "share-selected"),
                                              ("Move Selection to Album…", "move-selected"), ("Delete Selection…", "delete-selected"),
                                              ("Archives…", "archives")].map { text, action in
        button(text, style: "flat") { [unowned app] in
            gtk_popover_popdown(typed(popover))
            app.actions.activate(action)
        }
    }
    gtk_popover_set_child(typed(popover), box(true, spacing: 2, vaultItems + [shortcuts, about]))
    gtk_menu_button_set_popover(op(menu), popover)
    return menu
}

/// A flat header bar without a title (the window's controls), with the main menu when `app` is given.
@MainActor
func flatHeader(_ app: App?) -> Widget {
    let header = must(adw_header_bar_new())
    gtk_widget_add_css_class(header, "flat")
    adw_header_bar_set_title_widget(op(header), gtk_label_new(""))
    if let app { adw_header_bar_pack_end(op(header), mainMenuButton(app)) }
    return header
}

/// A full-window page: the header above `column`, which is centred and scrolls when the window is small.
@MainActor
func scrolledPage(_ header: Widget, _ column: Widget) -> Widget {
    gtk_widget_set_valign(column, GTK_ALIGN_CENTER)
    gtk_widget_set_halign(column, GTK_ALIGN_CENTER)
    gtk_widget_set_vexpand(column, 1)
    margins(column, 12)
    let scroller = gtk_scrolled_window_new()
    gtk_scrolled_window_set_child(op(scroller), column)
    gtk_widget_set_vexpand(scroller, 1)
    return box(true, spacing: 0, [header, scroller])
}

extension App {
    /// The shortcuts window (Ctrl+?), as GNOME apps have: every accelerator the app binds.
    func showShortcuts() {
        let groups: [(String, [(String, String)])] = [
            ("Vault", [("Lock the vault", "<Control>l"), ("Import files", "<Control>o"), ("Import a folder", "<Control><Shift>o"), ("Export the selection", "<Control>e"),
                       ("Move the selection to an album", "<Control>m"), ("Delete the selection (asks first)", "Delete"),
                       ("Quit", "<Control>q")]),
            ("Viewer", [("Previous item", "Left"), ("Next item", "Right"), ("Zoom in", "plus"), ("Zoom out", "minus"),
                        ("Fit to the window", "0"), ("Full screen", "F11"), ("Information", "i"), ("Play a video", "space"),
                        ("Delete the item (asks first)", "Delete"), ("Back to the gallery", "Escape")]),
            ("General", [("Keyboard shortcuts", "<Control>question")]),
        ]
        var xml = "<interface><object class=\"GtkShortcutsWindow\" id=\"shortcuts\"><property name=\"modal\">1</property>"
            + "<child><object class=\"GtkShortcutsSection\"><property name=\"section-name\">main</property>"
        for (title, rows) in groups {
            xml += "<child><object class=\"GtkShortcutsGroup\"><property name=\"title\">\(title)</property>"
            for (what, accel) in rows {
                let escaped = accel.replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
                xml += "<child><object class=\"GtkShortcutsShortcut\"><property name=\"title\">\(what)</property>"
                    + "<property name=\"accelerator\">\(escaped)</property></object></child>"
            }
            xml += "</object></child>"
        }
        xml += "</object></child></object></interface>"
        let builder = gtk_builder_new_from_string(xml, -1)
        defer { g_object_unref(UnsafeMutableRawPointer(builder)) }
        guard let shortcuts = gtk_builder_get_object(builder, "shortcuts") else { return }
        let w = UnsafeMutablePointer<GtkWidget>(OpaquePointer(shortcuts))
        n11g_set_label(w, "Keyboard Shortcuts")
        gtk_window_set_title(typed(w), "Keyboard Shortcuts")
        if let window { gtk_window_set_transient_for(typed(w), typed(window)) }
        gtk_window_present(typed(w))
    }

    func showAbout() {
        let about = must(adw_about_window_new())
        let w = OpaquePointer(about)
        adw_about_window_set_application_name(w, Nu11Release.name)
        adw_about_window_set_application_icon(w, "org.nu11vlt.Nu11VLT")
        adw_about_window_set_version(w, Nu11Release.version)
        adw_about_window_set_developer_name(w, "The Nu11VLT authors")
        adw_about_window_set_comments(w, "A zero-network encrypted vault for photos and notes.")
        adw_about_window_set_copyright(w, Nu11Release.copyright)
        adw_about_window_set_license_type(w, GTK_LICENSE_GPL_3_0)
        n11g_set_label(about, "About Nu11VLT")
        if let window { gtk_window_set_transient_for(typed(about), typed(window)) }
        gtk_window_set_modal(typed(about), 1)
        gtk_window_present(typed(about))
    }
}
