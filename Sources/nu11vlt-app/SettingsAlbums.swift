// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// The albums in the settings: each with its number of items, Rename… and Delete… (asked:
/// its items back to Photos, or destroyed with it). New albums are made where items are
/// moved ("Move to album").
@MainActor
final class AlbumRows {
    unowned let screen: MainScreen
    let group: Widget
    private let list: Widget

    init(screen: MainScreen) {
        self.screen = screen
        list = box(true, spacing: 6)
        group = box(true, spacing: 8, [label("Albums", style: "title-3"), list])
    }

    func show(_ albums: [AlbumSummary]) {
        while let child = gtk_widget_get_first_child(list) { gtk_box_remove(typed(list), child) }
        if albums.isEmpty {
            append(list, label("No albums yet: “Move to album” makes one.", style: "dim-label", wrap: true))
            return
        }
        for album in albums {
            let name = label("\(album.name) (\(album.items) item\(album.items == 1 ? "" : "s"))")
            gtk_widget_set_hexpand(name, 1)
            gtk_label_set_xalign(op(name), 0)
            gtk_label_set_ellipsize(op(name), PANGO_ELLIPSIZE_END)
            let rename = button("Rename…", name: "Rename album \(album.name)") { [unowned self] in self.rename(album.name) }
            let delete = button("Delete…", name: "Delete album \(album.name)") { [unowned self] in self.delete(album) }
            append(list, box(false, spacing: 6, [name, rename, delete]))
        }
    }

    private func rename(_ old: String) {
        screen.transfers.askText("Rename the album “\(old)”", "New name:", initial: old) { [unowned self] new in
            guard new != old else { return }
            finish({ vault in try vault.albums.renameAlbum(old, to: new) })
        }
    }

    private func delete(_ album: AlbumSummary) {
        let items = album.items == 1 ? "its item" : "its \(album.items) items"
        let text = album.items == 0 ? "It is empty." : "Keep \(items) in Photos, or destroy \(items) with it (as “Delete securely” says; no undo)."
        var responses: [(id: String, label: String, look: AdwResponseAppearance)] = [
            ("cancel", "Cancel", ADW_RESPONSE_DEFAULT), ("keep", album.items == 0 ? "Delete album" : "Delete album, keep items", ADW_RESPONSE_DEFAULT)]
        if album.items > 0 { responses.append(("destroy", "Delete album and items", ADW_RESPONSE_DESTRUCTIVE)) }
        screen.app.ask("Delete the album “\(album.name)”?", text, responses) { [unowned self] response in
            let name = album.name
            switch response {
            case "keep": finish({ vault in try vault.albums.deleteAlbum(name, items: .moveItemsToPhotos) })
            case "destroy": finish({ vault in try vault.albums.deleteAlbum(name, items: .deleteItems) })
            default: break
            }
        }
    }

    private func finish(_ work: @escaping @Sendable (Vault) throws -> Void) {
        screen.app.session.run(work) { [weak self] result in
            guard let self else { return }
            if case .failure(let error) = result { screen.app.tell("The album was not changed", describe(error)) }
            screen.reloadAlbums()
            screen.settings.reload()
        }
    }
}
