// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

/// strace output, read by the system call's name only: a line strace cannot name (the
/// "???( <detached ...>" of a thread it lost under load, "+++ exited", "--- SIG") is no call,
/// and no guess is made on it.
enum StraceLines {
    static let network: Set<String> = ["socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto",
                                       "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "getsockopt", "setsockopt",
                                       "getsockname", "getpeername", "shutdown"]

    /// The name of the call on a line of `strace -f` (with or without a PID), resumed calls too.
    static func callName(_ line: Substring) -> String? {
        let body = line.drop { $0.isNumber }.drop { $0 == " " }
        let name = body.hasPrefix("<... ") ? body.dropFirst(5).prefix { $0 != " " } : body.prefix { $0 != "(" }
        guard !name.isEmpty, name.count < body.count,
              name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }) else { return nil }
        return String(name)
    }

    /// The lines of `text` that are network system calls.
    static func networkCalls(_ text: String) -> [String] {
        text.split(separator: "\n").filter { callName($0).map(network.contains) ?? false }.map(String.init)
    }
}

@Suite("reading strace output")
struct StraceLinesTests {
    @Test("calls are told by their name: a detached thread's ??? line, exits and signals are none; resumed calls count")
    func names() {
        let trace = """
            1234  ???( <detached ...>
            1234  +++ exited with 0 +++
            1235  --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED} ---
            1236  openat(AT_FDCWD, "/etc/hosts", O_RDONLY) = 3
            1237  connect(3, {sa_family=AF_UNIX, sun_path="/tmp/x"}, 110) = 0
            1238  <... sendto resumed>) = 5
            socket(AF_INET, SOCK_STREAM, 0) = -1 EPERM
            """
        #expect(StraceLines.networkCalls(trace).count == 3)
        let names = trace.split(separator: "\n").compactMap(StraceLines.callName)
        #expect(names == ["openat", "connect", "sendto", "socket"])
    }
}
