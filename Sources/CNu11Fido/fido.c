// SPDX-License-Identifier: GPL-3.0-or-later
// Nu11VLT's face over libfido2: see include/nu11fido.h.
#define _GNU_SOURCE
#include "nu11fido.h"

#include <fido.h>
#include <openssl/rand.h>
#include <string.h>

#ifdef N11FIDO_TEST_TRANSPORT
#include "transport.h"
#endif

int n11fido_test_transport_built(void) {
#ifdef N11FIDO_TEST_TRANSPORT
    return 1;
#else
    return 0;
#endif
}

static void init_once(void) {
    static int done;
    if (!done) {
        fido_init(0);
        done = 1;
    }
}

/// A new, open device for `path`; NULL with *rc set when it cannot be opened.
static fido_dev_t *open_dev(const char *path, int *rc) {
    init_once();
    fido_dev_t *dev = fido_dev_new();
    if (dev == NULL) {
        *rc = FIDO_ERR_INTERNAL;
        return NULL;
    }
    if (strncmp(path, "unix:", 5) == 0) {
#ifdef N11FIDO_TEST_TRANSPORT
        if ((*rc = n11fido_use_unix_transport(dev)) != FIDO_OK) {
            fido_dev_free(&dev);
            return NULL;
        }
        path += 5;
#else
        *rc = N11FIDO_ERR_TEST_TRANSPORT;
        fido_dev_free(&dev);
        return NULL;
#endif
    }
    if ((*rc = fido_dev_open(dev, path)) != FIDO_OK) {
        fido_dev_free(&dev);
        return NULL;
    }
    // A touch is awaited for at most 30 s.
    fido_dev_set_timeout(dev, 30000);
    return dev;
}

static void close_dev(fido_dev_t *dev) {
    fido_dev_close(dev);
    fido_dev_free(&dev);
}

int n11fido_first_device(char *path, size_t path_len) {
    init_once();
    fido_dev_info_t *list = fido_dev_info_new(8);
    size_t found = 0;
    if (list == NULL) return FIDO_ERR_INTERNAL;
    int rc = fido_dev_info_manifest(list, 8, &found);
    if (rc == FIDO_OK && found == 0) rc = N11FIDO_ERR_NO_DEVICE;
    if (rc == FIDO_OK) {
        const char *p = fido_dev_info_path(fido_dev_info_ptr(list, 0));
        if (p == NULL || strlen(p) + 1 > path_len) rc = N11FIDO_ERR_TOO_LONG;
        else memcpy(path, p, strlen(p) + 1);
    }
    fido_dev_info_free(&list, 8);
    return rc;
}

int n11fido_info(const char *path, int *has_pin, int *retries) {
    int rc;
    fido_dev_t *dev = open_dev(path, &rc);
    if (dev == NULL) return rc;
    *has_pin = fido_dev_has_pin(dev) ? 1 : 0;
    *retries = -1;
    if (*has_pin) rc = fido_dev_get_retry_count(dev, retries);
    close_dev(dev);
    return rc;
}

static int random_hash(uint8_t hash[32]) { return RAND_bytes(hash, 32) == 1 ? FIDO_OK : FIDO_ERR_INTERNAL; }

int n11fido_make_credential(const char *path, const char *pin, const uint8_t user_id[16],
                            uint8_t *cred_id, size_t *cred_len) {
    int rc;
    uint8_t hash[32];
    if ((rc = random_hash(hash)) != FIDO_OK) return rc;
    fido_cred_t *cred = fido_cred_new();
    if (cred == NULL) return FIDO_ERR_INTERNAL;
    if ((rc = fido_cred_set_type(cred, COSE_ES256)) != FIDO_OK ||
        (rc = fido_cred_set_clientdata_hash(cred, hash, sizeof hash)) != FIDO_OK ||
        (rc = fido_cred_set_rp(cred, N11FIDO_RP_ID, "Nu11VLT")) != FIDO_OK ||
        (rc = fido_cred_set_user(cred, user_id, 16, "vault", "Nu11VLT vault", NULL)) != FIDO_OK ||
        (rc = fido_cred_set_extensions(cred, FIDO_EXT_HMAC_SECRET)) != FIDO_OK ||
        (rc = fido_cred_set_rk(cred, FIDO_OPT_FALSE)) != FIDO_OK) {
        fido_cred_free(&cred);
        return rc;
    }
    fido_dev_t *dev = open_dev(path, &rc);
    if (dev == NULL) {
        fido_cred_free(&cred);
        return rc;
    }
    rc = fido_dev_make_cred(dev, cred, pin);
    close_dev(dev);
    if (rc == FIDO_OK && !(fido_cred_flags(cred) & 0x80)) rc = N11FIDO_ERR_NO_SECRET;  // ED: extensions answered
    if (rc == FIDO_OK) {
        size_t n = fido_cred_id_len(cred);
        if (n == 0 || n > *cred_len) rc = N11FIDO_ERR_TOO_LONG;
        else {
            memcpy(cred_id, fido_cred_id_ptr(cred), n);
            *cred_len = n;
        }
    }
    fido_cred_free(&cred);
    return rc;
}

/// A new assertion request for the credential, with a random client-data hash; NULL with *rc set.
static fido_assert_t *new_assert(const uint8_t *cred_id, size_t cred_len, fido_opt_t presence, int *rc) {
    uint8_t hash[32];
    if ((*rc = random_hash(hash)) != FIDO_OK) return NULL;
    fido_assert_t *assert = fido_assert_new();
    if (assert == NULL) {
        *rc = FIDO_ERR_INTERNAL;
        return NULL;
    }
    if ((*rc = fido_assert_set_clientdata_hash(assert, hash, sizeof hash)) != FIDO_OK ||
        (*rc = fido_assert_set_rp(assert, N11FIDO_RP_ID)) != FIDO_OK ||
        (*rc = fido_assert_allow_cred(assert, cred_id, cred_len)) != FIDO_OK ||
        (*rc = fido_assert_set_up(assert, presence)) != FIDO_OK) {
        fido_assert_free(&assert);
        return NULL;
    }
    return assert;
}

/// Sends the request to the device at `path`.
static int send_assert(const char *path, fido_assert_t *assert, const char *pin) {
    int rc;
    fido_dev_t *dev = open_dev(path, &rc);
    if (dev == NULL) return rc;
    rc = fido_dev_get_assert(dev, assert, pin);
    close_dev(dev);
    return rc;
}

int n11fido_hmac_secret(const char *path, const char *pin, const uint8_t *cred_id, size_t cred_len,
                        const uint8_t salt[32], uint8_t out[32]) {
    int rc;
    fido_assert_t *assert = new_assert(cred_id, cred_len, FIDO_OPT_TRUE, &rc);
    if (assert == NULL) return rc;
    if ((rc = fido_assert_set_extensions(assert, FIDO_EXT_HMAC_SECRET)) == FIDO_OK &&
        (rc = fido_assert_set_hmac_salt(assert, salt, 32)) == FIDO_OK)
        rc = send_assert(path, assert, pin);
    if (rc == FIDO_OK) {
        if (fido_assert_count(assert) != 1 || fido_assert_hmac_secret_len(assert, 0) != 32) rc = N11FIDO_ERR_NO_SECRET;
        else if (pin != NULL && !(fido_assert_flags(assert, 0) & 0x04)) rc = N11FIDO_ERR_NO_SECRET;  // UV asked, not done
        else memcpy(out, fido_assert_hmac_secret_ptr(assert, 0), 32);
    }
    fido_assert_free(&assert);  // libfido2 clears the secret it held (freezero)
    return rc;
}

int n11fido_has_credential(const char *path, const uint8_t *cred_id, size_t cred_len) {
    int rc;
    fido_assert_t *assert = new_assert(cred_id, cred_len, FIDO_OPT_FALSE, &rc);
    if (assert == NULL) return rc;
    rc = send_assert(path, assert, NULL);
    fido_assert_free(&assert);
    return rc;
}

const char *n11fido_describe(int code) {
    switch (code) {
    case N11FIDO_ERR_TEST_TRANSPORT: return "the software authenticator's transport is not in release builds";
    case N11FIDO_ERR_NO_DEVICE: return "no security key found";
    case N11FIDO_ERR_TOO_LONG: return "the security key's credential ID is too long";
    case N11FIDO_ERR_NO_SECRET: return "the security key did not return the hmac-secret";
    default: return fido_strerr(code);
    }
}
