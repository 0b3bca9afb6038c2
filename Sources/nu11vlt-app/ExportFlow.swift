// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// A multi-item export into a folder, as Files does it: the library's plan names every file
/// first; if some names are taken (by a file there, or twice in the selection) the user is
/// asked once — keep both (the new file gets " (2)") or skip those — and a summary says what
/// was written, what got a new name, what was skipped and what could not be read. Nothing
/// in the folder is ever replaced.
extension Transfers {
    func exportMany(_ ids: [ItemID], to folder: String) {
        screen.app.session.run({ vault in
            try ExportPlan(items: try vault.items.select(.items(ids.map { ItemRef($0) })), folder: folder)
        }) { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let error):
                screen.progress(nil, "")
                screen.app.tell("Export failed", describe(error))
            case .success(let plan):
                let clashes = plan.entries.filter(\.clashed)
                guard !clashes.isEmpty else { return run(plan, skipped: 0) }
                screen.progress(nil, "")
                askAboutClashes(clashes.map(\.item.name), folder: folder) { [weak self] choice in
                    switch choice {
                    case "both": self?.run(plan, skipped: 0)
                    case "skip": self?.run(plan.skippingClashes(), skipped: clashes.count)
                    default: break
                    }
                }
            }
        }
    }

    private func askAboutClashes(_ names: [String], folder: String, _ answer: @escaping @MainActor (String) -> Void) {
        let shown = names.prefix(3).map { "“\($0)”" }.joined(separator: ", ") + (names.count > 3 ? " and \(names.count - 3) more" : "")
        let heading = names.count == 1 ? "A file named “\(names[0])” is already there" : "\(names.count) names are already taken"
        let body = "\(shown): a file of that name is already in \((folder as NSString).lastPathComponent), or the selection has it twice. "
            + "Nothing there is replaced: keep both (the exported file gets a number), or skip \(names.count == 1 ? "it" : "them")?"
        screen.app.ask(heading, body, [("cancel", "Cancel", ADW_RESPONSE_DEFAULT), ("skip", "Skip", ADW_RESPONSE_DEFAULT),
                                       ("both", "Keep both", ADW_RESPONSE_SUGGESTED)], preferred: "both", answer)
    }

    private func run(_ plan: ExportPlan, skipped: Int) {
        screen.progress(0, "Exporting")
        screen.app.session.run({ vault -> ExportReport in
            try vault.items.export(plan, stripLocation: vault.photos.stripsLocationByDefault)
        }) { [weak self] result in
            guard let self else { return }
            screen.progress(nil, "")
            switch result {
            case .success(let report):
                let written = report.written.count, renamed = report.written.filter(\.clashed).count
                var text = "\(written) item\(written == 1 ? "" : "s") written to \(plan.folder)."
                if renamed > 0 { text += " \(renamed) got a new name, as that name was taken." }
                if skipped > 0 { text += " \(skipped) skipped, as that name was taken." }
                if !report.failed.isEmpty { text += " Not exported (damaged): " + report.failed.map(\.entry.item.name).joined(separator: ", ") + "." }
                screen.app.tell(report.failed.isEmpty ? "Exported" : "Exported, with problems", text)
            case .failure(let error):
                screen.app.tell("Export failed", describe(error))
            }
        }
    }
}
