// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// Half a vault at the expected places (most often one half was moved): says which half is
/// missing and what to do, and finds the other half by the vault ID both carry (the
/// library's `searchOtherHalf`, as `nu11vlt locate` does) in a folder the user picks, or
/// opens a vault elsewhere. Never a dead end, and nothing here deletes anything.
@MainActor
final class HalfScreen {
    unowned let app: App
    let root: Widget
    private let status: Widget
    private let found: Widget
    private let location: VaultLocation
    private let missingKeyStore: Bool

    init(app: App, presence: LockedVault.Presence) {
        self.app = app
        location = app.session.locked.location
        missingKeyStore = presence == .vaultOnly
        let heading = missingKeyStore ? "The key store is missing" : "The vault folder is missing"
        let text = missingKeyStore
            ? "The vault folder is at \(location.vaultRoot), but its key store is not at \(location.keyStoreRoot). "
              + "The key store never leaves this computer; if it was moved, search for it. If it is lost, the recovery phrase rebuilds it "
              + "(nu11vlt recover, in a terminal); the vault folder is left as it is."
            : "The key store is at \(location.keyStoreRoot), but the vault folder is not at \(location.vaultRoot). "
              + "If it was moved (to another disk, say), search for it, or restore it from a backup."
        status = label("", style: "dim-label", wrap: true)
        n11g_set_label(status, "Search status")
        found = box(true, spacing: 6)
        let search = button(missingKeyStore ? "Search for the key store…" : "Search for the vault folder…", style: "suggested-action") {}
        let elsewhere = button("Open a vault elsewhere…") {}
        let body = label(text, wrap: true)
        gtk_label_set_max_width_chars(op(body), 52)
        let column = box(true, spacing: 12, [label(heading, style: "title-2"), body, search, elsewhere, status, found])
        gtk_widget_set_size_request(column, 300, -1)
        root = scrolledPage(flatHeader(app), column)
        on(raw(search), "clicked") { [unowned self] in self.chooseWhereToSearch() }
        on(raw(elsewhere), "clicked") { [unowned app] in openElsewhere(app) }
    }

    private func chooseWhereToSearch() {
        chooseFiles(app.window, "Where to search", action: GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, accept: "Search", multiple: false) { [weak self] paths in
            guard let self, let folder = paths.first else { return }
            setText(status, "Searching \(folder)…")
            app.session.runLocked({ locked in try locked.searchOtherHalf(in: folder) }) { [weak self] result in
                self?.show(result, in: folder)
            }
        }
    }

    private func show(_ result: Result<[FoundHalf], any Error>, in folder: String) {
        while let child = gtk_widget_get_first_child(found) { gtk_box_remove(typed(found), child) }
        switch result {
        case .failure(let error): setText(status, describe(error))
        case .success(let halves) where halves.isEmpty:
            setText(status, "Not found under \(folder) (six levels deep). Try a wider folder, such as your home folder or a disk.")
        case .success(let halves):
            setText(status, halves.count == 1 ? "Found it:" : "Found \(halves.count) candidates:")
            for half in halves {
                let pair = half.kind == "keystore"
                    ? VaultLocation(vaultRoot: location.vaultRoot, keyStoreRoot: half.path)
                    : VaultLocation(vaultRoot: half.path, keyStoreRoot: location.keyStoreRoot)
                append(found, button("Open with \(half.path)", name: "Open with \(half.path)") { [unowned self] in self.open(pair, found: half) })
            }
        }
    }
}

extension HalfScreen {
    /// Opens the pair; a vault folder found is first recorded in the key store, so the next
    /// launch opens it without a search (issue 56). A failure to record is said and the vault
    /// opens all the same.
    private func open(_ pair: VaultLocation, found half: FoundHalf) {
        guard half.kind == "vault" else { return app.open(pair) }
        let folder = half.path
        app.session.runLocked({ locked in try locked.rememberVaultFolder(folder) }) { [unowned app] result in
            if case .failure(let error) = result {
                FileHandle.standardError.write(Data("nu11vlt-app: the vault folder's place could not be recorded: \(describe(error))\n".utf8))
            }
            app.open(pair)
        }
    }
}

/// "Open a vault elsewhere": its folder, then its key store's, each chosen; then its unlock
/// screen (or what is missing there).
@MainActor
func openElsewhere(_ app: App) {
    chooseFiles(app.window, "The vault folder", action: GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, accept: "Next", multiple: false) { [unowned app] vault in
        guard let vault = vault.first else { return }
        chooseFiles(app.window, "Its key store", action: GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, accept: "Open", multiple: false) { [unowned app] keys in
            guard let keys = keys.first else { return }
            app.open(VaultLocation(vaultRoot: vault, keyStoreRoot: keys))
        }
    }
}
