// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11Sys

/// Process hygiene while keys may be in memory: no core dumps, not ptrace-attachable by
/// other processes of the same user.
enum Hygiene {
    static func apply() {
        _ = nu11_process_hygiene()
        nu11_cleanup_install("nu11vlt: interrupted; what was not committed was removed\n")
        PlaintextSpool.sweep()
    }
}
