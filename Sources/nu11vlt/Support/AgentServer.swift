// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import CNu11Session
import CNu11Sys
import Foundation
import Nu11Format
import Nu11Vault

/// The unlock agent's loop: one command at a time; connections are each checked with SO_PEERCRED
/// (our user only; another is refused and the refusal goes to the vault's audit log) and their
/// requests read side by side, each within 5 s (up to 32 waiting); a command
/// runs in this process on the unlocked vault, as `nu11vlt shell` runs it, with the client's
/// stdin, stdout, stderr, folder and environment. Ends on `nu11vlt lock`, after lock.idle
/// without a command, when logind says the machine goes to sleep or the session was locked
/// (D-Bus), after a suspend (seen on waking), on SIGTERM/SIGINT/SIGHUP, or when the vault was locked; then the keys are dropped (zeroed) and the socket removed.
final class AgentServer {
    let vault: Vault
    let location: VaultLocation
    let listener: Int32
    let socketPath: String
    let signals: Int32
    private var socketInode: ino_t = 0
    private let ownEnvironment = ProcessInfo.processInfo.environment

    init(vault: Vault, location: VaultLocation, listener: Int32, socketPath: String, signals: Int32) {
        self.vault = vault
        self.location = location
        self.listener = listener
        self.socketPath = socketPath
        self.signals = signals
        var st = stat()
        if lstat(socketPath, &st) == 0 { socketInode = st.st_ino }
    }

    /// Binds the socket of `location`, replacing a stale one (nobody listening) only.
    static func listen(at path: String) throws -> Int32 {
        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFSOCK, st.st_uid == getuid() else {
                throw Nu11Error(.invalidArgument, "\(path) is in the way and is not a socket of yours", remedy: .frontEnd("remove it, then unlock again"))
            }
            let probe = nu11_unix_dial(path)
            if probe >= 0 {
                close(probe)
                throw Nu11Error(.alreadyExists, "an unlock agent already holds this vault", remedy: .frontEnd("`nu11vlt lock` ends it"))
            }
            unlink(path)  // stale: its agent ended without removing it (killed)
        }
        let fd = nu11_unix_listen(path)
        guard fd >= 0 else {
            throw Nu11Error(.io, "cannot listen on \(path): \(String(cString: strerror(errno)))", remedy: .frontEnd("check XDG_RUNTIME_DIR"))
        }
        return fd
    }

    func serve() {
        vault.releaseLockBetweenOperations()
        ShellSession.vault = vault
        ShellSession.location = location
        defer { finish() }
        let idle = vault.settings.lockIdle
        var deadline = idle > 0 ? Date().addingTimeInterval(idle) : Date.distantFuture
        let suspended = nu11_seconds_suspended()
        // logind's PrepareForSleep and this session's Lock (D-Bus), where there is a system bus.
        let watching = nu11_session_watch_start() == 0
        // Connections whose request is still coming, each with its own 5 s: read side by side,
        // so neither a silent one nor one that trickles holds the agent (and with it `lock`,
        // SIGTERM and lock.idle), however many there are.
        var waiting: [Waiting] = []
        defer { for w in waiting { w.close() } }
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return }
            let now = Date()
            waiting.removeAll { w in
                guard now.timeIntervalSince(w.since) > Self.requestWithin else { return false }
                w.close()
                return true
            }
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: signals, events: Int16(POLLIN), revents: 0)]
                + waiting.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            // Wakes every 2 s at most, to notice a suspend (the machine slept, the agent ends),
            // and when the oldest waiting request's time is up.
            var wait = min(left, 2)
            if let oldest = waiting.map(\.since).min() { wait = min(wait, max(0, Self.requestWithin - now.timeIntervalSince(oldest)) + 0.05) }
            let r = poll(&fds, nfds_t(fds.count), Int32(wait * 1000) + 1)
            if nu11_seconds_suspended() - suspended > 1 { return }
            if watching && nu11_session_watch_fired() != 0 { return }
            if r < 0 && errno != EINTR { return }
            if fds[1].revents != 0 { return }
            guard r > 0 else { continue }
            if fds[0].revents & Int16(POLLIN) != 0, let w = accepted() {
                if waiting.count >= Self.maxWaiting { waiting.removeFirst().close() }
                waiting.append(w)
            }
            // The first request complete is served; the others wait for the next turn.
            var ready: (AgentRequest, [Int32], Int32)?
            for pfd in fds.dropFirst(2) where pfd.revents != 0 && ready == nil {
                guard let index = waiting.firstIndex(where: { $0.fd == pfd.fd }) else { continue }
                switch waiting[index].assembly.read(from: pfd.fd) {
                case .more:
                    continue
                case .broken:
                    waiting.remove(at: index).close()
                case .done(let request, let passed):
                    ready = (request, passed, waiting.remove(at: index).fd)
                }
            }
            guard let (request, passed, connection) = ready else { continue }
            _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) & ~O_NONBLOCK)
            defer { close(connection); for f in passed { close(f) } }
            switch request.op {
            case .lock:
                AgentWire.sendCode(connection, 0)
                return
            case .run:
                guard passed.count == 3 else {
                    AgentWire.sendCode(connection, 64)
                    continue
                }
                let code = run(request, stdio: passed, connection: connection)
                AgentWire.sendCode(connection, code)
                // A termination signal came while it ran (the command stopped at a safe point).
                if vault.isLocked || nu11_agent_terminated() != 0 { return }
                deadline = idle > 0 ? Date().addingTimeInterval(idle) : Date.distantFuture
                // Those that waited while it ran get their full time again.
                for i in waiting.indices { waiting[i].since = Date() }
            }
        }
    }

    /// How long a connection may take to send its whole request, and how many may be waiting
    /// at once (the oldest is dropped for a new one).
    static let requestWithin: TimeInterval = 5
    static let maxWaiting = 32

    /// A connection whose request is still coming.
    struct Waiting {
        let fd: Int32
        var since = Date()
        var assembly = AgentRequest.Assembly()
        func close() {
            var a = assembly
            _ = a.drop("not served")
            _ = Foundation.close(fd)
        }
    }

    /// The next connection, when it is one of ours (else refused, audited, closed), not blocking.
    private func accepted() -> Waiting? {
        let connection = nu11_unix_accept(listener)
        guard connection >= 0 else { return nil }
        var uid: uid_t = 0
        var pid: pid_t = 0
        guard nu11_peer_credentials(connection, &uid, &pid) == 0, uid == getuid() else {
            try? vault.exclusive { vault.audit("agent-refused", detail: "a process of uid \(uid) (pid \(pid)) was refused by the unlock agent") }
            close(connection)
            return nil
        }
        _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
        return Waiting(fd: connection)
    }

    /// One command, in this process, with the client's descriptors, folder and environment.
    /// The client's Ctrl-C (or its end) is watched for meanwhile: the command stops at its next
    /// safe point and the answer is 130, as for an interrupted process.
    private func run(_ request: AgentRequest, stdio: [Int32], connection: Int32) -> Int32 {
        let saved = (Int32(0)..<3).map { dup($0) }
        let home = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        for (i, fd) in stdio.enumerated() { dup2(fd, Int32(i)) }
        nu11_stdin_reset()
        ShellSession.clientTerminal = request.terminal ?? false
        let watching = nu11_agent_watch_start(connection, signals, socketPath) == 0
        apply(environment: request.env.reduce(into: [String: String]()) { env, line in
            guard let eq = line.firstIndex(of: "=") else { return }
            env[String(line[..<eq])] = String(line[line.index(after: eq)...])
        })
        defer {
            if watching { nu11_agent_watch_stop() }
            ShellSession.clientTerminal = false
            fflush(nil)
            for (i, fd) in saved.enumerated() where fd >= 0 {
                dup2(fd, Int32(i))
                close(fd)
            }
            apply(environment: ownEnvironment)
            if home >= 0 {
                _ = fchdir(home)
                close(home)
            }
        }
        // Only the commands the client sends here (`AgentClient.viaAgent`): the rest need the PIN
        // (pin, rekey, recovery, settings set, delete, …), and a same-user process with a
        // client of its own must not get them without it.
        guard AgentClient.agentPath(request.argv) != nil else {
            let words = request.argv.prefix(2).map { String($0.prefix(40)) }.joined(separator: " ")
            try? vault.exclusive { vault.audit("agent-refused", detail: "the unlock agent refused a command it does not run") }
            Failure.printError("the unlock agent does not run `\(words)`: that command needs the PIN (hint: run it yourself at a terminal, not through the agent; it asks for the PIN there)")
            return 64
        }
        guard chdir(request.cwd) == 0 else {
            Failure.printError("the unlock agent cannot enter the folder \(request.cwd) (hint: run the command from a folder you can enter)")
            return 74
        }
        let code = CommandRunner.execute(request.argv, hint: "see `nu11vlt help` or add --help to the command")
        return nu11_agent_cancelled() != 0 && code != 0 ? 130 : code
    }

    private func apply(environment: [String: String]) {
        let current = ProcessInfo.processInfo.environment
        for key in current.keys where environment[key] == nil { unsetenv(key) }
        for (key, value) in environment where current[key] != value { setenv(key, value, 1) }
    }

    private func finish() {
        ShellSession.vault = nil
        vault.lock()
        var st = stat()
        // Only our own socket: a later agent may have bound the name again.
        if lstat(socketPath, &st) == 0 && st.st_ino == socketInode { unlink(socketPath) }
        close(listener)
    }
}

/// Ctrl-C at a client of the unlock agent: long commands call `check()` at their safe points
/// (between items), where stopping leaves every item all or nothing.
enum AgentInterruption {
    static func check() throws {
        guard nu11_agent_cancelled() != 0 else { return }
        throw Nu11Error(.invalidArgument, "interrupted (Ctrl-C); what was not committed was removed")
    }
}
