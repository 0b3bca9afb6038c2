// SPDX-License-Identifier: GPL-3.0-or-later
// Nu11VLT's chunk cipher backend: OpenSSL 3 libcrypto EVP (Debian libssl-dev), chosen over
// libsodium and swift-crypto's BoringSSL by measurement (bench/cipher). One context per
// message and worker: the key schedule runs once, each chunk sets only its nonce.
#ifndef NU11CIPHER_H
#define NU11CIPHER_H
#include <stddef.h>
#include <stdint.h>

enum { N11C_CHACHA20_POLY1305 = 1, N11C_AES_256_GCM = 2 };

typedef struct n11c_ctx n11c_ctx;

/// A context for `algorithm` under a 32-byte key; NULL when OpenSSL cannot make one.
n11c_ctx *n11c_new(int algorithm, const uint8_t key[32]);
/// Frees the context; OpenSSL cleanses the key schedule.
void n11c_free(n11c_ctx *ctx);
/// Seals `length` bytes of `in` into `out` (which may equal `in`) and writes the 16-byte tag
/// to `tag`. Returns 0 on success.
int n11c_seal(n11c_ctx *ctx, const uint8_t nonce[12], const uint8_t *in, size_t length, uint8_t *out, uint8_t tag[16]);
/// Opens `length` bytes of `in` into `out` (which may equal `in`) against `tag`. Returns 0
/// only when the tag is right; on failure `out` is zeroed.
int n11c_open(n11c_ctx *ctx, const uint8_t nonce[12], const uint8_t *in, size_t length, const uint8_t tag[16], uint8_t *out);
/// c2sp.org/chunked-encryption batches. Chunk i's nonce is `base_nonce` XOR i (big-endian).
///
/// Seals `length` plaintext bytes as chunks of `chunk` bytes starting at chunk `first_index`:
/// `out` receives chunk ‖ tag for each, `length + chunks * 16` bytes. When `final` is set the
/// last chunk is the short final one (`length % chunk` bytes, possibly none); otherwise
/// `length` must be a multiple of `chunk`. `in` may be a file mapping: a fault on it (the
/// file shrank underneath) returns -2 instead of killing the process. 0 on success.
int n11c_seal_chunks(n11c_ctx *ctx, const uint8_t base_nonce[12], uint64_t first_index, size_t chunk,
                     const uint8_t *in, size_t length, int final, uint8_t *out);
/// Opens `length` ciphertext bytes (chunks of `chunk + 16`, the last possibly shorter but at
/// least 16) into `out`. Returns 0 when all opened; -1 when chunk `*opened` (counted from
/// `first_index`) failed, with the plaintext of the chunks before it in `out`; -2 on a fault.
/// `*written` is the plaintext byte count of the authenticated chunks.
int n11c_open_chunks(n11c_ctx *ctx, const uint8_t base_nonce[12], uint64_t first_index, size_t chunk,
                     const uint8_t *in, size_t length, uint8_t *out, size_t *opened, size_t *written);
/// Maps `length` bytes of `fd` at `offset` (page aligned by the caller or not: the result
/// points at `offset`), read-only and populated. NULL on failure. Unmap with n11c_unmap.
const uint8_t *n11c_map(int fd, uint64_t offset, size_t length);
void n11c_unmap(const uint8_t *address, uint64_t offset, size_t length);

/// The OpenSSL version string, for the benchmark's table.
const char *n11c_version(void);

#endif
