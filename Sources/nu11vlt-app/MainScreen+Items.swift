// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// The gallery's selection actions: delete (asking first, naming what goes) and move to an album.
extension MainScreen {
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
}
