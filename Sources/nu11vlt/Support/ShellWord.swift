// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format
import Nu11Vault

/// A path as one word of a POSIX shell command line: as it is when it holds only characters no
/// shell treats specially, else in single quotes (a quote inside as '\''). Control characters
/// are shown escaped (such a path cannot be pasted; it never reaches the terminal raw).
enum ShellWord {
    static func quoted(_ text: String) -> String {
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+:@%,=")
        if !text.isEmpty, text.allSatisfy({ plain.contains($0) }) { return text }
        return "'" + Output.escaped(text).replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
