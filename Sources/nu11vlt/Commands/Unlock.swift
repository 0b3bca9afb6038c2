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
            Asks the PIN and starts an agent in the background (as ssh-agent or gpg-agent) that holds the \
            unlocked vault until `nu11vlt lock`, SIGTERM, or lock.idle (a setting, 5 min by default; 0 = never) \
            without a command. Meanwhile import, list, export, view, album, note, log, fade, status, check, \
            thumbnail(s) and settings list/get run in it without the PIN. Commands that destroy or change \
            keys (delete, wipe, pin, rekey, recovery, tpm, fido2, settings set, archive) still ask for it; a \
            command given --pin-stdin or a --…-fd option runs without the agent. The trade-off, as with \
            ssh-agent: while it runs, any program running as your user can use the vault through it. It \
            listens on a socket in $XDG_RUNTIME_DIR/nu11vlt (0700), answers only processes of your user \
            (SO_PEERCRED), cannot be traced or dumped, and writes nothing to disk. It ends when logind \
            says the machine goes to sleep or this session is locked, and at the latest on waking from \
            a suspend; a screen locker that does not tell logind is not seen (run `nu11vlt lock` from its hook).
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions

    func run() throws {
        try Failure.run {
            guard !pin.securityKeyOnly else {
                throw Nu11Error(.invalidArgument, "the unlock agent opens the vault with the PIN, not a security key", remedy: .frontEnd("leave out --security-key"))
            }
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
            let secret = try pin.read()
            let (pid, ready) = try Self.startAgent(loc, pin: secret)
            // The agent unlocks (the gate's notices and a wrong PIN show on our stderr), then says "ready".
            var line = [UInt8]()
            var byte: UInt8 = 0
            while Foundation.read(ready, &byte, 1) == 1 && byte != 0x0a { line.append(byte) }
            close(ready)
            let words = String(decoding: line, as: UTF8.self).split(separator: " ")
            guard words.first == "ready", words.count == 2 else {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 1
                throw ExitCode(code == 0 ? 1 : code)
            }
            let idle = Double(words[1]) ?? 0
            let until = idle > 0 ? "for \(DurationText.format(idle)) after the last command (lock.idle)" : "until `nu11vlt lock` (lock.idle is 0)"
            Output.note("""
                nu11vlt: unlocked \(until) by an agent (pid \(pid)); commands use it without the PIN. \
                Trade-off, as with ssh-agent: meanwhile any program running as your user can use this vault \
                through it. Deleting and PIN or key changes still ask for the PIN. `nu11vlt lock` ends it.
                """)
        }
    }

    /// Starts `nu11vlt agent-serve` in a new session: the PIN goes through a pipe (descriptor 3,
    /// never argv or the environment), and it answers on descriptor 4.
    static func startAgent(_ loc: VaultLocation, pin: SecretBytes) throws -> (pid_t, Int32) {
        var pinPipe: [Int32] = [-1, -1]
        var readyPipe: [Int32] = [-1, -1]
        guard pipe(&pinPipe) == 0 else { throw Nu11Error(.io, "cannot make a pipe", remedy: .frontEnd("try again")) }
        guard pipe(&readyPipe) == 0 else {
            close(pinPipe[0]); close(pinPipe[1])
            throw Nu11Error(.io, "cannot make a pipe", remedy: .frontEnd("try again"))
        }
        // Our ends stay ours (no other child inherits them); the child gets its ends as 3 and 4.
        for fd in pinPipe + readyPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(pinPipe[0]); close(readyPipe[1]); if null >= 0 { close(null) } }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let args = [exe, "agent-serve", "--vault", loc.vaultRoot, "--keystore", loc.keyStoreRoot, "--pin-fd", "3"]
        var cArgs = args.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var pid: Int32 = 0
        let fds: [Int32] = [null, null, 2, pinPipe[0], readyPipe[1]]
        let rc = nu11_spawn_self(exe, &cArgs, fds, Int32(fds.count), 1, &pid)
        guard rc == 0 else {
            close(pinPipe[1]); close(readyPipe[0])
            throw Nu11Error(.io, "cannot start the unlock agent: \(String(cString: strerror(rc)))", remedy: .frontEnd("use `nu11vlt shell`"))
        }
        // The PIN, one line, into the pipe (the kernel's buffer; nothing on disk).
        var line = pin.withUnsafeBytes { Array($0) } + [0x0a]
        _ = line.withUnsafeBytes { try? SystemIO.writeAll(pinPipe[1], $0) }
        secureZero(&line)
        close(pinPipe[1])
        return (pid, readyPipe[0])
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

/// The agent itself, started by `unlock` (not for typing): descriptor 3 holds the PIN, 4 gets "ready".
struct AgentServe: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "agent-serve", shouldDisplay: false)
    @OptionGroup var location: LocationOptions
    @OptionGroup var pin: PINOptions

    func run() throws {
        try Failure.run {
            guard pin.pinFD == 3, fcntl(4, F_GETFD) >= 0 else {
                throw Nu11Error(.invalidArgument, "agent-serve is started by `nu11vlt unlock`", remedy: .frontEnd("run nu11vlt unlock"))
            }
            let signals = nu11_block_termination_signals()
            _ = nu11_process_hygiene()  // no core, no ptrace (again: it must hold for the agent's whole life)
            _ = chdir("/")
            let loc = location.location
            let path = try AgentSocket.path(for: loc)
            _ = try AgentSocket.makeFolder()
            let vault = try openVaultWithPIN(location, pin)
            let listener: Int32
            do { listener = try AgentServer.listen(at: path) } catch {
                vault.lock()
                throw error
            }
            let server = AgentServer(vault: vault, location: loc, listener: listener, socketPath: path, signals: signals)
            let ready = Array("ready \(vault.settings.lockIdle)\n".utf8)
            _ = ready.withUnsafeBytes { try? SystemIO.writeAll(4, $0) }
            close(4)
            // From now on nothing of ours reaches the terminal that started us.
            let null = open("/dev/null", O_RDWR)
            if null >= 0 {
                dup2(null, 2)
                if null > 2 { close(null) }
            }
            server.serve()
        }
    }
}
