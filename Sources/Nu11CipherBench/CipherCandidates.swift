// SPDX-License-Identifier: GPL-3.0-or-later
import CSodium
import Crypto
import Foundation
import Nu11Format

/// The chunk-cipher implementations this platform offers, for the benchmark and the
/// cross-check test only (this target ships in no product). The content path runs on
/// OpenSSL's EVP (`ChunkSealer` in Nu11Format) because it measured fastest here (`bench/run`,
/// cipher rows); every candidate must produce the same bytes.
public enum CipherCandidate: String, CaseIterable, Sendable {
    case openssl = "OpenSSL EVP"
    case swiftCrypto = "swift-crypto (BoringSSL)"
    case libsodium = "libsodium"

    public enum Algorithm: String, CaseIterable, Sendable {
        case chacha20Poly1305 = "ChaCha20-Poly1305"
        case aes256GCM = "AES-256-GCM"
    }

    /// Whether this candidate implements `algorithm` on this machine (libsodium's AES-GCM
    /// needs AES-NI and CLMUL).
    public func supports(_ algorithm: Algorithm) -> Bool {
        guard self == .libsodium, algorithm == .aes256GCM else { return true }
        return sodiumReady && crypto_aead_aes256gcm_is_available() == 1
    }

    /// A sealer for one key: `seal(nonce, plaintext, output)` writes ciphertext ‖ tag
    /// (plaintext.count + 16 bytes), reusing whatever keyed state the library keeps.
    public func sealer(_ algorithm: Algorithm, key: [UInt8]) throws
        -> (_ nonce: [UInt8], _ plaintext: UnsafeRawBufferPointer, _ output: UnsafeMutableRawBufferPointer) throws -> Void {
        guard key.count == 32 else { throw Nu11Error(.invalidArgument, "cipher keys are 32 bytes") }
        guard supports(algorithm) else {
            throw Nu11Error(.invalidArgument, "\(rawValue) has no \(algorithm.rawValue) on this machine")
        }
        let symmetric = SymmetricKey(data: key)
        switch self {
        case .openssl:
            let cipher = try ChunkSealer(algorithm == .aes256GCM ? .aes256GCM : .chacha20Poly1305, key: symmetric)
            return { nonce, plaintext, output in try cipher.seal(plaintext, nonce: nonce, into: output) }
        case .swiftCrypto:
            return { nonce, plaintext, output in
                let (ciphertext, tag): (Data, Data)
                if algorithm == .aes256GCM {
                    let box = try AES.GCM.seal(plaintext, using: symmetric, nonce: AES.GCM.Nonce(data: nonce))
                    (ciphertext, tag) = (box.ciphertext, box.tag)
                } else {
                    let box = try ChaChaPoly.seal(plaintext, using: symmetric, nonce: ChaChaPoly.Nonce(data: nonce))
                    (ciphertext, tag) = (box.ciphertext, box.tag)
                }
                ciphertext.copyBytes(to: output.bindMemory(to: UInt8.self), count: ciphertext.count)
                tag.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: output[ciphertext.count...]).bindMemory(to: UInt8.self),
                              count: tag.count)
            }
        case .libsodium:
            return { nonce, plaintext, output in
                guard nonce.count == 12, output.count == plaintext.count + 16, let out = output.baseAddress else {
                    throw Nu11Error(.internalError, "libsodium: bad buffer sizes")
                }
                let c = out.assumingMemoryBound(to: UInt8.self)
                let p = plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self)
                let rc = key.withUnsafeBufferPointer { kb in
                    nonce.withUnsafeBufferPointer { nb -> Int32 in
                        guard let k = kb.baseAddress, let n = nb.baseAddress else { return -1 }
                        return algorithm == .aes256GCM
                            ? crypto_aead_aes256gcm_encrypt_detached(c, c + plaintext.count, nil, p, UInt64(plaintext.count),
                                                                     nil, 0, nil, n, k)
                            : crypto_aead_chacha20poly1305_ietf_encrypt_detached(c, c + plaintext.count, nil, p, UInt64(plaintext.count),
                                                                                  nil, 0, nil, n, k)
                    }
                }
                guard rc == 0 else { throw Nu11Error(.internalError, "libsodium sealing failed") }
            }
        }
    }

    /// Sealing speed in MB/s over `megabytes` of 16 KiB chunks on one core (the best of
    /// three passes, so a busy neighbour does not decide the choice).
    public func measure(_ algorithm: Algorithm, megabytes: Int = 256) throws -> Double {
        let chunk = ChunkedScheme.chunkSize
        let seal = try sealer(algorithm, key: SecureRandom.bytes(32))
        let plain = SecureRandom.bytes(chunk)
        var out = [UInt8](repeating: 0, count: chunk + 16)
        let nonce = [UInt8](repeating: 7, count: 12)
        let chunks = megabytes * 1_000_000 / chunk
        var best = 0.0
        for _ in 0..<3 {
            let start = DispatchTime.now().uptimeNanoseconds
            try plain.withUnsafeBytes { p in
                try out.withUnsafeMutableBytes { o in
                    for _ in 0..<chunks { try seal(nonce, p, o) }
                }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            best = max(best, Double(chunks * chunk) / 1e6 / seconds)
        }
        return best
    }
}

/// sodium_init() is idempotent and thread-safe; a global let runs it once, lazily.
private let sodiumReady: Bool = sodium_init() >= 0
