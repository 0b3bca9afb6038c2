// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11Sys
import Nu11Format

/// Keeps the vault and key store out of backups, the Linux way: a `CACHEDIR.TAG` (honoured
/// by Déjà Dup always, and by tar, borg and restic only when told to exclude caches — the
/// README gives those commands) and the `nodump` attribute where the file system has it
/// (honoured by dump, and by borg only when told to; restic ignores it). Why: a backup copy of a key record defeats
/// crypto-shredding.
public enum BackupExclusion {
    public static let tagName = "CACHEDIR.TAG"
    static let tag = """
        Signature: 8a477f597d28d172789f06886806bc55
        # This folder belongs to Nu11VLT. It is excluded from backups on purpose:
        # a backup copy of a key record defeats crypto-shredding.
        # The vault folder can be backed up once you turn on backups for it in Nu11VLT.
        # The key store must never be backed up (restic and borg honour this tag only when
        # told to exclude caches).

        """

    /// Applies (or, with `excluded == false`, removes) the exclusion on a folder.
    public static func apply(to folder: String, excluded: Bool) throws {
        let path = POSIX.join(folder, tagName)
        if excluded {
            if !POSIX.exists(path) { try ProtectedFiles.writeAtomically(Array(tag.utf8), to: path) }
        } else {
            try ProtectedFiles.remove(path)
        }
        _ = nu11_set_nodump(folder, excluded ? 1 : 0)
    }

    public static func isExcluded(_ folder: String) -> Bool { POSIX.exists(POSIX.join(folder, tagName)) }

    /// Whether the folder carries the nodump attribute (nil where the file system has none).
    public static func hasNodump(_ folder: String) -> Bool? {
        switch nu11_has_nodump(folder) {
        case 1: true
        case 0: false
        default: nil
        }
    }
}
