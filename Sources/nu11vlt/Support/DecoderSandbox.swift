// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11Sys

/// What walls the image helper gets on this kernel (docs/THREAT-MODEL.md, "Images").
enum DecoderSandbox {
    static var landlock: Int32 { nu11_landlock_abi() }

    static var summary: String {
        let abi = landlock
        return abi > 0
            ? "sandboxed: seccomp allow-list + Landlock (ABI \(abi)): no files, no network, no other process"
            : "sandboxed: seccomp allow-list only — this kernel has no Landlock (a second wall against file access is missing)"
    }

    /// One warning line for commands that decode images, when Landlock is missing.
    static func warnIfWeaker() {
        guard landlock == 0 else { return }
        Output.note("nu11vlt: warning: this kernel has no Landlock; the image decoder runs behind its seccomp allow-list only (see `nu11vlt status`)")
    }
}
