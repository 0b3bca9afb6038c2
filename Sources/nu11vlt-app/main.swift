// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Sys
import Foundation
import Nu11Media
import Nu11Vault

// nu11vlt-app — Nu11VLT on the Linux desktop (GTK 4 + libadwaita).
//
//   nu11vlt-app [--vault DIR] [--keystore DIR] [FILE ...]
//
// The vault and key store are found as the command line finds them (NU11VLT_VAULT,
// NU11VLT_KEYSTORE, else the XDG folders). FILEs are imported after unlock.

// The same process hygiene as the command line, before anything is decrypted: no core file
// (a crash must not write decrypted names to disk), not dumpable (no ptrace, no
// process_vm_readv and no /proc/PID/mem for other processes of the user).
if nu11_process_hygiene() != 0 {
    FileHandle.standardError.write(Data("nu11vlt-app: cannot disable core dumps; refusing to run\n".utf8))
    exit(71)
}
// A crash ends the process at once: the Swift runtime's backtracer (which would read this
// process's memory from a helper and take many seconds to symbolicate) is not run.
for crash in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT] { signal(crash, SIG_DFL) }

// `--check-hygiene`: what the kernel says of this process after the hygiene (for the tests).
if CommandLine.arguments.dropFirst().first == "--check-hygiene" {
    var core = rlimit()
    getrlimit(Int32(RLIMIT_CORE.rawValue), &core)
    print("dumpable \(nu11_is_dumpable()) core \(core.rlim_cur)/\(core.rlim_max)")
    exit(0)
}

let usage = "usage: nu11vlt-app [--vault DIR] [--keystore DIR] [--timings] [FILE ...]"
var vaultPath: String?
var keyStorePath: String?
var files: [String] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.first {
    arguments = arguments.dropFirst()
    switch argument {
    case "--vault", "--keystore":
        guard let value = arguments.first, !value.hasPrefix("--") else {
            FileHandle.standardError.write(Data("nu11vlt-app: \(argument) needs a folder (\(usage))\n".utf8))
            exit(2)
        }
        arguments = arguments.dropFirst()
        if argument == "--vault" { vaultPath = value } else { keyStorePath = value }
    case "--timings": break  // read by Timings.enabled
    case "--help", "-h":
        print(usage)
        exit(0)
    case "--version":
        print("nu11vlt-app 2.0")
        exit(0)
    default:
        guard !argument.hasPrefix("-") else {
            FileHandle.standardError.write(Data("nu11vlt-app: unknown option '\(argument)' (\(usage))\n".utf8))
            exit(2)
        }
        files.append(argument.hasPrefix("/") ? argument : FileManager.default.currentDirectoryPath + "/" + argument)
    }
}

// The image helper starts while the unlock screen is shown, not after the PIN.
Thread.detachNewThread { ImageHelper.shared.warmUp() }

// Where the default vault folder holds no vault, the one the key store recorded once it was
// found after a move ("Search for the vault folder…", or `nu11vlt status --search`).
let location = VaultLocation.resolveRemembered(vault: vaultPath, keyStore: keyStorePath)
let app = App(location: location)
app.pendingImports = files
on(UnsafeMutableRawPointer(app.application), "activate") { app.activate() }
// GApplication parses no arguments of ours: only the program name goes through.
var argv: [UnsafeMutablePointer<CChar>?] = [strdup(CommandLine.arguments[0]), nil]
let status = g_application_run(UnsafeMutablePointer(OpaquePointer(app.application)), 1, &argv)
exit(status)

/// `--timings`: on stderr, how long the first screen of tiles took after unlock, the listing,
/// and each tile's decrypt + decode on the worker (bench/gallery.py reads them), and what a
/// playing video did (`event`: the helper started, frames received and shown, how the stream
/// and the helper ended; the GUI test reads them). Timings only, never a name or an ID.
enum Timings {
    /// Set once, from the command line (no value of ours starts with "--": see above).
    static let enabled = CommandLine.arguments.dropFirst().contains("--timings")
    static func report(_ what: String, _ milliseconds: Double) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("timing \(what) \(String(format: "%.2f", milliseconds)) ms\n".utf8))
    }

    static func count(_ what: String, _ count: Int) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("count \(what) \(count)\n".utf8))
    }

    /// An event of the app's own making (a fixed word and numbers: what a video's playback
    /// did), with the monotonic time in milliseconds.
    static func event(_ what: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("event \(String(format: "%.2f", App.monotonic() * 1000)) \(what)\n".utf8))
    }
}
