// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format

/// The prompt of `nu11vlt shell`: one line at a time, with a history kept in memory only (it
/// never reaches disk: no file, no environment). At a terminal: raw mode while typing, with
/// Backspace, Ctrl-U (clear), Ctrl-C (drop the line), ↑/↓ (history), Ctrl-D on an empty line
/// (end). Elsewhere (a pipe): plain lines. Waits at most `idle` seconds for each key (0 = no limit).
final class LineEditor {
    enum Read: Equatable {
        case line(String)
        case end
        case idle
    }

    private let prompt: String
    private(set) var history: [String] = []
    private let terminal = isatty(0) == 1
    private var pending: [UInt8] = []
    /// The words that may replace the line's last word (Tab).
    private let complete: (String) -> [String]

    init(prompt: String, complete: @escaping (String) -> [String] = { _ in [] }) {
        self.prompt = prompt
        self.complete = complete
    }

    func read(idle: Double) -> Read {
        terminal ? readAtTerminal(idle: idle) : readPlain(idle: idle)
    }

    /// Whether a byte arrived within `idle` seconds (false: the idle time passed).
    private func wait(idle: Double) -> Bool {
        guard idle > 0 else { return true }
        var fds = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(idle)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            let r = poll(&fds, 1, Int32(min(left * 1000, Double(Int32.max))) + 1)
            if r > 0 { return true }
            if r == 0 { return false }
            if errno != EINTR { return true }  // let read() report it
        }
    }

    private func nextByte(idle: Double) -> UInt8?? {
        guard wait(idle: idle) else { return .some(nil) }
        var byte: UInt8 = 0
        while true {
            let n = Foundation.read(0, &byte, 1)
            if n == 1 { return .some(byte) }
            if n < 0 && errno == EINTR { continue }
            return nil  // end of input or an error
        }
    }

    private func readPlain(idle: Double) -> Read {
        var line: [UInt8] = []
        while true {
            guard let next = nextByte(idle: idle) else { return line.isEmpty ? .end : .line(String(decoding: line, as: UTF8.self)) }
            guard let byte = next else { return .idle }
            if byte == 0x0a { return .line(String(decoding: line, as: UTF8.self)) }
            line.append(byte)
        }
    }

    private func readAtTerminal(idle: Double) -> Read {
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else { return readPlain(idle: idle) }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        _ = tcsetattr(0, TCSAFLUSH, &raw)
        defer { _ = tcsetattr(0, TCSAFLUSH, &saved) }

        var line: [UInt8] = []
        var index = history.count  // history.count = the line being typed
        var draft: [UInt8] = []
        func redraw() { write("\r\u{1b}[K" + prompt + String(decoding: line, as: UTF8.self)) }
        write(prompt)
        while true {
            guard let next = nextByte(idle: idle) else { write("\r\n"); return .end }
            guard let byte = next else { write("\r\n"); return .idle }
            switch byte {
            case 0x0d, 0x0a:
                write("\r\n")
                let text = String(decoding: line, as: UTF8.self)
                if !text.trimmingCharacters(in: .whitespaces).isEmpty && history.last != text { history.append(text) }
                return .line(text)
            case 0x04:  // Ctrl-D
                if line.isEmpty {
                    write("\r\n")
                    return .end
                }
            case 0x03:  // Ctrl-C: drop the line
                write("^C\r\n")
                line = []
                index = history.count
                write(prompt)
            case 0x15:  // Ctrl-U
                line = []
                redraw()
            case 0x7f, 0x08:
                if !line.isEmpty {
                    // Drop one UTF-8 character (its continuation bytes too).
                    repeat { line.removeLast() } while !line.isEmpty && (line[line.count - 1] & 0xc0) == 0x80
                    redraw()
                }
            case 0x1b:  // ESC [ A / B: history
                guard let b1 = nextByte(idle: 0.05) ?? nil, b1 == 0x5b, let b2 = nextByte(idle: 0.05) ?? nil else { continue }
                if b2 == 0x41 && index > 0 {
                    if index == history.count { draft = line }
                    index -= 1
                    line = Array(history[index].utf8)
                    redraw()
                } else if b2 == 0x42 && index < history.count {
                    index += 1
                    line = index == history.count ? draft : Array(history[index].utf8)
                    redraw()
                }
            case 0x09:  // Tab: complete the last word; a second choice lists them
                line = completed(line)
                redraw()
            default:
                if byte >= 0x20 {
                    line.append(byte)
                    redraw()
                }
            }
        }
    }

    private func write(_ text: String) { Output.stderr(text) }

    /// The line with its last word completed as far as the candidates agree; with several,
    /// they are listed above a new prompt.
    private func completed(_ line: [UInt8]) -> [UInt8] {
        let text = String(decoding: line, as: UTF8.self)
        let choices = complete(text)
        guard !choices.isEmpty else { return line }
        let cut = text.lastIndex(of: " ").map { text.index(after: $0) } ?? text.startIndex
        let typed = String(text[cut...])
        var word = choices.count == 1 ? choices[0] : ShellCompletion.commonPrefix(choices)
        if word.count <= typed.count && choices.count > 1 {
            write("\r\n" + choices.prefix(60).joined(separator: "  ") + (choices.count > 60 ? "  …" : "") + "\r\n")
            return line
        }
        word = word.replacingOccurrences(of: " ", with: "\\ ")
        if choices.count == 1 && !word.hasSuffix("/") { word += " " }
        return Array((String(text[..<cut]) + word).utf8)
    }
}

/// Splits a shell line into words: spaces separate, '…' and "…" quote, \ escapes one character.
enum ShellWords {
    static func split(_ line: String) throws -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        var tilde = false  // the word began with an unquoted ~
        func finish() {
            if tilde && (word == "~" || word.hasPrefix("~/")) { word = expandTilde(word) }
            words.append(word)
            tilde = false
        }
        for ch in line {
            if !inWord && quote == nil && !escaped && ch == "~" { tilde = true }
            if escaped {
                word.append(ch)
                escaped = false
                continue
            }
            if let open = quote {
                if ch == open { quote = nil } else if ch == "\\" && open == "\"" { escaped = true } else { word.append(ch) }
                continue
            }
            switch ch {
            case "\\": escaped = true; inWord = true
            case "'", "\"": quote = ch; inWord = true
            case " ", "\t":
                if inWord { finish() }
                word = ""
                inWord = false
            default: word.append(ch); inWord = true
            }
        }
        if quote != nil || escaped {
            throw Nu11Error(.invalidArgument, "the line ends inside a quote or after a backslash", remedy: .frontEnd("close the quote"))
        }
        if inWord { finish() }
        return words
    }

    /// `~` and `~/…` as the home folder ($HOME), as a shell expands them.
    static func expandTilde(_ word: String) -> String {
        guard word == "~" || word.hasPrefix("~/") else { return word }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        return home + word.dropFirst()
    }
}
