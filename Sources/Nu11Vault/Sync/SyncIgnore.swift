// SPDX-License-Identifier: GPL-3.0-or-later
import Nu11Format
import Nu11Storage

/// The vault folder's `.stignore` (FORMAT.md § 5.4): the files a synchronizer (Syncthing) must
/// leave on the device that wrote them — the index and its SQLite companions (each device's own
/// cache), indexes a repair set aside, the lock, the backup marker (each device's own choice),
/// and temp files of writes in progress. Everything else syncs: item files, sidecars,
/// thumbnails, album names, `recovery.n11r`, `Journal/`, `Quarantine/`. Syncthing never syncs a
/// `.stignore` itself, so each device writes its own.
enum SyncIgnore {
    static let name = ".stignore"

    /// Syncthing's pattern syntax: `//` starts a comment, a leading `/` anchors at the folder's
    /// root, `(?d)` lets Syncthing remove the file when another device removed its folder.
    static let text = """
        // Written by Nu11VLT (docs/FORMAT.md § 5.4): files of this device only, never synced.
        // Everything else in this folder must sync: do not add patterns for it.
        /index.sqlite*
        /.lock
        /CACHEDIR.TAG
        (?d).n11tmp-*

        """

    /// Writes the file when the vault folder lacks it (0600, atomically); one that is there,
    /// the owner's own included, is left as it is.
    static func ensure(_ location: VaultLocation) throws {
        let path = location.vaultRoot + "/" + name
        guard ProtectedFiles.kind(path) == nil else { return }
        try ProtectedFiles.writeAtomically(Array(text.utf8), to: path)
    }
}
