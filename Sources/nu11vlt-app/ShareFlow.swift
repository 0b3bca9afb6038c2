// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// "Share with…" (issue 59): the selection, Live Photo motions with their stills, goes into one
/// age file for one recipient pasted in. Its kind (post-quantum or classical) is said as it is
/// typed, before anything is written; locations are removed (the other person is not the
/// vault's owner). The file is the same as `nu11vlt share` writes.
extension Transfers {
    func shareSelected(_ ids: [ItemID]) {
        guard !ids.isEmpty else { return screen.app.tell("Nothing selected", "Select items in the gallery first.") }
        let entry = must(gtk_entry_new())
        n11g_set_label(entry, "Recipient")
        gtk_entry_set_placeholder_text(typed(entry), "age1pq1… or age1…")
        let kind = label(Self.recipientKind(""), style: "dim-label", wrap: true)
        on(raw(entry), "changed") {
            setText(kind, Self.recipientKind(string(gtk_editable_get_text(op(entry)))))
        }
        let fields = box(true, spacing: 6, [entry, kind])
        let what = ids.count == 1 ? "“\(screen.gallery.name(of: ids[0]) ?? "the item")”" : "\(ids.count) items"
        present("Share with…", "Paste the age recipient of the person to share \(what) with (they make one with age-keygen or "
                + "`nu11vlt identity`). Locations are removed; they can keep the file for as long as they like.",
                extra: fields, action: "Choose File…") { [unowned self] in
            let text = string(gtk_editable_get_text(op(entry))).trimmingCharacters(in: .whitespacesAndNewlines)
            let recipient: AgeRecipient
            do { recipient = try AgeRecipient(parsing: text) } catch {
                return screen.app.tell("Not an age recipient", describe(error))
            }
            choose("Share", action: GTK_FILE_CHOOSER_ACTION_SAVE, accept: "Save", multiple: false, name: "shared.age") { [unowned self] paths in
                guard let path = paths.first else { return }
                write(ids, to: recipient, path: path)
            }
        }
    }

    private func write(_ ids: [ItemID], to recipient: AgeRecipient, path: String) {
        screen.progress(0, "Sharing")
        screen.app.session.run({ vault in
            let items = try vault.items.select(.items(ids.map { ItemRef($0) }))
            return try vault.sharing.share(items, to: [recipient], output: path)
        }) { [weak self] result in
            guard let self else { return }
            screen.progress(nil, "")
            switch result {
            case .success(let report):
                let kind = report.postQuantum ? "a post-quantum recipient" : "a classical recipient"
                var text = "\(report.items) item\(report.items == 1 ? "" : "s") shared to \(kind) in \(path)."
                if report.stripped > 0 { text += " Location removed from \(report.stripped)." }
                screen.app.tell("Shared", text)
            case .failure(let error):
                screen.app.tell("Share failed", describe(error))
            }
        }
    }

    /// What the typed text is, said as it is typed.
    static func recipientKind(_ typed: String) -> String {
        let text = typed.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return "The recipient's kind shows here." }
        guard let recipient = try? AgeRecipient(parsing: text) else { return "Not an age recipient (yet): it starts with age1pq1 or age1." }
        return recipient.isPostQuantum
            ? "Post-quantum recipient (ML-KEM-768 + X25519): safe against a future quantum computer."
            : "Classical recipient (X25519): anyone with a large quantum computer and a copy of the file could one day read it."
    }
}
