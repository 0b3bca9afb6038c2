// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import CNu11Sys
import Foundation
import Nu11Format
import Nu11Vault

/// Where the unlock agent of a vault listens, and the checks both ends make before trusting
/// that socket: a private folder of ours in $XDG_RUNTIME_DIR (never /tmp), a socket file of
/// ours, and a peer of our own user (SO_PEERCRED, on both sides).
enum AgentSocket {
    /// The agent's folder, or an error when $XDG_RUNTIME_DIR is not set (or not absolute).
    static func folder() throws -> String {
        guard let run = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], run.hasPrefix("/") else {
            throw Nu11Error(.invalidArgument, "XDG_RUNTIME_DIR is not set, so there is no private folder for the unlock agent's socket",
                            remedy: .frontEnd("log in through a session that sets it (systemd-logind does), or use `nu11vlt shell`"))
        }
        return (run.hasSuffix("/") ? String(run.dropLast()) : run) + "/nu11vlt"
    }

    /// The socket of the agent that holds `location` (one agent per vault).
    static func path(for location: VaultLocation) throws -> String {
        // FNV-1a over both paths: a name, not a secret (the folder is private).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array(location.vaultRoot.utf8) + [0] + Array(location.keyStoreRoot.utf8) {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let path = try folder() + "/agent-" + String(format: "%016llx", hash) + ".sock"
        guard path.utf8.count <= Int(nu11_unix_path_max()) else {
            throw Nu11Error(.invalidArgument, "the agent's socket path is too long for a socket (\(path.utf8.count) bytes)",
                            remedy: .frontEnd("use a shorter XDG_RUNTIME_DIR, or `nu11vlt shell`"))
        }
        return path
    }

    /// Creates the folder (0700) if it is missing, then checks it.
    static func makeFolder() throws -> String {
        let dir = try folder()
        if mkdir(dir, 0o700) != 0 && errno != EEXIST {
            throw Nu11Error(.io, "cannot create the agent's folder \(dir): \(String(cString: strerror(errno)))", remedy: .frontEnd("check XDG_RUNTIME_DIR"))
        }
        if let problem = folderProblem(dir) { throw Nu11Error(.invalidArgument, problem, remedy: .frontEnd("remove \(dir) and unlock again")) }
        return dir
    }

    /// Why `dir` is not a private folder of ours (not a folder, a link, another owner, open to
    /// others), or nil when it is one.
    static func folderProblem(_ dir: String) -> String? {
        var st = stat()
        guard lstat(dir, &st) == 0 else { return "\(dir) cannot be read: \(String(cString: strerror(errno)))" }
        if (st.st_mode & S_IFMT) != S_IFDIR { return "\(dir) is not a folder" }
        if st.st_uid != getuid() { return "\(dir) belongs to another user (uid \(st.st_uid))" }
        if st.st_mode & 0o077 != 0 { return "\(dir) is open to other users (mode \(String(st.st_mode & 0o777, radix: 8)), not 700)" }
        return nil
    }

    enum Probe {
        case none  // no agent (no folder or no socket)
        case refused(String)  // something is there that must not be trusted: why
        case stale  // a socket file nobody listens on
        case agent(fd: Int32, pid: pid_t)  // connected to an agent of ours
    }

    /// Connects to the agent of `location` after checking the folder, the socket file and the
    /// peer's user. Nothing is sent.
    static func probe(_ location: VaultLocation) -> Probe {
        guard let path = try? path(for: location), let dir = try? folder() else { return .none }
        var st = stat()
        if lstat(dir, &st) != 0 && errno == ENOENT { return .none }
        if let problem = folderProblem(dir) { return .refused(problem) }
        guard lstat(path, &st) == 0 else { return errno == ENOENT ? .none : .refused("\(path) cannot be read") }
        if (st.st_mode & S_IFMT) != S_IFSOCK { return .refused("\(path) is not a socket") }
        if st.st_uid != getuid() { return .refused("\(path) belongs to another user (uid \(st.st_uid))") }
        let fd = nu11_unix_dial(path)
        guard fd >= 0 else { return errno == ECONNREFUSED ? .stale : .refused("\(path): \(String(cString: strerror(errno)))") }
        var uid: uid_t = 0
        var pid: pid_t = 0
        guard nu11_peer_credentials(fd, &uid, &pid) == 0, uid == getuid() else {
            close(fd)
            return .refused("the process listening on \(path) runs as another user (uid \(uid))")
        }
        return .agent(fd: fd, pid: pid)
    }
}

/// What a client sends: the command line, its folder and environment (paths and settings,
/// never a secret: nu11vlt keeps none there); its stdin, stdout and stderr go along as
/// descriptors. The answer is the exit code (4 bytes, big-endian).
struct AgentRequest: Codable {
    enum Operation: String, Codable { case run, lock }
    var op: Operation
    var argv: [String] = []
    var cwd: String = "/"
    var env: [String] = []
    /// Whether the client has a terminal (its stdin, passed along, then is one where the
    /// command may ask a question, as import does about duplicates).
    var terminal: Bool?

    static let maxBytes = 1 << 20

    func send(_ fd: Int32, fds: [Int32]) throws {
        let body = try JSONEncoder().encode(self)
        var frame = withUnsafeBytes(of: UInt32(body.count).bigEndian) { Array($0) } + Array(body)
        defer { secureZero(&frame) }
        let rc = frame.withUnsafeBytes { raw in
            fds.withUnsafeBufferPointer { nu11_send_with_fds(fd, raw.baseAddress, raw.count, $0.baseAddress, Int32($0.count)) }
        }
        guard rc == 0 else { throw AgentWire.broken("sending to the agent failed: \(String(cString: strerror(errno)))") }
    }

    /// The request and the descriptors that came with it, read as they arrive on a connection
    /// that does not block (the agent reads from several at once: none can hold the others).
    struct Assembly {
        private(set) var received: [UInt8] = []
        private(set) var fds: [Int32] = []

        enum Step {
            case more
            case done(AgentRequest, [Int32])
            case broken(String)
        }

        /// Reads what `fd` holds now. `.done` hands the descriptors over; `.broken` has closed them.
        mutating func read(from fd: Int32) -> Step {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            defer { secureZero(&buffer) }
            while true {
                var passed = [Int32](repeating: -1, count: Int(NU11_MAX_PASSED_FDS))
                var count: Int32 = 0
                let n = buffer.withUnsafeMutableBytes { raw in
                    passed.withUnsafeMutableBufferPointer { nu11_recv_with_fds(fd, raw.baseAddress, raw.count, $0.baseAddress, &count) }
                }
                let failure = errno
                fds += passed.prefix(Int(count))
                if n < 0 && (failure == EAGAIN || failure == EWOULDBLOCK) { return .more }
                guard n > 0 else { return drop("the request ended early") }
                received += buffer.prefix(n)
                guard received.count >= 4 else { continue }
                let length = Int(received.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                guard length <= maxBytes, fds.count <= 3 else { return drop("the request is too large") }
                guard received.count - 4 >= length else { continue }
                guard let request = try? JSONDecoder().decode(AgentRequest.self, from: Data(received[4..<(4 + length)])) else {
                    return drop("the request is not understood")
                }
                secureZero(&received)
                let handed = fds
                fds = []
                return .done(request, handed)
            }
        }

        /// Closes what came with a request that will not be served.
        mutating func drop(_ why: String) -> Step {
            for f in fds { close(f) }
            fds = []
            secureZero(&received)
            return .broken(why)
        }
    }
}

enum AgentWire {
    static func broken(_ what: String) -> Nu11Error {
        Nu11Error(.io, what, remedy: .frontEnd("run `nu11vlt lock`, then `nu11vlt unlock` again"))
    }

    static func sendCode(_ fd: Int32, _ code: Int32) {
        let bytes = withUnsafeBytes(of: UInt32(bitPattern: code).bigEndian) { Array($0) }
        _ = bytes.withUnsafeBytes { raw in nu11_send_with_fds(fd, raw.baseAddress, 4, nil, 0) }
    }

    /// The exit code the agent sent, or nil when the connection ended first.
    static func readCode(_ fd: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 4)
        var got = 0
        while got < 4 {
            let n = bytes.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress.map { $0 + got }, 4 - got) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            got += n
        }
        return Int32(bitPattern: bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }
}
