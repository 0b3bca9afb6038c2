// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import CNu11Sys
import Foundation
import Nu11Format
import Nu11Vault

/// `nu11vlt unlock`: the PIN once, then an agent (as ssh-agent) holds the unlocked vault for
/// lock.idle, and commands that read or add use it without asking.
struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock once for the command line: an agent holds the vault for lock.idle (`nu11vlt lock` ends it).",
        discussion: """
            Unlocks as every command does (an enrolled security key first, then the PIN; --security-key: \
            the key alone) and starts an agent in the background (as ssh-agent or gpg-agent) that holds the \
            unlocked vault until `nu11vlt lock`, SIGTERM, or lock.idle (a setting, 5 min by default; 0 = never) \
            without a command. Meanwhile import, list, export, view, album, note, log, fade, status, check, \
            thumbnail(s) and settings list/get run in it without the PIN. Commands that destroy or change \
            keys (delete, wipe, pin, rekey, recovery, tpm, fido2, settings set, archive) still ask for it; a \
            command given --pin-stdin or a --…-fd option runs without the agent. The trade-off, as with \
            ssh-agent: while it runs, any program running as your user can use the vault through it. It \
            listens on a socket in $XDG_RUNTIME_DIR/nu11vlt (0700), answers only processes of your user \
            (SO_PEERCRED), cannot be traced or dumped, and writes nothing to disk. It ends when logind \
            says the machine goes to sleep or this session is locked, and at the latest on waking from \
            a suspend; a screen locker that does not tell logind is not seen (run `nu11vlt lock` from its hook). \
            Ctrl-C stops a command it runs before its next item; a PIN changed elsewhere ends it.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions

    func run() throws {
        try Failure.run {
            let loc = location.location
            _ = try AgentSocket.path(for: loc)  // a path too long for a socket is said before the PIN
            _ = try AgentSocket.makeFolder()
            if case .agent(let fd, let pid) = AgentSocket.probe(loc) {
                close(fd)
                Output.note("nu11vlt: already unlocked (unlock agent, pid \(pid)); `nu11vlt lock` ends it")
                return
            }
            if let half = location.locked.halfVaultError { throw half }
            guard location.locked.isInitialized else {
                throw Nu11Error(.notFound, "there is no vault at \(loc.vaultRoot)", remedy: .frontEnd("create one: nu11vlt init"))
            }
            // As every command unlocks: an enrolled security key first (unless a PIN descriptor
            // is given), the PIN as its fallback; --security-key without one. The agent does the
            // unlock, and asks this process for each secret it needs, read here.
            let how = pin.securityKeyOnly ? ["--security-key"] : pin.pinGiven ? ["--with-pin"] : []
            let (pid, answers, secrets) = try Self.startAgent(loc, how: how)
            var idle: Double?
            do {
                defer { close(answers); if secrets >= 0 { close(secrets) } }
                while let line = Self.readLine(answers) {
                    if line.hasPrefix("ready ") {
                        idle = Double(line.dropFirst(6)) ?? 0
                        break
                    }
                    guard line == "pin" || line == "key-pin" else { break }
                    let secret = line == "key-pin" ? try pin.readKeyPIN() : try pin.read()
                    var bytes = secret.withUnsafeBytes { Array($0) } + [0x0a]
                    _ = bytes.withUnsafeBytes { try? SystemIO.writeAll(secrets, $0) }
                    secureZero(&bytes)
                }
            } catch {
                // Our own read failed (said by the caller): the agent, told nothing, ends quietly.
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                throw error
            }
            guard let idle else {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 1
                throw ExitCode(code == 0 ? 1 : code)
            }
            let until = idle > 0 ? "for \(DurationText.format(idle)) after the last command (lock.idle)" : "until `nu11vlt lock` (lock.idle is 0)"
            Output.note("""
                nu11vlt: unlocked \(until) by an agent (pid \(pid)); commands use it without the PIN. \
                Trade-off, as with ssh-agent: meanwhile any program running as your user can use this vault \
                through it. Deleting and PIN or key changes still ask for the PIN. `nu11vlt lock` ends it.
                """)
        }
    }

    /// One line from the agent ("pin", "key-pin" or "ready SECONDS"), nil at its end.
    static func readLine(_ fd: Int32) -> String? {
        var line = [UInt8]()
        var byte: UInt8 = 0
        while true {
            let n = Foundation.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            guard n == 1 else { return nil }
            if byte == 0x0a { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Starts `nu11vlt agent-serve` in a new session. It asks for secrets on descriptor 4 (one
    /// word a line) and reads each on descriptor 3 (a pipe: never argv or the environment),
    /// then says "ready" on 4. Returns its pid, our end of 4 and our end of 3.
    static func startAgent(_ loc: VaultLocation, how: [String]) throws -> (pid_t, Int32, Int32) {
        var secretPipe: [Int32] = [-1, -1]
        var answerPipe: [Int32] = [-1, -1]
        guard pipe(&secretPipe) == 0 else { throw Nu11Error(.io, "cannot make a pipe", remedy: .frontEnd("try again")) }
        guard pipe(&answerPipe) == 0 else {
            close(secretPipe[0]); close(secretPipe[1])
            throw Nu11Error(.io, "cannot make a pipe", remedy: .frontEnd("try again"))
        }
        // Our ends stay ours (no other child inherits them); the child gets its ends as 3 and 4.
        for fd in secretPipe + answerPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(secretPipe[0]); close(answerPipe[1]); if null >= 0 { close(null) } }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let args = [exe, "agent-serve", "--vault", loc.vaultRoot, "--keystore", loc.keyStoreRoot] + how
        var cArgs = args.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var pid: Int32 = 0
        let fds: [Int32] = [null, null, 2, secretPipe[0], answerPipe[1]]
        let rc = nu11_spawn_self(exe, &cArgs, fds, Int32(fds.count), 1, &pid)
        guard rc == 0 else {
            close(secretPipe[1]); close(answerPipe[0])
            throw Nu11Error(.io, "cannot start the unlock agent: \(String(cString: strerror(rc)))", remedy: .frontEnd("use `nu11vlt shell`"))
        }
        return (pid, answerPipe[0], secretPipe[1])
    }
}

/// `nu11vlt lock`: ends the unlock agent of this vault (its keys are zeroed).
struct Lock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "End the unlock agent of this vault (see `nu11vlt unlock`).")
    @OptionGroup var location: LocationOptions

    func run() throws {
        try Failure.run {
            if try AgentClient.lock(location.location) {
                Output.note("nu11vlt: locked (the unlock agent has ended)")
            } else {
                Output.note("nu11vlt: no unlock agent holds this vault; nothing to lock")
            }
        }
    }
}

/// The agent itself, started by `unlock` (not for typing): it asks `unlock` for each secret it
/// needs on descriptor 4 ("pin", "key-pin") and reads it on 3; "ready" on 4 when it serves.
struct AgentServe: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "agent-serve", shouldDisplay: false)
    @OptionGroup var location: LocationOptions
    @Flag(name: .customLong("security-key"), help: "Only an enrolled security key (no PIN).")
    var securityKeyOnly = false
    @Flag(name: .customLong("with-pin"), help: "The PIN only (unlock was given it on a descriptor).")
    var withPIN = false

    /// `unlock` ended without answering (its own read failed, and it said so): end quietly.
    struct UnlockGone: Error {}

    func run() throws {
        do {
            try serve()
        } catch is UnlockGone {
            throw ExitCode(1)
        }
    }

    private func serve() throws {
        try Failure.run {
            guard fcntl(3, F_GETFD) >= 0, fcntl(4, F_GETFD) >= 0, !(securityKeyOnly && withPIN) else {
                throw Nu11Error(.invalidArgument, "agent-serve is started by `nu11vlt unlock`", remedy: .frontEnd("run nu11vlt unlock"))
            }
            let signals = nu11_block_termination_signals()
            _ = nu11_process_hygiene()  // no core, no ptrace (again: it must hold for the agent's whole life)
            // A client that stopped reading its output must not end the agent (EPIPE instead).
            signal(SIGPIPE, SIG_IGN)
            _ = chdir("/")
            let loc = location.location
            let path = try AgentSocket.path(for: loc)
            _ = try AgentSocket.makeFolder()
            let vault = try unlock()
            let listener: Int32
            do { listener = try AgentServer.listen(at: path) } catch {
                vault.lock()
                throw error
            }
            let server = AgentServer(vault: vault, location: loc, listener: listener, socketPath: path, signals: signals)
            let ready = Array("ready \(vault.settings.lockIdle)\n".utf8)
            _ = ready.withUnsafeBytes { try? SystemIO.writeAll(4, $0) }
            close(4)
            close(3)
            // From now on nothing of ours reaches the terminal that started us.
            let null = open("/dev/null", O_RDWR)
            if null >= 0 {
                dup2(null, 2)
                if null > 2 { close(null) }
            }
            server.serve()
        }
    }

    /// As any command unlocks (`openVault`): an enrolled security key first, the PIN as its
    /// fallback; each secret asked of `unlock`.
    private func unlock() throws -> Vault {
        if !withPIN, let vault = try openWithSecurityKey(location.locked, only: securityKeyOnly, keyPIN: { try Self.ask("key-pin") },
                                                         announce: true) {
            return vault
        }
        let vault = try location.locked.unlock(onWait: waiting, report: printGate, readPIN: { try Self.ask("pin") })
        vault.onNotice = { Output.note("nu11vlt: warning: \(Output.escaped(Remedies.line($0)))") }
        return vault
    }

    /// Asks `unlock` for a secret and reads it (one line on descriptor 3).
    static func ask(_ what: String) throws -> SecretBytes {
        let line = Array("\(what)\n".utf8)
        do { try line.withUnsafeBytes { try SystemIO.writeAll(4, $0) } } catch { throw UnlockGone() }
        do { return try PINReader.readLine(fd: 3, label: "nu11vlt unlock") } catch { throw UnlockGone() }
    }
}
