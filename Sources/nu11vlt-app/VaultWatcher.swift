// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import Glibc

/// Follows what another process (the command line, a second app) changes in the vault while
/// this one has it unlocked: inotify on the vault's folder, where the index lives
/// (`index.sqlite` and its `-wal`/`-journal`: every import, delete, album move and note edit
/// writes there). The main loop waits on the inotify descriptor like on any other event
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
    private let changed: MainAction
    /// How long after the first write the refresh starts (a commit writes several times at once).
    static let settle: UInt32 = 40
    /// The files whose change is a change of what the vault holds.
    nonisolated static let watched = "index.sqlite"

    /// Starts watching `folder` (the vault's root); nil when inotify is not available (the app
    /// then shows other processes' changes at the next listing, as before).
    init?(folder: String, changed: @escaping MainAction) {
        self.changed = changed
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE)
        guard inotify_add_watch(fd, folder, mask) >= 0, let channel = g_io_channel_unix_new(fd) else {
            close(fd)
            fd = -1
            return nil
        }
        self.channel = channel
        let ready: GIOFunc = { _, _, data in
            guard let data else { return 0 }
            let watcher = Unmanaged<VaultWatcher>.fromOpaque(data).takeUnretainedValue()
            return MainActor.assumeIsolated { watcher.readEvents() ? 1 : 0 }
        }
        // The watch holds the watcher weakly (unretained): `stop` removes it before the
        // watcher can go.
        watch = g_io_add_watch(channel, G_IO_IN, ready, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Stops watching (at lock); nothing runs after it.
    func stop() {
        if watch != 0 { g_source_remove(watch) }
        watch = 0
        if timer != 0 { g_source_remove(timer) }
        timer = 0
        if let channel { g_io_channel_unref(channel) }
        channel = nil
        if fd >= 0 { close(fd) }
        fd = -1
    }

    isolated deinit { stop() }

    /// Reads what the kernel queued; a change of the index (re)starts the settle timer.
    /// Returns whether to keep watching.
    private func readEvents() -> Bool {
        guard fd >= 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 8192)
        var relevant = false
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            relevant = relevant || Self.namesIndex(buffer[0 ..< n])
        }
        if relevant {
            // `--timings`: when the change was seen (monotonic clock, for the GUI test).
            Timings.report("vault-changed-at", App.monotonic() * 1000)
            schedule()
        }
        return true
    }

    /// Whether any event in `bytes` (struct inotify_event records) is about the index, or the
    /// queue overflowed (then anything may have changed).
    nonisolated static func namesIndex(_ bytes: ArraySlice<UInt8>) -> Bool {
        let header = MemoryLayout<inotify_event>.size
        var at = bytes.startIndex
        var found = false
        while at + header <= bytes.endIndex {
            func u32(_ offset: Int) -> UInt32 {
                (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + offset + $1]) << (8 * UInt32($1)) }
            }
            let mask = u32(4), length = Int(u32(12))
            let nameBytes = bytes[(at + header) ..< min(bytes.endIndex, at + header + length)].prefix { $0 != 0 }
            if mask & UInt32(IN_Q_OVERFLOW) != 0 || String(decoding: nameBytes, as: UTF8.self).hasPrefix(watched) { found = true }
            at += header + length
        }
        return found
    }

    private func schedule() {
        guard timer == 0 else { return }
        timer = every(milliseconds: Self.settle) { [weak self] in
            self?.timer = 0
            self?.changed()
            return false
        }
    }
}
