// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation

/// One recipient stanza: `-> arg…` then a base64 body wrapped at 64 columns.
public struct AgeStanza: Sendable, Equatable {
    public var arguments: [String]
    public var body: [UInt8]

    public init(arguments: [String], body: [UInt8]) {
        self.arguments = arguments
        self.body = body
    }

    public var type: String { arguments.first ?? "" }

    /// The stanza's exact bytes, ending with its final (short, possibly empty) body line.
    func encoded() -> [UInt8] {
        var out = Array("-> ".utf8) + Array(arguments.joined(separator: " ").utf8) + [0x0A]
        let text = AgeBase64.encode(body)
        var index = 0
        repeat {
            let line = text[index..<min(index + 64, text.count)]
            out += line
            out.append(0x0A)
            index += 64
            if line.count < 64 { break }
        } while true
        return out
    }
}

/// The header of an age v1 file: the stanzas and the MAC over everything before it.
struct AgeHeader {
    static let versionLine = Array("age-encryption.org/v1".utf8)
    static let versionPrefix = Array("age-encryption.org/".utf8)
    /// Generous bounds for a header read from an untrusted file: a post-quantum stanza's
    /// argument line is about 1,500 bytes.
    static let lineLimit = 16 << 10
    static let stanzaLimit = 1024

    var stanzas: [AgeStanza]
    var mac: [UInt8]
    /// The bytes the MAC covers: the header up to and including "---".
    var macInput: [UInt8]

    static func hmacKey(fileKey: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: [UInt8](), info: Array("header".utf8), outputByteCount: 32)
    }

    static func computeMAC(_ input: [UInt8], fileKey: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: input, using: hmacKey(fileKey: fileKey)))
    }

    /// The whole header, MAC line included.
    static func encode(stanzas: [AgeStanza], fileKey: SymmetricKey) -> [UInt8] {
        var out = versionLine + [0x0A]
        for stanza in stanzas { out += stanza.encoded() }
        out += Array("---".utf8)
        let mac = computeMAC(out, fileKey: fileKey)
        out += [0x20] + AgeBase64.encode(mac) + [0x0A]
        return out
    }

    func verify(fileKey: SymmetricKey) throws {
        let expected = Self.computeMAC(macInput, fileKey: fileKey)
        guard expected.withUnsafeBytes({ e in mac.withUnsafeBytes { Sodium.constantTimeEqual(e, $0) } }) else {
            throw AgeError.headerMAC
        }
    }

    /// Parses a header, leaving `reader` at the first payload byte.
    static func parse<S: ByteSource>(_ reader: inout AgeReader<S>) throws -> AgeHeader {
        var consumed = [UInt8]()
        func line() throws -> [UInt8] {
            guard let (line, terminated) = try reader.readLine(limit: lineLimit, tooLong: AgeError.header("a header line is too long")),
                  terminated else {
                throw AgeError.header(consumed.isEmpty ? "the file is empty or not an age file" : "the header ends early")
            }
            return line
        }
        let version = try line()
        guard version == versionLine else {
            if version.starts(with: versionPrefix) { throw AgeError.unsupported("age format version is not v1") }
            throw AgeError.header("not an age file (no age-encryption.org/v1 line)")
        }
        consumed = version + [0x0A]
        var stanzas = [AgeStanza]()
        while true {
            let current = try line()
            if current.starts(with: Array("---".utf8)) {
                guard !stanzas.isEmpty else { throw AgeError.header("the header has no recipient stanza") }
                let encodedMAC = current.dropFirst(3)
                guard encodedMAC.first == 0x20, encodedMAC.count == 44,
                      let mac = AgeBase64.decode(encodedMAC.dropFirst()), mac.count == 32 else {
                    throw AgeError.header("the MAC line is malformed")
                }
                return AgeHeader(stanzas: stanzas, mac: mac, macInput: consumed + Array("---".utf8))
            }
            guard current.starts(with: Array("-> ".utf8)) else { throw AgeError.header("a line is neither a stanza nor the MAC") }
            guard stanzas.count < stanzaLimit else { throw AgeError.header("too many stanzas") }
            consumed += current + [0x0A]
            let arguments = current.dropFirst(3).split(separator: 0x20, omittingEmptySubsequences: false)
            guard !arguments.isEmpty, arguments.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 >= 0x21 && $0 <= 0x7E } }) else {
                throw AgeError.header("a stanza has an empty or invalid argument")
            }
            var text = [UInt8]()
            while true {
                let bodyLine = try line()
                consumed += bodyLine + [0x0A]
                guard bodyLine.count <= 64, bodyLine.allSatisfy(AgeBase64.isAlphabet) else {
                    throw AgeError.header("a stanza body line is malformed")
                }
                text += bodyLine
                if bodyLine.count < 64 { break }
                guard text.count <= lineLimit else { throw AgeError.header("a stanza body is too long") }
            }
            guard let body = AgeBase64.decode(text) else { throw AgeError.header("a stanza body is not canonical base64") }
            stanzas.append(AgeStanza(arguments: arguments.map { String(decoding: $0, as: UTF8.self) }, body: body))
        }
    }
}
