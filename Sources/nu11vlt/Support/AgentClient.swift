// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import CNu11Sys
import Foundation
import Nu11Format
import Nu11Vault

/// The command side of the unlock agent: a command that reads or adds (never one that
/// destroys or changes a PIN or key) runs in the agent when one holds its vault. The client
/// never sends a PIN: commands that need one do not go to the agent at all.
enum AgentClient {
    /// Commands the agent runs (a share too: it reads, as an export does, and asks nothing).
    /// Everything else (delete, wipe, PIN, key, recovery, TPM and security-key changes,
    /// settings changes, archives) runs here and asks the PIN.
    static let viaAgent: [any ParsableCommand.Type] = [
        Import.self, List.self, Export.self, View.self, Album.Create.self, Album.Rename.self, Album.ListAlbums.self,
        Album.Move.self, Note.Add.self, Note.ListNotes.self, Note.Show.self, Note.Edit.self, LogCommand.self,
        Thumbnail.self, Thumbnails.self, Rotate.self, Fade.Set.self, Status.self, Check.self, SettingsCommand.ListSettings.self,
        SettingsCommand.Get.self, ShareCommand.self,
    ]

    /// The command words of each command the agent runs ("list", "album create", …), from the
    /// commands' configurations (no parsing).
    static let agentPaths: Set<[String]> = {
        var paths = Set<[String]>()
        func walk(_ type: any ParsableCommand.Type, _ prefix: [String]) {
            for sub in type.configuration.subcommands {
                let path = prefix + [sub._commandName]
                if viaAgent.contains(where: { $0 == sub }) { paths.insert(path) }
                walk(sub, path)
            }
        }
        walk(Nu11vlt.self, [])
        return paths
    }()

    /// The command words of `args` when its command is one the agent runs, else nil. The agent
    /// asks this too, of every request: a client of its own sends what it likes.
    static func agentPath(_ args: [String]) -> [String]? {
        guard let first = args.first else { return nil }
        // `check --repair` rewrites the index under a lock of its own: in the agent (which
        // holds the vault's lock while it runs a command) it waited on itself for ever.
        if first == "check" && args.contains(where: { $0 == "--repair" || $0.hasPrefix("--repair=") }) { return nil }
        if agentPaths.contains([first]) { return [first] }
        if args.count > 1 && agentPaths.contains([first, args[1]]) { return [first, args[1]] }
        return nil
    }

    /// The vault a command line is for, when its command is one the agent runs: read from the
    /// words themselves (the command's words, then --vault/--keystore, else the environment's),
    /// without parsing the line — parsing the whole command tree was most of a client's time;
    /// the agent parses it and says any usage error, as this process would have.
    static func route(_ args: [String]) -> VaultLocation? {
        guard let path = agentPath(args) else { return nil }
        var vault: String?
        var keystore: String?
        var i = path.count
        while i < args.count {
            let word = args[i]
            if word == "--" { break }
            if (word == "--vault" || word == "--keystore") && i + 1 < args.count {
                if word == "--vault" { vault = args[i + 1] } else { keystore = args[i + 1] }
                i += 2
                continue
            }
            if word.hasPrefix("--vault=") { vault = String(word.dropFirst("--vault=".count)) }
            if word.hasPrefix("--keystore=") { keystore = String(word.dropFirst("--keystore=".count)) }
            i += 1
        }
        return VaultLocation.resolveRemembered(vault: vault, keyStore: keystore)
    }

    /// Runs `args` in the agent of its vault and returns the exit code, or nil to run it here
    /// (no agent, a command the agent does not run, or a socket that fails a check — said in one line).
    static func run(_ args: [String]) -> Int32? {
        // A descriptor option names this process's descriptor, which the agent does not have;
        // --pin-stdin puts the PIN first on stdin, where the agent would take it for data.
        let ownInput = args.contains { $0 == "--pin-stdin" || ($0.hasPrefix("--") && ($0.hasSuffix("-fd") || $0.contains("-fd="))) }
        guard !ownInput, ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] != nil, let location = route(args) else { return nil }
        let fd: Int32
        switch AgentSocket.probe(location) {
        case .none:
            return nil
        case .stale:
            Output.note("nu11vlt: note: the unlock agent has ended (a stale socket is left); asking for the PIN")
            return nil
        case .refused(let why):
            Output.note("nu11vlt: warning: not using the unlock agent: \(Output.escaped(why)); asking for the PIN")
            return nil
        case .agent(let connected, _):
            fd = connected
        }
        defer { close(fd) }
        let request = AgentRequest(op: .run, argv: args, cwd: FileManager.default.currentDirectoryPath,
                                   env: ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" },
                                   terminal: isatty(0) == 1 && PINReader.hasTerminal)
        do {
            try request.send(fd, fds: [0, 1, 2])
        } catch {
            Output.note("nu11vlt: warning: not using the unlock agent: \(Output.escaped((error as? Nu11Error)?.message ?? "\(error)")); asking for the PIN")
            return nil
        }
        // Ctrl-C from now on is passed to the agent, which stops the command at its next safe
        // point and answers; a second Ctrl-C ends this process at once.
        nu11_agent_client_interruptible(fd)
        guard let code = AgentWire.readCode(fd) else {
            Failure.printError("the unlock agent ended during the command (hint: see `nu11vlt log`; run `nu11vlt unlock` again)")
            return 1
        }
        let signal = nu11_agent_client_interrupted()
        if signal != 0 && code != 0 {
            // Interrupted, as a process of its own would have been (a shell loop stops too).
            Foundation.signal(signal, SIG_DFL)
            raise(signal)
        }
        return code
    }

    /// Ends the agent of `location`: true when one was running (it has gone when this returns).
    static func lock(_ location: VaultLocation) throws -> Bool {
        switch AgentSocket.probe(location) {
        case .none, .stale:
            return false
        case .refused(let why):
            throw Nu11Error(.invalidArgument, "not talking to the socket: \(why)",
                            remedy: .frontEnd("remove \(try AgentSocket.folder()) if you did not create it"))
        case .agent(let fd, let pid):
            defer { close(fd) }
            try AgentRequest(op: .lock).send(fd, fds: [])
            // An agent busy with a command that does not end (blocked on its client's stdin or
            // stdout) cannot read the request: after 3 s it gets SIGTERM (`pid` is the socket's
            // peer, our own uid: AgentSocket.probe), which ends it within a second.
            // Only a process that is this program serving as the agent is signalled
            // (nu11_signal_agent): never another process holding the socket, nor a reused PID.
            var answer = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&answer, 1, 3000) > 0 {
                _ = AgentWire.readCode(fd)
            } else if nu11_signal_agent(pid) != 0 && errno == EPERM {
                throw Nu11Error(.invalidArgument, "the process holding the agent's socket (pid \(pid)) does not answer and is not an unlock agent of this nu11vlt: it was not signalled",
                                remedy: .frontEnd("see what it is with `ps -p \(pid) -o args`"))
            }
            // It has ended when its process has (up to 5 s: it zeroes its keys and removes its
            // socket first), and its socket answers no more.
            for _ in 0..<500 where !isZombieOrGone(pid) { usleep(10_000) }
            let gone: Bool
            switch AgentSocket.probe(location) {
            case .none, .stale: gone = true
            case .agent(let other, _): close(other); gone = false
            case .refused: gone = false
            }
            guard isZombieOrGone(pid), gone else {
                throw Nu11Error(.io, "the unlock agent (pid \(pid)) did not end", remedy: .frontEnd("see what holds it with `ps -p \(pid) -o args`"))
            }
            return true
        }
    }

    private static func isZombieOrGone(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        guard let close = status.lastIndex(of: ")") else { return true }
        return status[status.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }
}
