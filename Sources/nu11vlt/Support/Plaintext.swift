// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11Sys
import Foundation
import Nu11Format

/// Starting an editor or a viewer: with posix_spawn (never Foundation's Process, which
/// opens sockets), in a session of its own with descriptors 0, 1, 2 only (CNu11Sys).
enum Child {
    /// Runs `sh -c '<command> "$1"' nu11vlt <argument>` and waits; returns its exit status.
    /// `keeping` (a viewer's memfd) is the child's descriptor 3; it gets no other but 0, 1, 2.
    static func run(shellCommand: String, argument: String, label: String, keeping: Int32 = -1) throws -> Int32 {
        let args = ["/bin/sh", "-c", "\(shellCommand) \"$1\"", "nu11vlt-\(label)", argument]
        var cArgs: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var status: Int32 = 0
        let rc = nu11_spawn_wait(&cArgs, keeping, &status)
        guard rc == 0 else {
            throw Nu11Error(.notFound, "cannot start the \(label) '\(shellCommand)': \(String(cString: strerror(rc)))",
                            remedy: .frontEnd(label == "editor" ? "set EDITOR" : "set NU11VLT_VIEWER to an image viewer, e.g. feh"))
        }
        if status & 0x7f != 0 { return 128 + (status & 0x7f) }  // killed by a signal
        return (status >> 8) & 0xff
    }
}

/// Plaintext for an editor or a viewer that needs a path: a 0600 file in a private 0700
/// folder on RAM (`$XDG_RUNTIME_DIR/nu11vlt`, else `/dev/shm/nu11vlt-<uid>`), never on
/// persistent disk. Each file is registered with the signal handler (removed on SIGINT,
/// SIGTERM, SIGHUP), zeroed and removed on every normal exit path, and files left by a
/// process that died anyway (SIGKILL) are swept at the start of the next command.
enum PlaintextSpool {
    static func folder() throws -> String {
        let env = ProcessInfo.processInfo.environment
        let path: String
        if let runtime = env["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"), isDirectory(runtime) {
            path = runtime + "/nu11vlt"
        } else if isDirectory("/dev/shm") {
            path = "/dev/shm/nu11vlt-\(getuid())"
        } else {
            throw Nu11Error(.io, "no RAM-backed folder ($XDG_RUNTIME_DIR or /dev/shm) for the plaintext, and nu11vlt never writes plaintext to persistent disk",
                            remedy: .frontEnd("pipe the note through stdin, or export to a folder of your choice"))
        }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw Nu11Error(.io, "cannot create \(path): \(String(cString: strerror(errno)))", remedy: .frontEnd("check $XDG_RUNTIME_DIR"))
        }
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, st.st_uid == getuid() else {
            throw Nu11Error(.io, "\(path) is not a private folder of yours (a symlink, or someone else's)",
                            remedy: .frontEnd("remove it and try again"))
        }
        guard chmod(path, 0o700) == 0 else {
            throw Nu11Error(.io, "cannot make \(path) private: \(String(cString: strerror(errno)))", remedy: .frontEnd("check its owner"))
        }
        return path
    }

    private static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
    }

    /// Removes files whose process is gone (named `<pid>-…`).
    static func sweep() {
        guard let dir = try? folder(), let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        for name in names {
            guard let pid = Int32(name.prefix { $0 != "-" }), pid > 0 else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { destroyFile(dir + "/" + name) }
        }
    }

    struct File {
        let path: String
        let slot: Int32
    }

    /// A new 0600 file holding `bytes`.
    static func create(_ bytes: [UInt8], suffix: String) throws -> File {
        let path = try folder() + "/\(getpid())-\(Hex.encode(SecureRandom.bytes(8)))\(suffix)"
        let slot = nu11_cleanup_register(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            nu11_cleanup_unregister(slot)
            throw Nu11Error(.io, "cannot create \(path): \(String(cString: strerror(errno)))", remedy: .frontEnd("check the folder's space"))
        }
        defer { close(fd) }
        let file = File(path: path, slot: slot)
        do {
            var out = FileDescriptorStream(fd: fd, label: path)
            try out.write(bytes)
        } catch {
            destroy(file)
            throw error
        }
        return file
    }

    static func destroy(_ file: File) {
        destroyFile(file.path)
        nu11_cleanup_unregister(file.slot)
    }

    /// Zeroes then unlinks (on tmpfs the pages are freed at once).
    private static func destroyFile(_ path: String) {
        let fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd >= 0 {
            var st = stat()
            if fstat(fd, &st) == 0 && st.st_size > 0 {
                let zeros = [UInt8](repeating: 0, count: 1 << 16)
                var left = Int(st.st_size)
                while left > 0 {
                    let n = zeros.withUnsafeBytes { write(fd, $0.baseAddress, min(left, $0.count)) }
                    if n <= 0 { break }
                    left -= n
                }
            }
            _ = ftruncate(fd, 0)
            close(fd)
        }
        unlink(path)
    }
}
