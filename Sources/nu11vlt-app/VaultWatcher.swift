// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import Glibc

/// Follows what another process (the command line, a second app) changes in the vault while
/// this one has it unlocked: inotify on the vault's folder, where the index lives
/// (`index.sqlite` and its `-wal`/`-journal`: every import, delete, album move and note edit
/// writes there), and — on a vault shared with other devices (FORMAT.md § 9.6) — on the folders
/// where their changes arrive through the synchronizer (`VaultLocation.arrivalFolders`): those
/// run `arrived` (the session takes them in, then the gallery follows the index). The main loop
/// waits on the inotify descriptor like on any other event
/// source (a GLib watch, no timer and no thread): when the index changes, `changed` runs
/// `settle` milliseconds after the first write, whatever follows meanwhile (the writer holds the
/// vault's lock until its commit is done, and the refresh waits for that lock), so a burst of
/// writes costs one refresh, and a long import one every `settle` at most. The app's own writes come here too; the refresh they
/// cause finds nothing new and changes nothing on screen (`MainScreen.followVault`).
@MainActor
final class VaultWatcher {
    private var fd: Int32 = -1
    private var channel: UnsafeMutablePointer<GIOChannel>?
    private var watch: UInt32 = 0
    private var timer: UInt32 = 0
    private var arrivalTimer: UInt32 = 0
    private let changed: MainAction
    private let arrived: MainAction
    private let root: String
    private let arrivalFolders: () -> [String]
    /// The watch descriptor of the vault's folder (the others are arrival folders).
    private var rootWatch: Int32 = -1
    private var watched: Set<String> = []
    /// How long after the first write the refresh starts (a commit writes several times at once).
    static let settle: UInt32 = 40
    /// How long after the first file another device's synchronizer wrote the session looks:
    /// an item arrives as several files (content, sidecar, thumbnail, key file), in any order.
    static let arrivalSettle: UInt32 = 300
    /// The files whose change is a change of what the vault holds.
    nonisolated static let index = "index.sqlite"
    /// Folders at the vault's top whose creation means another device's files can arrive.
    nonisolated static let sharedTops: Set<String> = ["Keys", "Devices", "Meta", "Notes", "Vault", "Thumbnails"]

    /// Starts watching `folder` (the vault's root) and `arrivals()` (asked again whenever a new
    /// folder may have appeared); nil when inotify is not available (the app then shows other
    /// processes' changes at the next listing, as before).
    init?(folder: String, arrivals: @escaping () -> [String], changed: @escaping MainAction, arrived: @escaping MainAction) {
        self.changed = changed
        self.arrived = arrived
        self.root = folder
        self.arrivalFolders = arrivals
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        rootWatch = inotify_add_watch(fd, folder, Self.mask)
        guard rootWatch >= 0, let channel = g_io_channel_unix_new(fd) else {
            close(fd)
            fd = -1
            return nil
        }
        self.channel = channel
        addArrivalWatches()
        let ready: GIOFunc = { _, _, data in
            guard let data else { return 0 }
            let watcher = Unmanaged<VaultWatcher>.fromOpaque(data).takeUnretainedValue()
            return MainActor.assumeIsolated { watcher.readEvents() ? 1 : 0 }
        }
        // The watch holds the watcher weakly (unretained): `stop` removes it before the
        // watcher can go.
        watch = g_io_add_watch(channel, G_IO_IN, ready, Unmanaged.passUnretained(self).toOpaque())
    }

    private static let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE)

    /// Watches every arrival folder not watched yet (one that does not exist yet is tried again
    /// when a folder appears).
    private func addArrivalWatches() {
        for folder in arrivalFolders() where !watched.contains(folder) {
            if inotify_add_watch(fd, folder, Self.mask) >= 0 { watched.insert(folder) }
        }
    }

    /// Stops watching (at lock); nothing runs after it.
    func stop() {
        if watch != 0 { g_source_remove(watch) }
        watch = 0
        if timer != 0 { g_source_remove(timer) }
        timer = 0
        if arrivalTimer != 0 { g_source_remove(arrivalTimer) }
        arrivalTimer = 0
        if let channel { g_io_channel_unref(channel) }
        channel = nil
        if fd >= 0 { close(fd) }
        fd = -1
    }

    isolated deinit { stop() }

    /// Reads what the kernel queued; a change of the index (re)starts the settle timer, a file
    /// in an arrival folder the arrival timer. Returns whether to keep watching.
    private func readEvents() -> Bool {
        guard fd >= 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 8192)
        var seen = Seen()
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            seen.merge(Self.events(buffer[0 ..< n], root: rootWatch))
        }
        if seen.index {
            // `--timings`: when the change was seen (monotonic clock, for the GUI test).
            Timings.report("vault-changed-at", App.monotonic() * 1000)
            schedule()
        }
        if seen.arrival {
            if seen.newFolder { addArrivalWatches() }
            scheduleArrival()
        }
        return true
    }

    struct Seen: Equatable {
        var index = false
        var arrival = false
        var newFolder = false
        mutating func merge(_ other: Seen) {
            index = index || other.index
            arrival = arrival || other.arrival
            newFolder = newFolder || other.newFolder
        }
    }

    /// What the events in `bytes` (struct inotify_event records) are about: the index (in the
    /// folder watched as `root`), a file or folder in an arrival folder, or a folder where
    /// arrivals go made at the top. An overflowed queue is all three (anything may have changed).
    nonisolated static func events(_ bytes: ArraySlice<UInt8>, root: Int32) -> Seen {
        let header = MemoryLayout<inotify_event>.size
        var at = bytes.startIndex
        var seen = Seen()
        while at + header <= bytes.endIndex {
            func u32(_ offset: Int) -> UInt32 {
                (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + offset + $1]) << (8 * UInt32($1)) }
            }
            let wd = Int32(bitPattern: u32(0)), mask = u32(4), length = Int(u32(12))
            let nameBytes = bytes[(at + header) ..< min(bytes.endIndex, at + header + length)].prefix { $0 != 0 }
            let name = String(decoding: nameBytes, as: UTF8.self)
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                seen.merge(Seen(index: true, arrival: true, newFolder: true))
            } else if wd == root {
                if name.hasPrefix(index) { seen.index = true }
                if sharedTops.contains(name) { seen.merge(Seen(index: false, arrival: true, newFolder: true)) }
            } else {
                seen.arrival = true
                if mask & UInt32(IN_ISDIR) != 0 { seen.newFolder = true }
            }
            at += header + length
        }
        return seen
    }

    private func schedule() { timer = scheduled(timer, after: Self.settle) { $0.timer = 0; $0.changed() } }

    private func scheduleArrival() { arrivalTimer = scheduled(arrivalTimer, after: Self.arrivalSettle) { $0.arrivalTimer = 0; $0.arrived() } }

    /// `pending` when a timer runs already, else a new one-shot timer that runs `action`.
    private func scheduled(_ pending: UInt32, after ms: UInt32, _ action: @escaping @MainActor (VaultWatcher) -> Void) -> UInt32 {
        guard pending == 0 else { return pending }
        return every(milliseconds: ms) { [weak self] in
            if let self { action(self) }
            return false
        }
    }
}
