// SPDX-License-Identifier: GPL-3.0-or-later
// OpenSSL EVP AEAD between caller buffers, with no allocation per chunk.
#include "nu11cipher.h"
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>

struct n11c_ctx {
    EVP_CIPHER_CTX *enc;
    EVP_CIPHER_CTX *dec;
};

static const EVP_CIPHER *cipher_for(int algorithm) {
    switch (algorithm) {
    case N11C_CHACHA20_POLY1305: return EVP_chacha20_poly1305();
    case N11C_AES_256_GCM: return EVP_aes_256_gcm();
    default: return NULL;
    }
}

n11c_ctx *n11c_new(int algorithm, const uint8_t key[32]) {
    const EVP_CIPHER *cipher = cipher_for(algorithm);
    if (cipher == NULL || key == NULL) return NULL;
    n11c_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) return NULL;
    ctx->enc = EVP_CIPHER_CTX_new();
    ctx->dec = EVP_CIPHER_CTX_new();
    if (ctx->enc == NULL || ctx->dec == NULL
        || EVP_EncryptInit_ex(ctx->enc, cipher, NULL, key, NULL) != 1
        || EVP_DecryptInit_ex(ctx->dec, cipher, NULL, key, NULL) != 1) {
        n11c_free(ctx);
        return NULL;
    }
    return ctx;
}

void n11c_free(n11c_ctx *ctx) {
    if (ctx == NULL) return;
    EVP_CIPHER_CTX_free(ctx->enc);  // cleanses the key schedule
    EVP_CIPHER_CTX_free(ctx->dec);
    free(ctx);
}

int n11c_seal(n11c_ctx *ctx, const uint8_t nonce[12], const uint8_t *in, size_t length, uint8_t *out, uint8_t tag[16]) {
    if (ctx == NULL || nonce == NULL || tag == NULL || length > INT_MAX) return -1;
    if ((length > 0 && (in == NULL || out == NULL))) return -1;
    int n = 0, m = 0;
    if (EVP_EncryptInit_ex(ctx->enc, NULL, NULL, NULL, nonce) != 1) return -1;
    if (length > 0 && EVP_EncryptUpdate(ctx->enc, out, &n, in, (int)length) != 1) return -1;
    uint8_t spare[16];
    if (EVP_EncryptFinal_ex(ctx->enc, length > 0 ? out + n : spare, &m) != 1 || (size_t)(n + m) != length) return -1;
    if (EVP_CIPHER_CTX_ctrl(ctx->enc, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1) return -1;
    return 0;
}

int n11c_open(n11c_ctx *ctx, const uint8_t nonce[12], const uint8_t *in, size_t length, const uint8_t tag[16], uint8_t *out) {
    if (ctx == NULL || nonce == NULL || tag == NULL || length > INT_MAX) return -1;
    if ((length > 0 && (in == NULL || out == NULL))) return -1;
    int n = 0, m = 0, ok = 0;
    uint8_t expected[16], spare[16];
    for (int i = 0; i < 16; i++) expected[i] = tag[i];
    if (EVP_DecryptInit_ex(ctx->dec, NULL, NULL, NULL, nonce) == 1
        && EVP_CIPHER_CTX_ctrl(ctx->dec, EVP_CTRL_AEAD_SET_TAG, 16, expected) == 1
        && (length == 0 || EVP_DecryptUpdate(ctx->dec, out, &n, in, (int)length) == 1)
        && EVP_DecryptFinal_ex(ctx->dec, length > 0 ? out + n : spare, &m) == 1
        && (size_t)(n + m) == length) {
        ok = 1;
    }
    if (!ok && length > 0 && out != NULL) OPENSSL_cleanse(out, length);
    return ok ? 0 : -1;
}

const char *n11c_version(void) { return OpenSSL_version(OPENSSL_VERSION); }

// ---- batches of chunks, guarded against faults on a file mapping ----

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static __thread sigjmp_buf *guard_jump;
static struct sigaction previous_bus;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;

static void on_bus(int sig, siginfo_t *info, void *context) {
    if (guard_jump != NULL) siglongjmp(*guard_jump, 1);
    // Not ours: hand the signal back to whoever had it (the fault happens again there).
    sigaction(SIGBUS, &previous_bus, NULL);
    (void)sig; (void)info; (void)context;
}

static void install_guard(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_bus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &previous_bus);
}

static void nonce_for(uint8_t out[12], const uint8_t base[12], uint64_t index) {
    memcpy(out, base, 12);
    for (int p = 11; p >= 4 && index != 0; p--, index >>= 8) out[p] ^= (uint8_t)index;
}

/// Runs `body(arg)` with faults (SIGBUS) on a file mapping turned into the result -2. The
/// jump buffer lives in this frame, which stays active while `body` runs.
static int run_guarded(int (*body)(void *), void *arg) {
    pthread_once(&guard_once, install_guard);
    sigjmp_buf jump;
    if (sigsetjmp(jump, 0) != 0) {
        guard_jump = NULL;
        return -2;
    }
    guard_jump = &jump;
    int rc = body(arg);
    guard_jump = NULL;
    return rc;
}

struct batch {
    n11c_ctx *ctx;
    const uint8_t *base_nonce;
    uint64_t first_index;
    size_t chunk;
    const uint8_t *in;
    size_t length;
    int final;
    uint8_t *out;
    size_t *opened;
    size_t *written;
};

static int seal_batch(void *arg) {
    const struct batch *b = arg;
    size_t count = b->length / b->chunk + (b->final ? 1 : 0);
    int rc = 0;
    uint8_t nonce[12];
    for (size_t j = 0; j < count && rc == 0; j++) {
        size_t n = j * b->chunk + b->chunk <= b->length ? b->chunk : b->length - j * b->chunk;
        uint8_t *o = b->out + j * (b->chunk + 16);
        nonce_for(nonce, b->base_nonce, b->first_index + j);
        rc = n11c_seal(b->ctx, nonce, n > 0 ? b->in + j * b->chunk : NULL, n, o, o + n);
    }
    return rc;
}

static int open_batch(void *arg) {
    const struct batch *b = arg;
    uint8_t nonce[12];
    size_t sealed = b->chunk + 16;
    for (size_t j = 0; j * sealed < b->length; j++) {
        size_t c = b->length - j * sealed < sealed ? b->length - j * sealed : sealed;
        if (c < 16) return -1;
        nonce_for(nonce, b->base_nonce, b->first_index + j);
        const uint8_t *i = b->in + j * sealed;
        if (n11c_open(b->ctx, nonce, c > 16 ? i : NULL, c - 16, i + c - 16, c > 16 ? b->out + j * b->chunk : NULL) != 0) return -1;
        *b->opened = j + 1;
        *b->written += c - 16;
    }
    return 0;
}

int n11c_seal_chunks(n11c_ctx *ctx, const uint8_t base_nonce[12], uint64_t first_index, size_t chunk,
                     const uint8_t *in, size_t length, int final, uint8_t *out) {
    if (ctx == NULL || base_nonce == NULL || out == NULL || chunk == 0) return -1;
    if (!final && length % chunk != 0) return -1;
    struct batch b = {ctx, base_nonce, first_index, chunk, in, length, final, out, NULL, NULL};
    return run_guarded(seal_batch, &b);
}

int n11c_open_chunks(n11c_ctx *ctx, const uint8_t base_nonce[12], uint64_t first_index, size_t chunk,
                     const uint8_t *in, size_t length, uint8_t *out, size_t *opened, size_t *written) {
    if (ctx == NULL || base_nonce == NULL || opened == NULL || written == NULL || chunk == 0) return -1;
    *opened = 0;
    *written = 0;
    struct batch b = {ctx, base_nonce, first_index, chunk, in, length, 1, out, opened, written};
    return run_guarded(open_batch, &b);
}

const uint8_t *n11c_map(int fd, uint64_t offset, size_t length) {
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || length == 0) return NULL;
    uint64_t start = offset - offset % (uint64_t)page;
    size_t span = length + (size_t)(offset - start);
    void *p = mmap(NULL, span, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, (off_t)start);
    if (p == MAP_FAILED) return NULL;
    return (const uint8_t *)p + (offset - start);
}

void n11c_unmap(const uint8_t *address, uint64_t offset, size_t length) {
    long page = sysconf(_SC_PAGESIZE);
    if (address == NULL || page <= 0) return;
    size_t lead = (size_t)(offset % (uint64_t)page);
    munmap((void *)(address - lead), length + lead);
}
