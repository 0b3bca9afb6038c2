// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// Archives from the app: a portable archive (password, checked for strength as the CLI
/// does) exported to a file chosen by the user, and an archive imported after its password.
extension Transfers {
    func archiveMenu() {
        screen.confirmChoice("Archives", "Export the vault to a password-protected archive, or import one.",
                             choices: [("export", "Export archive…"), ("import", "Import archive…")]) { [unowned self] choice in
            choice == "export" ? exportArchive() : importArchive()
        }
    }

    private func exportArchive() {
        askPassword("Archive password", "Use 4 or more random words; whoever has the archive can guess offline.", confirm: true) { [unowned self] secret in
            let bits = Strength.bits(secret)
            guard bits >= Strength.archiveFloor else {
                return screen.app.tell("The password is too weak",
                                       "About \(Int(bits)) bits; use 4 or more random words. Nothing was written.")
            }
            choose("Export archive", action: GTK_FILE_CHOOSER_ACTION_SAVE, accept: "Export", multiple: false,
                   name: "vault.n11a") { [unowned self] paths in
                guard let path = paths.first else { return }
                screen.progress(0, "Exporting archive")
                screen.app.session.run({ vault in
                    try vault.archives.exportArchive(to: path, password: secret, parameters: try Argon2id.calibrate(),
                                            stripLocation: vault.photos.stripsLocationByDefault)
                }) { [weak self] result in
                    self?.screen.progress(nil, "")
                    switch result {
                    case .success(let info): self?.screen.app.tell("Archive exported", "\(info.items) items in \(path)")
                    case .failure(let error): self?.screen.app.tell("Archive export failed", describe(error))
                    }
                }
            }
        }
    }

    private func importArchive() {
        choose("Import archive", action: GTK_FILE_CHOOSER_ACTION_OPEN, accept: "Open", multiple: false) { [unowned self] paths in
            guard let path = paths.first else { return }
            askPassword("Archive password", "The password the archive was exported with (not needed for a secure archive of this device).",
                        confirm: false) { [unowned self] secret in
                screen.progress(0, "Importing archive")
                screen.app.session.run({ vault in try vault.archives.importArchive(from: path, password: { secret }).count }) { [weak self] result in
                    self?.screen.progress(nil, "")
                    switch result {
                    case .success(let count):
                        self?.screen.app.tell("Archive imported", "\(count) items")
                        self?.screen.reload()
                    case .failure(let error): self?.screen.app.tell("Archive import failed", describe(error))
                    }
                }
            }
        }
    }
}

extension MainScreen {
    /// A dialog offering `choices` (id, label) and Cancel.
    func confirmChoice(_ heading: String, _ text: String, choices: [(String, String)], _ body: @escaping (String) -> Void) {
        let dialog = adw_message_dialog_new(UnsafeMutablePointer(OpaquePointer(app.window)), heading, text)
        let d = op(dialog).map { UnsafeMutablePointer<AdwMessageDialog>($0) }
        adw_message_dialog_add_response(d, "cancel", "Cancel")
        for (id, title) in choices { adw_message_dialog_add_response(d, id, title) }
        onResponse(dialog) { response in if response != "cancel" && !response.isEmpty { body(response) } }
        gtk_window_present(UnsafeMutablePointer(OpaquePointer(dialog)))
    }
}
