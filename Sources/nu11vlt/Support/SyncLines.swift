// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Vault

/// What `status` and `init` say about a vault folder inside a Syncthing folder (issue 60): where,
/// and two warnings — Syncthing keeps old copies of the vault's files (file versioning: a deleted
/// item's files stay there), and the index or lock would sync (the root's `.stignore` lacks the
/// vault's lines). docs/THREAT-MODEL.md "Deleting on a synced folder".
enum SyncLines {
    static func line(_ sync: SyncthingFolder, vault: String) -> String {
        let name = sync.label.map { "\"\(Output.escaped($0))\" " } ?? ""
        let place = sync.root == vault ? "" : ", this vault in it as \(Output.escaped(String(vault.dropFirst(sync.root.count + 1))))"
        let versions = sync.versioning.map { "file versioning \"\(Output.escaped($0))\"" } ?? (sync.label == nil ? "file versioning unknown (no Syncthing config found)" : "no file versioning")
        return "sync       Syncthing folder \(name)(\(Output.escaped(sync.root))\(place)); \(versions)"
    }

    static func warn(_ sync: SyncthingFolder) {
        if sync.keepsOldCopies {
            let how = sync.versioning.map { "its \"\(Output.escaped($0))\" file versioning" } ?? "file versioning, on before or now"
            let kept = sync.keptVersions == 0 ? "" : ", \(sync.keptVersions >= SyncthingFolder.countLimit ? "at least \(sync.keptVersions)" : "\(sync.keptVersions)") of this vault's files there now"
            Output.note("nu11vlt: warning: Syncthing keeps old copies of this vault's files in \(Output.escaped(sync.versionsPath)) (\(how)\(kept)): a deleted item's files stay there, and whoever holds the recovery phrase can open them (hint: turn file versioning off for this folder in Syncthing; docs/THREAT-MODEL.md \"Deleting on a synced folder\" says what stays)")
        }
        if !sync.missingIgnores.isEmpty {
            let lines = sync.missingIgnores.map { "`\(Output.escaped($0))`" }.joined(separator: ", ")
            Output.note("nu11vlt: warning: Syncthing would sync this device's own files of the vault (its index, lock and backup marker) to the other devices: \(Output.escaped(sync.root))/.stignore lacks \(lines) (hint: add those lines to \(Output.escaped(sync.root))/.stignore; Syncthing reads no other .stignore)")
        }
    }
}

extension SyncthingFolder {
    var json: JSONObject {
        JSONObject([("root", root), ("label", label), ("versioning", versioning), ("versionsPath", versionsPath),
                    ("keptVersions", keptVersions), ("missingIgnores", missingIgnores)])
    }
}
