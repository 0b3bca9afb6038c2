// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import SystemPackage
import Glibc
#endif
import Foundation
import Nu11Format
import Nu11Vault

/// Reads PINs and passphrases: from the terminal with echo off, or for scripts from a file
/// descriptor or stdin. Never from argv or the environment. The bytes go straight into
/// guarded memory; the read buffer is zeroed.
enum PINReader {
    enum Source {
        case terminal
        case fd(Int32)
    }

    static let maxLength = 1024

    static func read(prompt: String, from source: Source) throws -> SecretBytes {
        switch source {
        case .fd(let fd):
            defer { Descriptors.finished(fd) }
            return try readLine(fd: fd, label: fd == 0 ? "stdin" : "file descriptor \(fd)")
        case .terminal:
            let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
            guard tty >= 0 else {
                throw Nu11Error(.invalidArgument, "no terminal to ask for the PIN",
                                remedy: .frontEnd("pass it on a file descriptor with --pin-fd N or on stdin with --pin-stdin"))
            }
            defer { close(tty) }
            _ = prompt.withCString { write(tty, $0, strlen($0)) }
            var saved = termios()
            let canSilence = tcgetattr(tty, &saved) == 0
            if canSilence {
                var silent = saved
                silent.c_lflag &= ~tcflag_t(ECHO)
                silent.c_lflag |= tcflag_t(ECHONL)
                _ = tcsetattr(tty, TCSAFLUSH, &silent)
            }
            defer {
                if canSilence {
                    var restore = saved
                    _ = tcsetattr(tty, TCSAFLUSH, &restore)
                }
            }
            return try readLine(fd: tty, label: "the terminal")
        }
    }

    /// Asks twice on a terminal (new PINs); reads once from a descriptor.
    /// `isPIN`: a PIN a thief tries first is refused (an archive password has its own floor).
    static func readNew(prompt: String, from source: Source, isPIN: Bool = true) throws -> SecretBytes {
        let first = try read(prompt: prompt, from: source)
        guard first.count >= 4 else {
            throw Nu11Error(.invalidArgument, "the PIN or passphrase is too short", remedy: .longerPIN)
        }
        if isPIN { try Strength.refuseCommonPIN(first) }
        if case .terminal = source {
            let second = try read(prompt: "Repeat to confirm: ", from: source)
            guard first.constantTimeEquals(second) else {
                throw Nu11Error(.invalidArgument, "the two entries differ", remedy: .frontEnd("type the same PIN twice"))
            }
        }
        return first
    }

    /// A name (title, album) from a descriptor, one line: it never appears in argv, where
    /// /proc/PID/cmdline shows it to every user of the machine.
    static func readName(fd: Int32, what: String) throws -> String {
        defer { Descriptors.finished(fd) }
        let line = try readLine(fd: fd, label: "file descriptor \(fd)")
        guard let text = line.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else {
            throw Nu11Error(.invalidArgument, "the \(what) on file descriptor \(fd) is not UTF-8 text", remedy: .frontEnd("write it as UTF-8"))
        }
        return text
    }

    static var hasTerminal: Bool {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { return false }
        close(tty)
        return true
    }

    /// One line from a descriptor; nil for an empty line or the end.
    static func readOptional(fd: Int32) throws -> SecretBytes? {
        do { return try readLine(fd: fd, label: "file descriptor \(fd)") } catch let error as Nu11Error where error.code == .invalidArgument && error.message.hasPrefix("no PIN") {
            return nil
        }
    }

    /// One line from the terminal, echo off; nil for an empty line.
    static func readOptionalFromTerminal(prompt: String) throws -> SecretBytes? {
        do { return try read(prompt: prompt, from: .terminal) } catch let error as Nu11Error where error.code == .invalidArgument && error.message.hasPrefix("no PIN") {
            return nil
        }
    }

    /// One line, byte by byte, so nothing after the newline is consumed.
    static func readLine(fd: Int32, label: String) throws -> SecretBytes {
        var buffer = [UInt8](repeating: 0, count: maxLength)
        defer { secureZero(&buffer) }
        var count = 0
        var byte: UInt8 = 0
        while true {
            let n: Int
            do { n = try withUnsafeMutableBytes(of: &byte) { one in try SystemIO.read(fd, into: one) } } catch {
                throw Nu11Error(.io, "cannot read the PIN from \(label)", remedy: .frontEnd("check the descriptor is open for reading"))
            }
            if n == 0 || byte == UInt8(ascii: "\n") { break }
            guard count < maxLength else {
                throw Nu11Error(.invalidArgument, "the PIN or passphrase is longer than \(maxLength) bytes")
            }
            buffer[count] = byte
            count += 1
        }
        byte = 0
        if count > 0 && buffer[count - 1] == UInt8(ascii: "\r") { count -= 1 }
        guard count > 0 else {
            throw Nu11Error(.invalidArgument, "no PIN or passphrase was given on \(label)", remedy: .frontEnd("write it followed by a newline"))
        }
        return buffer.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }
}

/// Descriptors given on the command line for secrets (`--pin-fd`, `--new-pin-fd`, …) are
/// closed as soon as their last line is read, so nothing started later (the image helper, an
/// editor, a viewer) can inherit them — besides every child starting with 0, 1 and 2 only.
/// A descriptor named by several options is closed after the last of them has read it.
enum Descriptors {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var reads: [Int32: Int] = [:]

    /// How many `--…-fd` options name `fd` on this command line.
    static func named(_ fd: Int32, in arguments: [String] = CommandLine.arguments) -> Int {
        var count = 0
        for (i, arg) in arguments.enumerated() where arg.hasPrefix("--") {
            if arg.hasSuffix("-fd"), i + 1 < arguments.count, Int32(arguments[i + 1]) == fd { count += 1 }
            if let eq = arg.firstIndex(of: "="), arg[..<eq].hasSuffix("-fd"), Int32(arg[arg.index(after: eq)...]) == fd { count += 1 }
        }
        return count
    }

    static func finished(_ fd: Int32) {
        guard fd > 2 else { return }
        lock.lock()
        defer { lock.unlock() }
        let done = (reads[fd] ?? 0) + 1
        reads[fd] = done
        if done >= max(1, named(fd)) { close(fd) }
    }
}
