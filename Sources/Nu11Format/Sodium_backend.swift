// SPDX-License-Identifier: GPL-3.0-or-later
// The boundary to libsodium. Everything C stays in this file and in SecretBytes.swift;
// failures are translated into Nu11Error here.
import CSodium

enum Sodium {
    /// sodium_init() is idempotent and thread-safe; a global let runs it once, lazily.
    static let ready: Bool = sodium_init() >= 0

    static func ensureReady() throws {
        guard ready else {
            throw Nu11Error(.internalError, "libsodium failed to initialise",
                            remedy: .advice(.reinstallSodium))
        }
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        _ = ready
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
        return out
    }

    static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
        _ = ready
        if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
    }

    static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
    }

    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let pa = a.baseAddress, let pb = b.baseAddress else { return a.count == 0 }
        return sodium_memcmp(pa, pb, a.count) == 0
    }

    /// Argon2id v1.3 through crypto_pwhash. `memoryBytes` and `iterations` are validated
    /// by the caller; libsodium's own limits are checked again here.
    static func argon2id(output: UnsafeMutableRawBufferPointer, password: UnsafeRawBufferPointer,
                         salt: [UInt8], iterations: UInt64, memoryBytes: Int) throws {
        try ensureReady()
        guard salt.count == Int(crypto_pwhash_saltbytes()) else {
            throw Nu11Error(.invalidArgument, "Argon2id salt must be \(crypto_pwhash_saltbytes()) bytes")
        }
        guard let out = output.baseAddress else {
            throw Nu11Error(.internalError, "Argon2id output buffer is empty")
        }
        guard let pw = password.baseAddress?.assumingMemoryBound(to: CChar.self), password.count > 0 else {
            throw Nu11Error(.invalidArgument, "the PIN or passphrase is empty", remedy: .longerPIN)
        }
        let status = salt.withUnsafeBytes { saltBuffer -> Int32 in
            guard let s = saltBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return -1 }
            return crypto_pwhash(
                out.assumingMemoryBound(to: UInt8.self), UInt64(output.count),
                pw, UInt64(password.count), s,
                iterations, memoryBytes, crypto_pwhash_alg_argon2id13())
        }
        guard status == 0 else {
            throw Nu11Error(.io, "Argon2id could not allocate \(memoryBytes / (1024 * 1024)) MiB",
                            remedy: .lowerKDFMemory)
        }
    }

    static var argon2MinimumIterations: UInt64 { UInt64(crypto_pwhash_argon2id_opslimit_min()) }
}

extension Sodium {
    /// ChaCha20-Poly1305 (IETF, RFC 8439) sealing straight between buffers: no copies.
    /// `output` must hold plaintext.count + 16 bytes (ciphertext, then the tag).
    static func chachaSeal(_ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
                           associatedData: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
                           into output: UnsafeMutableRawBufferPointer) throws {
        _ = ready  // picks the vectorised ChaCha20 and Poly1305
        guard key.count == 32, nonce.count == 12, output.count == plaintext.count + 16,
              let k = key.baseAddress, let n = nonce.baseAddress, let out = output.baseAddress else {
            throw Nu11Error(.internalError, "ChaCha20-Poly1305: bad buffer sizes")
        }
        let c = out.assumingMemoryBound(to: UInt8.self)
        let rc = crypto_aead_chacha20poly1305_ietf_encrypt_detached(
            c, c + plaintext.count, nil,
            plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
            associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
            nil, n.assumingMemoryBound(to: UInt8.self), k.assumingMemoryBound(to: UInt8.self))
        guard rc == 0 else { throw Nu11Error(.internalError, "ChaCha20-Poly1305 sealing failed") }
    }

    /// Opens ciphertext||tag into `output` (ciphertext.count - 16 bytes); nothing usable is
    /// left in `output` on failure.
    static func chachaOpen(_ ciphertext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
                           associatedData: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
                           into output: UnsafeMutableRawBufferPointer) throws {
        _ = ready
        guard key.count == 32, nonce.count == 12, ciphertext.count >= 16, output.count == ciphertext.count - 16,
              let k = key.baseAddress, let n = nonce.baseAddress, let c = ciphertext.baseAddress else {
            throw Nu11Error(.corrupted, "ChaCha20-Poly1305: bad buffer sizes")
        }
        let body = ciphertext.count - 16
        let rc = crypto_aead_chacha20poly1305_ietf_decrypt_detached(
            output.baseAddress?.assumingMemoryBound(to: UInt8.self), nil,
            c.assumingMemoryBound(to: UInt8.self), UInt64(body),
            c.assumingMemoryBound(to: UInt8.self) + body,
            associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
            n.assumingMemoryBound(to: UInt8.self), k.assumingMemoryBound(to: UInt8.self))
        guard rc == 0 else {
            if let base = output.baseAddress { sodium_memzero(base, output.count) }
            throw Nu11Error(.corrupted, "ChaCha20-Poly1305 authentication failed")
        }
    }
}

extension Sodium {
    /// HKDF-Expand (RFC 5869) with HMAC-SHA-512 into `output` (at most 255 blocks of 64 bytes):
    /// T(i) = HMAC(PRK, T(i-1) || info || i). The keyed state is made once and copied for each
    /// block; every intermediate is zeroed.
    static func hkdfSHA512Expand(prk: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
                                 into output: UnsafeMutableRawBufferPointer) throws {
        _ = ready
        guard output.count <= 255 * 64, let out = output.baseAddress else {
            throw Nu11Error(.internalError, "HKDF-SHA-512: \(output.count) bytes asked for")
        }
        var keyed = crypto_auth_hmacsha512_state()
        var state = crypto_auth_hmacsha512_state()
        var block = [UInt8](repeating: 0, count: 64)
        defer {
            withUnsafeMutableBytes(of: &keyed) { zero($0) }
            withUnsafeMutableBytes(of: &state) { zero($0) }
            block.withUnsafeMutableBytes { zero($0) }
        }
        guard let key = prk.baseAddress, crypto_auth_hmacsha512_init(&keyed, key.assumingMemoryBound(to: UInt8.self), prk.count) == 0 else {
            throw Nu11Error(.internalError, "HKDF-SHA-512: HMAC failed")
        }
        var filled = 0
        var counter: UInt8 = 1
        while filled < output.count {
            state = keyed
            if counter > 1 { crypto_auth_hmacsha512_update(&state, block, 64) }
            if let base = info.baseAddress, info.count > 0 {
                crypto_auth_hmacsha512_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(info.count))
            }
            crypto_auth_hmacsha512_update(&state, &counter, 1)
            crypto_auth_hmacsha512_final(&state, &block)
            let n = min(64, output.count - filled)
            UnsafeMutableRawBufferPointer(start: out + filled, count: n).copyBytes(from: block[0..<n])
            filled += n
            counter &+= 1
        }
    }
}

extension Sodium {
    /// scrypt (RFC 7914) with N = 2^logN, r and p, through libsodium's low-level entry point.
    static func scrypt(output: UnsafeMutableRawBufferPointer, password: UnsafeRawBufferPointer, salt: [UInt8],
                       logN: Int, r: UInt32, p: UInt32) throws {
        try ensureReady()
        guard let out = output.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw Nu11Error(.internalError, "scrypt output buffer is empty")
        }
        var empty: UInt8 = 0
        let status = salt.withUnsafeBytes { saltBuffer -> Int32 in
            guard let s = saltBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return -1 }
            return withUnsafeMutablePointer(to: &empty) { fallback in
                let pw = password.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(fallback)
                return crypto_pwhash_scryptsalsa208sha256_ll(pw, password.count, s, salt.count,
                                                            UInt64(1) << UInt64(logN), r, p, out, output.count)
            }
        }
        guard status == 0 else {
            throw Nu11Error(.io, "scrypt could not allocate \((128 << logN) >> 20) MiB", remedy: .lowerKDFMemory)
        }
    }
}
