// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Nu11Format

extension ProtectedFiles {
    /// Appends `bytes` to an append-only file (a journal segment) and syncs, only when the file is
    /// exactly `expectedLength` bytes long: a file that another program shortened, replaced or grew
    /// (an older copy put back by a sync peer) is left as it is and the append is refused, so an
    /// entry never lands after bytes its writer did not write. A torn append (a crash mid-write)
    /// leaves a tail the reader stops at; the caller's next append is refused for its length and
    /// starts a new file.
    public static func append(_ bytes: [UInt8], to path: String, expectedLength: UInt64) throws {
        let fd = try POSIX.openFile(path, O_WRONLY | O_APPEND | O_NOFOLLOW)
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw POSIX.error("stat", path) }
        guard st.st_mode & S_IFMT == S_IFREG, UInt64(st.st_size) == expectedLength else {
            throw Nu11Error(.corrupted, "\(path) is not the length its writer left (\(st.st_size) bytes, not \(expectedLength))",
                            remedy: .advice(.changedWhileReading), item: path)
        }
        if st.st_mode & 0o777 != 0o600 { guard fchmod(fd, 0o600) == 0 else { throw POSIX.error("chmod", path) } }
        try bytes.withUnsafeBytes { try SystemIO.writeAll(fd, $0) }
        try POSIX.fsyncOrThrow(fd, path)
    }

    /// The length of a regular file (nil when there is none).
    public static func length(_ path: String) -> UInt64? {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        return UInt64(st.st_size)
    }
}
