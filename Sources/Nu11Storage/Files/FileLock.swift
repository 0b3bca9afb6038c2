// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Nu11Format

/// An exclusive advisory lock (flock) held for the life of the object, so two nu11vlt
/// processes never modify one vault at once; the second waits its turn.
public final class FileLock {
    private let fd: Int32
    public let path: String

    /// Takes the lock, waiting for another holder; `onWait` is called once if it must wait.
    public init(path: String, onWait: () -> Void = {}) throws {
        self.path = path
        do {
            fd = try POSIX.openFile(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0o600)
            _ = fchmod(fd, 0o600)
        } catch let error as Nu11Error {
            // A read-only vault (a backup disk mounted read-only): flock works on a read-only
            // descriptor too, and nothing will be written there.
            guard POSIX.exists(path), let readOnly = try? POSIX.openFile(path, O_RDONLY | O_NOFOLLOW) else { throw error }
            fd = readOnly
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK else {
                let error = POSIX.error("lock", path)
                close(fd)
                throw error
            }
            onWait()
            if SystemIO.retrying({ flock(fd, LOCK_EX) }) != 0 {
                let error = POSIX.error("lock", path)
                close(fd)
                throw error
            }
        }
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
