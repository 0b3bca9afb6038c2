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
    /// Commands the agent runs. Everything else (delete, wipe, PIN, key, recovery, TPM and
    /// security-key changes, settings changes, archives) runs here and asks the PIN.
    static let viaAgent: [any ParsableCommand.Type] = [
        Import.self, List.self, Export.self, View.self, Album.Create.self, Album.Rename.self, Album.ListAlbums.self,
        Album.Move.self, Note.Add.self, Note.ListNotes.self, Note.Show.self, Note.Edit.self, LogCommand.self,
        Thumbnail.self, Thumbnails.self, Rotate.self, Fade.Set.self, Status.self, Check.self, SettingsCommand.ListSettings.self,
        SettingsCommand.Get.self,
    ]

    /// The vault a parsed command names (its --vault/--keystore, else the environment's).
    static func location(of command: any ParsableCommand) -> VaultLocation? {
        for child in Mirror(reflecting: command).children {
            if let group = child.value as? OptionGroup<LocationOptions> { return group.wrappedValue.location }
        }
        return nil
    }

    /// Runs `args` in the agent of its vault and returns the exit code, or nil to run it here
    /// (no agent, a command the agent does not run, or a socket that fails a check — said in one line).
    static func run(_ args: [String]) -> Int32? {
        // A descriptor option names this process's descriptor, which the agent does not have;
        // --pin-stdin puts the PIN first on stdin, where the agent would take it for data.
        let ownInput = args.contains { $0 == "--pin-stdin" || ($0.hasPrefix("--") && ($0.hasSuffix("-fd") || $0.contains("-fd="))) }
        guard !ownInput, ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] != nil,
              let command = try? Nu11vlt.parseAsRoot(args),
              viaAgent.contains(where: { $0 == type(of: command) }),
              let location = location(of: command) else { return nil }
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
                                   env: ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" })
        do {
            try request.send(fd, fds: [0, 1, 2])
        } catch {
            Output.note("nu11vlt: warning: not using the unlock agent: \(Output.escaped((error as? Nu11Error)?.message ?? "\(error)")); asking for the PIN")
            return nil
        }
        guard let code = AgentWire.readCode(fd) else {
            Failure.printError("the unlock agent ended during the command (hint: see `nu11vlt log`; run `nu11vlt unlock` again)")
            return 1
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
            _ = AgentWire.readCode(fd)
            // It has ended when its process has (up to 5 s: it zeroes its keys and removes its socket first).
            for _ in 0..<500 where !isZombieOrGone(pid) { usleep(10_000) }
            return true
        }
    }

    private static func isZombieOrGone(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        guard let close = status.lastIndex(of: ")") else { return true }
        return status[status.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }
}
