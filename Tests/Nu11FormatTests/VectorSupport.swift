// SPDX-License-Identifier: GPL-3.0-or-later
import CNu11Zlib
import Crypto
import Foundation
@testable import Nu11Format

/// One test of the Wycheproof c2sp_chunked_encryption shape (also used by our own files).
struct ChunkedVector: Decodable {
    let tcId: Int
    let comment: String
    let key: String
    let ctx: String
    let ct: String
    let aeadKey: String?
    let baseNonce: String?
    let msgLength: Int?
    let msgSha512: String?
    let result: String
    let flags: [String]
    let expect: Expectation?
    let error: String?

    struct Expectation: Decodable {
        let itemId: String
        let domain: String
        let kind: String
    }

    var isValid: Bool { result == "valid" }
    func has(_ flag: String) -> Bool { flags.contains(flag) }
    var label: String { "tcId \(tcId) (\(comment))" }
}

struct VectorFile: Decodable {
    struct Group: Decodable { let tests: [ChunkedVector] }
    let numberOfTests: Int
    let testGroups: [Group]
    var tests: [ChunkedVector] { testGroups.flatMap(\.tests) }
}

enum Vectors {
    static func url(_ name: String) throws -> URL {
        guard let url = Bundle.module.url(forResource: "Vectors/\(name)", withExtension: nil) else {
            throw Nu11Error(.notFound, "test vector file \(name) is missing")
        }
        return url
    }

    static func load(_ name: String) throws -> VectorFile {
        try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url(name)))
    }
}

func hexBytes(_ hex: String) -> [UInt8] {
    var out = [UInt8]()
    var iterator = hex.utf8.makeIterator()
    func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case 48...57: c - 48
        case 97...102: c - 87
        case 65...70: c - 55
        default: 0
        }
    }
    while let hi = iterator.next(), let lo = iterator.next() { out.append(nibble(hi) << 4 | nibble(lo)) }
    return out
}

func sha512Hex(_ bytes: [UInt8]) -> String { Hex.encode(SHA512.hash(data: bytes)) }

/// zlib inflate (the vectors' `ct` fields are zlib-compressed).
func inflate(_ input: [UInt8]) throws -> [UInt8] {
    var stream = z_stream()
    guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
        throw Nu11Error(.internalError, "inflateInit failed")
    }
    defer { inflateEnd(&stream) }
    var output = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    var source = input
    return try source.withUnsafeMutableBufferPointer { src in
        stream.next_in = src.baseAddress
        stream.avail_in = UInt32(src.count)
        while true {
            let status = chunk.withUnsafeMutableBufferPointer { dst -> Int32 in
                stream.next_out = dst.baseAddress
                stream.avail_out = UInt32(dst.count)
                return CNu11Zlib.inflate(&stream, Z_NO_FLUSH)
            }
            output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
            if status == Z_STREAM_END { return output }
            guard status == Z_OK else { throw Nu11Error(.corrupted, "zlib inflate failed: \(status)") }
        }
    }
}

/// A source that hands out bytes a few at a time, to exercise short reads.
struct TricklingSource: ByteSource {
    var inner: MemorySource
    let step: Int
    init(_ bytes: [UInt8], step: Int) {
        inner = MemorySource(bytes)
        self.step = step
    }
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(step, buffer.count)]))
    }
}
