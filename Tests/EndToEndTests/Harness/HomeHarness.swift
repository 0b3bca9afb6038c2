// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension CLI {
    /// A fake home folder for this test (`root/home`), where the defaults live: the vault
    /// folder at ~/.local/share/nu11vlt and the key store at ~/.local/state/nu11vlt.
    var home: String { root + "/home" }
    var defaultVault: String { home + "/.local/share/nu11vlt" }
    var defaultKeyStore: String { home + "/.local/state/nu11vlt" }

    /// From now on every command runs as a user with no paths set: HOME is the fake home,
    /// NU11VLT_VAULT, NU11VLT_KEYSTORE and the XDG folders unset, and `nu11vlt` on PATH (the
    /// binary under test), so a command line printed by nu11vlt runs as pasted.
    func useDefaultsInHome() throws {
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        for key in ["NU11VLT_VAULT", "NU11VLT_KEYSTORE", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"] {
            environment.removeValue(forKey: key)
        }
        environment["HOME"] = home
        let bin = (CLI.binary as NSString).deletingLastPathComponent
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    }

    /// A command line as a user pastes it into a shell (sh -c), with this test's environment.
    func shell(_ line: String, input: Data = Data(), environment extra: [String: String] = [:]) throws -> Outcome {
        try spawn("/bin/sh", ["-c", line], input: input, environment: extra)
    }
}
