// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef NU11TPM_H
#define NU11TPM_H
#include <stddef.h>
#include <stdint.h>

/// A small, fixed C face over tpm2-tss's ESAPI (Debian libtss2-dev) for Nu11VLT's key store.
/// Every call returns a TSS2_RC (0 = success); `n11tpm_describe` names it. Every object and
/// session a call loads is flushed before it returns; `n11tpm_close` flushes the primary key.
typedef struct n11tpm n11tpm;

/// Connects through the TCTI `conf` (e.g. "device:/dev/tpmrm0", "swtpm:path=/run/x.sock"),
/// flushes transient objects and sessions left by a killed process (without a resource
/// manager they would fill the TPM), and creates the storage primary key (ECC P-256, the
/// standard template, so the same TPM gives the same key).
uint32_t n11tpm_open(const char *conf, n11tpm **out);
void n11tpm_close(n11tpm *tpm);

/// The primary key's name (2-byte algorithm + SHA-256 of its public area): it identifies
/// the TPM's owner seed, so a key store moved to another TPM is recognised.
uint32_t n11tpm_primary_name(n11tpm *tpm, uint8_t out[34]);

/// The policy every Nu11VLT object carries, in this order: PolicyPCR over `pcr_mask`
/// (SHA-256 bank; 0 = none), PolicyCounterTimer "TPM clock < deadline" (0 = none), then
/// PolicyAuthValue (the object's auth value, counted by the dictionary-attack lockout
/// unless `no_da`).
/// With `reset_limit` set (`has_reset_limit`), PolicyCounterTimer "resetCount <= reset_limit"
/// follows the clock condition: a power cut can set the clock back to its last save, and each
/// cut is a TPM reset, so the object allows only so many of them.
typedef struct {
    uint32_t pcr_mask;
    uint64_t deadline;
    int no_da;
    int has_reset_limit;
    uint32_t reset_limit;
} n11tpm_policy;

/// Seals `secret` into a new object under the primary key (a salted session encrypts the
/// secret and auth on the bus). Writes TPM2B_PUBLIC || TPM2B_PRIVATE to `blob`.
uint32_t n11tpm_seal(n11tpm *tpm, const uint8_t *auth, size_t auth_len, const uint8_t *secret, size_t secret_len,
                     n11tpm_policy policy, uint8_t *blob, size_t cap, size_t *blob_len);

/// Loads the object and unseals it through a salted policy session (the secret crosses
/// the bus encrypted). `stage` tells where a failure happened: 1 load, 2 PCR policy,
/// 3 clock policy, 4 auth value policy, 5 unseal.
uint32_t n11tpm_unseal(n11tpm *tpm, const uint8_t *blob, size_t blob_len, const uint8_t *auth, size_t auth_len,
                       n11tpm_policy policy, uint8_t *out, size_t cap, size_t *out_len, int *stage);

/// The TPM's clock in milliseconds (advances only while the TPM is powered; never set back).
uint32_t n11tpm_clock(n11tpm *tpm, uint64_t *clock);

/// The TPM's clock (ms), its reset count (TPM2_Startup(CLEAR) since the last TPM2_Clear) and
/// its `safe` flag (no greater clock value was reported before: NO after a power cut).
uint32_t n11tpm_clock_info(n11tpm *tpm, uint64_t *clock, uint32_t *reset_count, int *safe);

/// Whether the lockout hierarchy has an authorization value (TPM_PT_PERMANENT lockoutAuthSet).
uint32_t n11tpm_lockout_auth_set(n11tpm *tpm, int *set);

/// TPM2_HierarchyChangeAuth on the lockout hierarchy, from `old` to `new_auth` (either may be
/// empty), through a salted session: the new value crosses the bus encrypted.
uint32_t n11tpm_lockout_change(n11tpm *tpm, const uint8_t *old, size_t old_len, const uint8_t *new_auth, size_t new_len);

/// TPM2_DictionaryAttackLockReset with the lockout hierarchy's authorization value.
uint32_t n11tpm_lockout_reset(n11tpm *tpm, const uint8_t *auth, size_t auth_len);

/// The dictionary-attack state: failed tries now, tries before lockout, seconds per
/// forgiven try, seconds a lockout-auth failure locks for.
uint32_t n11tpm_lockout(n11tpm *tpm, uint32_t *counter, uint32_t *max_tries, uint32_t *interval, uint32_t *recovery);

/// A monotonic NV counter at `index` (owner-defined, no DA) whose reads and increments need
/// the auth value `auth` (empty: anyone who may use the TPM; counters made before it).
uint32_t n11tpm_nv_define(n11tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_len);
uint32_t n11tpm_nv_increment(n11tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_len);
uint32_t n11tpm_nv_read(n11tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_len, uint64_t *value);
uint32_t n11tpm_nv_undefine(n11tpm *tpm, uint32_t index);

/// SHA-256 PCR values for the PCRs in `mask` (lowest first), 32 bytes each.
uint32_t n11tpm_pcr_read(n11tpm *tpm, uint32_t mask, uint8_t *out, size_t cap, size_t *len);

/// A one-line description of a TSS2_RC (tpm2-tss's own).
const char *n11tpm_describe(uint32_t rc);

/// Format-one TPM response codes with their parameter/session bits removed (0 if `rc`
/// is not a TPM format-one code).
uint32_t n11tpm_base_code(uint32_t rc);
#endif
