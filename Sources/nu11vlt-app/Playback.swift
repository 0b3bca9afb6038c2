// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import CNu11Sys
import Foundation
import Glibc
import Nu11Format
import Nu11Vault

/// Videos play in the user's own player ("Open with", docs/THREAT-MODEL.md "The desktop app"):
/// decoding video and sound in the process that holds the keys is what the image helper exists
/// to avoid, and the helper cannot play sound. The plaintext goes to a private RAM folder —
/// `$XDG_RUNTIME_DIR/nu11vlt-app` when that is tmpfs, else `/dev/shm/nu11vlt-app-UID` (0700,
/// checked to be ours), one subfolder per running app (named by its process ID) — under a
/// random name (the item's name reaches no player's recent-files list), 0600, and is removed
/// when the viewer moves on or closes, on lock and on quit; at start, the subfolders of apps
/// that are no longer running (a crash's leftovers) are emptied and removed. Never a disk.
@MainActor
final class Playback {
    /// nil when there is no private RAM folder (then "Play" says so and writes nothing).
    let folder: String?
    /// Bumped by every `clear` (the viewer moved on, a lock, quit): a decrypt still in flight
    /// then removes its file and starts no player.
    private var epoch = 0

    init() {
        let base = Self.ramFolder()
        if let base { Self.sweep(base) }
        let mine = base.map { $0 + "/\(getpid())" }
        folder = mine.flatMap { mkdir($0, 0o700) == 0 || errno == EEXIST ? $0 : nil }
        clear()
    }

    /// Empties and removes the subfolders of apps that are no longer running.
    static func sweep(_ base: String) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: base) else { return }
        for entry in entries {
            guard let pid = Int32(entry), pid != getpid(), kill(pid, 0) != 0 && errno == ESRCH else { continue }
            let folder = base + "/" + entry
            for file in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] { unlink(folder + "/" + file) }
            rmdir(folder)
        }
    }

    /// Decrypts the item into the RAM folder and opens it in the default application for its
    /// type; `done` gets the application's name, or a one-line reason.
    func play(_ item: ItemSummary, session: Session, done: @escaping @MainActor (Result<String, PlaybackError>) -> Void) {
        guard let folder else {
            done(.failure(PlaybackError(message: "there is no private memory-backed folder (tmpfs) to play it from, so it is not written anywhere; export it to play it")))
            return
        }
        let ext = (item.name as NSString).pathExtension.filter { $0.isLetter || $0.isNumber }.prefix(8)
        let path = folder + "/" + ItemID().hex + (ext.isEmpty ? "" : "." + ext)
        let started = epoch
        session.run({ vault in _ = try vault.items.export(ItemRef(item.id), toFile: path) }) { [weak self] result in
            guard let self, started == self.epoch else {
                unlink(path)
                return
            }
            if case .failure(let error) = result {
                unlink(path)
                done(.failure(PlaybackError(message: describe(error))))
                return
            }
            var name = [CChar](repeating: 0, count: 128), err = [CChar](repeating: 0, count: 512)
            guard n11g_launch_default(path, item.type, &name, name.count, &err, err.count) == 0 else {
                unlink(path)
                done(.failure(PlaybackError(message: Self.text(err) + " (install a video player, such as Totem or Celluloid, or export it)")))
                return
            }
            done(.success(Self.text(name)))
        }
    }

    /// A NUL-terminated buffer that C filled, as text.
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes every file of this app's RAM folder.
    func clear() {
        epoch += 1
        guard let folder, let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for entry in entries { unlink(folder + "/" + entry) }
    }

    /// On quit: the files, then the folder.
    func close() {
        clear()
        if let folder { rmdir(folder) }
    }

    /// The first candidate that is memory-backed, with our own 0700 folder in it.
    static func ramFolder() -> String? {
        var candidates: [String] = []
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            candidates.append(runtime + "/nu11vlt-app")
        }
        candidates.append("/dev/shm/nu11vlt-app-\(getuid())")
        for candidate in candidates where isMemoryBacked((candidate as NSString).deletingLastPathComponent) {
            if mkdir(candidate, 0o700) != 0 && errno != EEXIST { continue }
            var info = stat()
            guard lstat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() else { continue }
            if info.st_mode & 0o077 != 0 && chmod(candidate, 0o700) != 0 { continue }
            return candidate
        }
        return nil
    }

    /// tmpfs or ramfs: what is written there never reaches a disk (swap aside, as for any RAM).
    static func isMemoryBacked(_ path: String) -> Bool { nu11_is_memory_fs(path) == 1 }
}

struct PlaybackError: Error {
    var message: String
}
