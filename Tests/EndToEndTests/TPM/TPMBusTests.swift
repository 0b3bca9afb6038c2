// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The bus between nu11vlt and the TPM, as someone who can watch it would see it (an
/// interposer on the LPC/SPI bus of a laptop): a proxy in front of swtpm records every
/// command. The TPM2_Unseal that releases a slot's secret must run in a session that encrypts
/// its response parameter, so the secret never crosses the bus in clear.
@Suite("the TPM bus")
struct TPMBusTests {
    /// A Unix-socket proxy (data and control channel) that appends what the client sends on
    /// the data channel to LOG, connection by connection.
    static let proxy = """
        import os, socket, sys, threading
        listen, target, log = sys.argv[1], sys.argv[2], sys.argv[3]
        lock = threading.Lock()
        def pump(src, dst, record):
            try:
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    if record:
                        with lock, open(log, "ab") as f:
                            f.write(data)
                    dst.sendall(data)
            except OSError:
                pass
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        def serve(path, to, record):
            srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            srv.bind(path)
            srv.listen(16)
            while True:
                client, _ = srv.accept()
                upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                upstream.connect(to)
                threading.Thread(target=pump, args=(client, upstream, record), daemon=True).start()
                threading.Thread(target=pump, args=(upstream, client, False), daemon=True).start()
        threading.Thread(target=serve, args=(listen + ".ctrl", target + ".ctrl", False), daemon=True).start()
        threading.Thread(target=serve, args=(listen, target, True), daemon=True).start()
        open(listen + ".ready", "w").close()
        threading.Event().wait()
        """

    /// The session attributes of every TPM2_Unseal command in a stream of raw TPM commands.
    static func unsealSessionAttributes(_ stream: [UInt8]) -> (unseals: [UInt8], commands: Int) {
        func u16(_ i: Int) -> Int { Int(stream[i]) << 8 | Int(stream[i + 1]) }
        func u32(_ i: Int) -> Int { u16(i) << 16 | u16(i + 2) }
        var at = 0, commands = 0
        var attributes: [UInt8] = []
        while at + 10 <= stream.count {
            let tag = u16(at), size = u32(at + 2), code = u32(at + 6)
            guard tag == 0x8001 || tag == 0x8002, size >= 10, at + size <= stream.count else { break }
            commands += 1
            if code == 0x15E, tag == 0x8002, size >= 10 + 4 + 4 + 4 + 2 {
                // header(10), itemHandle(4), authorizationSize(4), then the session:
                // sessionHandle(4), nonceCaller(TPM2B), sessionAttributes(1), hmac(TPM2B)
                let nonce = u16(at + 10 + 4 + 4 + 4)
                attributes.append(stream[at + 10 + 4 + 4 + 4 + 2 + nonce])
            }
            at += size
        }
        return (attributes, commands)
    }

    @Test("TPM2_Unseal runs in a session that encrypts its response: the slot's secret never crosses the bus in clear",
          .enabled(if: SoftwareTPM.available))
    func unsealIsEncrypted() throws {
        let tpm = try SoftwareTPM()
        let cli = try CLI(pin: "482913")
        let proxySocket = tpm.dir + "/proxy"
        let log = tpm.dir + "/bus.log"
        let proxy = try Program.start("/usr/bin/python3", ["-c", Self.proxy, proxySocket, tpm.dir + "/sock", log])
        // SIGKILL: a child of the test runner may start with SIGTERM blocked.
        defer { kill(proxy.processIdentifier, SIGKILL); proxy.waitUntilExit() }
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: proxySocket + ".ready") { usleep(25_000) }
        try #require(FileManager.default.fileExists(atPath: proxySocket + ".ready"), "the proxy did not start")
        _ = try cli.initTPMVault(tpm)
        cli.environment["NU11VLT_TPM_TCTI"] = "swtpm:path=\(proxySocket)"
        let listed = try cli.run(["list"], pinStdin: true)
        #expect(listed.code == 0, "unlock through the proxy: \(listed.stderr)")
        let stream = [UInt8](try Data(contentsOf: URL(fileURLWithPath: log)))
        let (unseals, commands) = Self.unsealSessionAttributes(stream)
        #expect(commands > 5, "the proxy saw \(commands) commands: the stream is not raw TPM commands")
        try #require(!unseals.isEmpty, "no TPM2_Unseal crossed the proxy")
        for attributes in unseals {
            #expect(attributes & 0x40 != 0, "TPM2_Unseal without TPMA_SESSION_ENCRYPT (attributes 0x\(String(attributes, radix: 16)))")
        }
    }
}
