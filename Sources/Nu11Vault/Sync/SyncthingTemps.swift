// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// Syncthing's partial copies of the vault's files (docs/FORMAT.md § 9.6): while it pulls
/// `<folder>/<name>` it writes `<folder>/.syncthing.<name>.tmp`, renamed into place when whole,
/// and a copy cut short (a pause, a file deleted upstream meanwhile) is left there for a day
/// (`keepTemporariesH`). One of a deleted item's key file holds the item's key for every holder
/// of the shared key; one of its sidecar, the item's name.
enum SyncthingTemps {
    static let prefix = ".syncthing."
    static let suffix = ".tmp"

    /// The partial copy Syncthing would write for `path`.
    static func partialCopy(of path: String) -> String {
        (path as NSString).deletingLastPathComponent + "/" + prefix + (path as NSString).lastPathComponent + suffix
    }

    /// The file a partial copy's name stands for, nil when `name` is not one.
    static func target(of name: String) -> String? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count > prefix.count + suffix.count else { return nil }
        return String(name.dropFirst(prefix.count).dropLast(suffix.count))
    }

    /// How long a partial copy of an item this device does not list may go unwritten before it
    /// counts as abandoned (a transfer at work writes to it continuously).
    static let abandonedAfter: Double = 60
}

extension Devices {
    /// At unlock of a shared vault: removes the partial copies of items this device deleted
    /// (`deleted/`), and those of items it does not list whose file is not there either and that
    /// nothing has written for `SyncthingTemps.abandonedAfter` (an item deleted on another device
    /// before it arrived here whole). A copy of a listed item is left (an update in transit), and
    /// so is a fresh one (an item still arriving). Returns how many went.
    func removeAbandonedPartialCopies(listed: Set<ItemID>) -> Int {
        var folders = [location.photosFolder, location.notesFolder, location.metaFolder, location.thumbnailsFolder,
                       location.sharedKeysFolder]
        folders += ((try? ProtectedFiles.list(location.albumsFolder)) ?? []).map { location.albumsFolder + "/" + $0 }
        var removed = 0
        for folder in folders {
            for name in (try? ProtectedFiles.list(folder)) ?? [] {
                guard let target = SyncthingTemps.target(of: name),
                      let id = try? ItemID(hex: Maintenance.stem(target)) else { continue }
                let path = folder + "/" + name
                var st = stat()
                guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                let idle = now - (Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9)
                let abandoned = !listed.contains(id) && ProtectedFiles.kind(folder + "/" + target) == nil
                    && idle >= SyncthingTemps.abandonedAfter
                guard keyStore.sharedDeletionRecorded(id) || abandoned else { continue }
                if (try? ProtectedFiles.remove(path)) != nil { removed += 1 }
            }
        }
        return removed
    }
}
