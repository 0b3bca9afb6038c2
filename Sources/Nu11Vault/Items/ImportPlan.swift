// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Storage

/// What an import of files and folders will do, decided before anything is written: the
/// files (folders expanded, system litter left out and listed), the album each one goes to
/// (one album for all, or with `albumsFromFolders` one per folder path), and the groups they
/// are committed in. The command line and the desktop app build one and run it a group at a
/// time through `Items.importGroup`, so both get the group commit (one `syncfs` pair and one
/// index transaction per group) and the same rules.
public struct ImportPlan: Sendable {
    /// Files imported by one `importGroup` call: same album, at most `groupLimit` files. The
    /// call commits them in batches of `commitEvery` files (cut again at 256 MiB), each
    /// batch's commit overlapping the next one's encryption.
    public struct Group: Sendable, Equatable {
        public var album: String?
        public var files: [String]
        public init(album: String?, files: [String]) {
            self.album = album
            self.files = files
        }
    }

    /// Every regular file to import, in order.
    public private(set) var files: [String]
    /// What the expansion left out (`.DS_Store`, `Thumbs.db`, `.thumbnails/`).
    public let skipped: [String]
    /// The album every file goes to unless `folderAlbums` names another (it must exist).
    public let album: String?
    /// With `albumsFromFolders`: the album of each file found in a folder (made when missing).
    public private(set) var folderAlbums: [String: String]
    /// Seconds until the items fade (nil: they stay). Settable after the plan is made: the
    /// default comes from the settings, which need the PIN, and the plan is made before it.
    /// (Fade with an album is refused when the group is imported: `Items.importTarget`.)
    public var fade: Double?
    public let groupLimit: Int
    /// Files per group commit (one `syncfs` pair and one index transaction): fewer loses less
    /// work to a crash and syncs more often.
    public let commitEvery: Int

    /// The default `commitEvery`, and its bounds (a front end refuses a number outside them;
    /// the plan clamps).
    public static let defaultCommitEvery = 256
    public static let commitEveryRange = 1...65_536

    /// Expands `paths` (folders only with `recursive`) and decides each file's album.
    /// `albumsFromFolders`: each file goes to the album named after its folder's path below
    /// the folder given (`Trips`, `Trips/Rome`); files given one by one go to `album`.
    /// `groupLimit`: the most files per `importGroup` call; a long-lived session (the app)
    /// asks for few, so other work (thumbnails scrolling into view) runs between calls. The
    /// command line leaves it unbounded, so one call commits batch after batch overlapped.
    public init(paths: [String], recursive: Bool, album: String? = nil, albumsFromFolders: Bool = false,
                fade: Double? = nil, groupLimit: Int = .max, commitEvery: Int = ImportPlan.defaultCommitEvery) throws {
        self.commitEvery = min(max(commitEvery, ImportPlan.commitEveryRange.lowerBound), ImportPlan.commitEveryRange.upperBound)
        if fade != nil && (album != nil || albumsFromFolders) {
            throw Nu11Error(.invalidArgument, "fade items cannot go into an album", remedy: .fadeOrAlbum)
        }
        var skipped: [String] = []
        files = try ImportSource.expand(paths, recursive: recursive, skipped: &skipped)
        self.skipped = skipped
        self.fade = fade
        self.groupLimit = max(1, groupLimit)
        self.album = album
        var albums: [String: String] = [:]
        if albumsFromFolders {
            for root in paths {
                var st = stat()
                guard stat(root, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { continue }
                let trimmed = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
                let base = URL(fileURLWithPath: trimmed).standardizedFileURL.lastPathComponent
                for file in files where file.hasPrefix(trimmed + "/") {
                    let folders = file.dropFirst(trimmed.count).split(separator: "/").dropLast()
                    albums[file] = ([base] + folders.map(String.init)).joined(separator: "/")
                }
            }
        }
        folderAlbums = albums
    }

    /// Leaves files out (those already in the vault, when the user says so).
    public mutating func remove(_ drop: Set<String>) {
        files.removeAll { drop.contains($0) }
        for file in drop { folderAlbums[file] = nil }
    }

    /// The files in commit groups: consecutive files with the same album, cut at `groupLimit`;
    /// the two halves of a Live Photo go into one group, whatever their order (`LivePhotos`).
    public var groups: [Group] {
        var out: [Group] = []
        let pairs = LivePhotos.pairs(files)
        let partner = pairs.merging(pairs.map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        var ahead = Set<String>()  // partners already placed with the other half
        for file in files where file != "-" && ahead.remove(file) == nil {
            let album = folderAlbums[file] ?? self.album
            let together = [file] + (partner[file].map { [$0] } ?? [])
            if let other = partner[file] { ahead.insert(other) }
            if let last = out.last, last.album == album, last.files.count + together.count <= groupLimit {
                out[out.count - 1].files += together
            } else {
                out.append(Group(album: album, files: together))
            }
        }
        return out
    }

    /// The folder albums the plan puts files in that `existing` does not have yet.
    public func missingAlbums(existing: Set<String>) -> [String] {
        Set(folderAlbums.values).subtracting(existing).sorted()
    }
}

extension Items {
    /// Creates the folder albums the plan needs that are not there yet (never the one album
    /// named by the user: a typo must not make an album).
    public func prepare(_ plan: ImportPlan) throws {
        guard !plan.folderAlbums.isEmpty else { return }
        let existing = Set(try vault.albums.list().map(\.name))
        for name in plan.missingAlbums(existing: existing) { _ = try vault.albums.createAlbum(name) }
    }

    /// Imports one group of a plan, `plan.commitEvery` files per group commit (see `importFiles`).
    public func importGroup(_ group: ImportPlan.Group, of plan: ImportPlan, vanished: ((String) -> Void)? = nil,
                            progress: (Int, Int) throws -> Void = { _, _ in }) throws -> [ItemSummary] {
        try importFiles(group.files, album: group.album, fade: plan.fade, commitEvery: plan.commitEvery, vanished: vanished,
                        progress: progress)
    }
}
