// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Vault

/// The question the command line asks at a terminal, asked once per import: files whose bytes
/// are already in the vault (the library's `DuplicateFinder`: same size, then byte for byte
/// against the decrypted item; no content hash is stored) are skipped or imported again.
extension Transfers {
    /// `body` gets the plan to import (without the duplicates when they are skipped), or nil
    /// when the user cancels.
    func askAboutDuplicates(_ plan: ImportPlan, _ body: @escaping @MainActor (ImportPlan?) -> Void) {
        screen.progress(0, "Looking for files already in the vault")
        let files = plan.files
        screen.app.session.run({ vault -> [(path: String, name: String)] in
            let finder = try DuplicateFinder(vault)
            return files.compactMap { path in (try? finder.match(path)).flatMap { $0 }.map { (path, $0.name) } }
        }) { [weak self] result in
            guard let self else { return }
            screen.progress(nil, "")
            guard case .success(let duplicates) = result, !duplicates.isEmpty else { return body(plan) }
            let shown = duplicates.prefix(3).map { "“\(($0.path as NSString).lastPathComponent)”" }.joined(separator: ", ")
                + (duplicates.count > 3 ? " and \(duplicates.count - 3) more" : "")
            let heading = duplicates.count == 1 ? "Already in the vault" : "\(duplicates.count) files are already in the vault"
            let text = "\(shown) \(duplicates.count == 1 ? "is" : "are") already in the vault, byte for byte"
                + (duplicates.count == 1 ? " (as “\(duplicates[0].name)”)" : "") + ". Skip \(duplicates.count == 1 ? "it" : "them"), or import again?"
            screen.app.ask(heading, text, [("cancel", "Cancel", ADW_RESPONSE_DEFAULT), ("again", "Import again", ADW_RESPONSE_DEFAULT),
                                           ("skip", "Skip", ADW_RESPONSE_SUGGESTED)], preferred: "skip") { response in
                switch response {
                case "skip":
                    var rest = plan
                    rest.remove(Set(duplicates.map(\.path)))
                    body(rest.files.isEmpty ? nil : rest)
                case "again": body(plan)
                default: body(nil)
                }
            }
        }
    }
}
