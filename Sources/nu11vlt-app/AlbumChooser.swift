// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Vault

/// "Move to album": the albums to choose from (a typo can no longer make a new album), and a
/// new album only when asked for by name.
extension Transfers {
    /// Asks which album; `body` gets the album's name and whether it is to be created.
    func askAlbum(_ heading: String, current: String?, _ body: @escaping @MainActor (String, Bool) -> Void) {
        screen.app.session.run({ vault in try vault.albums.list().map(\.name) }) { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let error): screen.app.tell(heading, describe(error))
            case .success(let names): chooseAlbum(heading, names: names.filter { $0 != current }, body)
            }
        }
    }

    private func chooseAlbum(_ heading: String, names: [String], _ body: @escaping @MainActor (String, Bool) -> Void) {
        var radios: [(Widget, String)] = []
        var group: Widget?
        let column = box(true, spacing: 6)
        for name in names {
            let radio = must(gtk_check_button_new_with_label(name))
            if let group { gtk_check_button_set_group(typed(radio), typed(group)) } else { group = radio }
            append(column, radio)
            radios.append((radio, name))
        }
        let newRadio = must(gtk_check_button_new_with_label("New album:"))
        if let group { gtk_check_button_set_group(typed(newRadio), typed(group)) }
        let entry = must(gtk_entry_new())
        n11g_set_label(entry, "New album name")
        gtk_entry_set_placeholder_text(typed(entry), "Name")
        gtk_widget_set_hexpand(entry, 1)
        append(column, box(false, spacing: 6, [newRadio, entry]))
        gtk_check_button_set_active(typed(radios.first?.0 ?? newRadio), 1)
        on(raw(entry), "changed") { gtk_check_button_set_active(typed(newRadio), 1) }
        let text = names.isEmpty ? "There is no album yet: name a new one." : "Choose an album, or name a new one."
        present(heading, text, extra: column, action: "Move") {
            if gtk_check_button_get_active(typed(newRadio)) != 0 {
                let name = string(gtk_editable_get_text(op(entry)))
                if !name.isEmpty { body(name, true) }
            } else if let chosen = radios.first(where: { gtk_check_button_get_active(typed($0.0)) != 0 }) {
                body(chosen.1, false)
            }
        }
    }
}
