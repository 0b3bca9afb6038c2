// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef NU11FIDO_H
#define NU11FIDO_H
#include <stddef.h>
#include <stdint.h>

/// A small, fixed C face over libfido2 (Debian libfido2-dev) for Nu11VLT's security keys:
/// one credential with the `hmac-secret` extension per enrolled key, and the secret it gives
/// back for a salt. Every call opens the device, does its work and closes it again.
///
/// A device path is a hidraw path as libfido2 lists it ("/dev/hidraw3"), or — in debug
/// builds only, for the project's software authenticator — "unix:" followed by the path of
/// an AF_UNIX socket (libfido2's custom-transport hooks; see docs/FORMAT.md §4.2d). Release
/// builds refuse "unix:" with N11FIDO_ERR_TEST_TRANSPORT.
///
/// Return values: 0 (FIDO_OK) or a libfido2 error (negative or CTAP status), or one of these.
#define N11FIDO_ERR_TEST_TRANSPORT (-100)  /* "unix:" in a release build */
#define N11FIDO_ERR_NO_DEVICE      (-101)  /* no security key is plugged in */
#define N11FIDO_ERR_TOO_LONG       (-102)  /* a credential ID longer than the caller's buffer */
#define N11FIDO_ERR_NO_SECRET      (-103)  /* the key answered without the hmac-secret */

/// The relying party every Nu11VLT credential belongs to.
#define N11FIDO_RP_ID "io.nu11vlt.vault"

/// Whether this build accepts "unix:" paths.
int n11fido_test_transport_built(void);

/// The first security key libfido2 finds (hidraw); N11FIDO_ERR_NO_DEVICE when there is none.
int n11fido_first_device(char *path, size_t path_len);

/// Whether the key has a PIN set (clientPin option), in `has_pin`, and its PIN retries left
/// (-1 when it has no PIN).
int n11fido_info(const char *path, int *has_pin, int *retries);

/// Creates a non-resident ES256 credential with hmac-secret for `user_id` (touch needed; the
/// key's PIN when it has one, `pin` NUL-terminated or NULL). Writes the credential ID.
int n11fido_make_credential(const char *path, const char *pin, const uint8_t user_id[16],
                            uint8_t *cred_id, size_t *cred_len);

/// Asks the key for its hmac-secret over `salt` for the credential (touch needed). With `pin`
/// the key verifies its user (its PIN): the secret is the credential's "with UV" one, which a
/// touch alone never gives.
int n11fido_hmac_secret(const char *path, const char *pin, const uint8_t *cred_id, size_t cred_len,
                        const uint8_t salt[32], uint8_t out[32]);

/// Whether the key holds the credential, asked silently (no touch: user presence off, as
/// systemd's pre-flight check does). 0 = it does; FIDO_ERR_NO_CREDENTIALS = it does not.
int n11fido_has_credential(const char *path, const uint8_t *cred_id, size_t cred_len);

/// libfido2's name for an error.
const char *n11fido_describe(int code);

#endif
