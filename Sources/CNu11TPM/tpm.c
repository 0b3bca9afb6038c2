// SPDX-License-Identifier: GPL-3.0-or-later
// Nu11VLT's face over tpm2-tss ESAPI. Keep it small: every secret that enters or leaves the
// TPM goes through a salted session with parameter encryption; every handle is flushed.
#include "nu11tpm.h"
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_sys.h>
#include <tss2/tss2_tctildr.h>

struct n11tpm {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
    ESYS_TR primary;
};

static const TPMT_SYM_DEF session_sym = {
    .algorithm = TPM2_ALG_AES, .keyBits = {.aes = 128}, .mode = {.aes = TPM2_ALG_CFB}};

static void wipe(void *p, size_t n) {
    volatile uint8_t *b = p;
    while (n--) *b++ = 0;
}

static void flush_leftovers(ESYS_CONTEXT *esys) {
    TSS2_SYS_CONTEXT *sys = NULL;
    if (Esys_GetSysContext(esys, &sys) != TSS2_RC_SUCCESS || sys == NULL) return;
    const TPM2_HANDLE firsts[] = {TPM2_TRANSIENT_FIRST, TPM2_LOADED_SESSION_FIRST, TPM2_ACTIVE_SESSION_FIRST};
    for (size_t k = 0; k < 3; k++) {
        TPMS_CAPABILITY_DATA *cap = NULL;
        TPMI_YES_NO more = 0;
        if (Esys_GetCapability(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES, firsts[k],
                               TPM2_MAX_CAP_HANDLES, &more, &cap) != TSS2_RC_SUCCESS || cap == NULL) continue;
        for (UINT32 i = 0; i < cap->data.handles.count; i++) {
            TPM2_HANDLE h = cap->data.handles.handle[i];
            if ((h >> 24) != (firsts[k] >> 24)) continue;
            (void)Tss2_Sys_FlushContext(sys, h);
        }
        Esys_Free(cap);
    }
}

static TPM2B_PUBLIC primary_template(void) {
    TPM2B_PUBLIC pub = {0};
    pub.publicArea.type = TPM2_ALG_ECC;
    pub.publicArea.nameAlg = TPM2_ALG_SHA256;
    pub.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
        | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_NODA;
    pub.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
    pub.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
    pub.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
    pub.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    pub.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    pub.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    return pub;
}

uint32_t n11tpm_open(const char *conf, n11tpm **out) {
    *out = NULL;
    // tpm2-tss logs every TPM error to stderr; the caller turns codes into one-line messages.
    setenv("TSS2_LOG", "all+NONE", 1);
    n11tpm *t = calloc(1, sizeof *t);
    if (t == NULL) return TSS2_BASE_RC_MEMORY;
    t->primary = ESYS_TR_NONE;
    TSS2_RC rc = Tss2_TctiLdr_Initialize(conf, &t->tcti);
    if (rc != TSS2_RC_SUCCESS) { free(t); return rc; }
    rc = Esys_Initialize(&t->esys, t->tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) { Tss2_TctiLdr_Finalize(&t->tcti); free(t); return rc; }
    flush_leftovers(t->esys);
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_PUBLIC tmpl = primary_template();
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION none = {0};
    rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &tmpl,
                            &outside, &none, &t->primary, NULL, NULL, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) { n11tpm_close(t); return rc; }
    *out = t;
    return TSS2_RC_SUCCESS;
}

void n11tpm_close(n11tpm *t) {
    if (t == NULL) return;
    if (t->primary != ESYS_TR_NONE) (void)Esys_FlushContext(t->esys, t->primary);
    if (t->esys) Esys_Finalize(&t->esys);
    if (t->tcti) Tss2_TctiLdr_Finalize(&t->tcti);
    free(t);
}

uint32_t n11tpm_primary_name(n11tpm *t, uint8_t out[34]) {
    TPM2B_NAME *name = NULL;
    TSS2_RC rc = Esys_TR_GetName(t->esys, t->primary, &name);
    if (rc != TSS2_RC_SUCCESS) return rc;
    if (name->size != 34) { Esys_Free(name); return TSS2_BASE_RC_GENERAL_FAILURE; }
    memcpy(out, name->name, 34);
    Esys_Free(name);
    return TSS2_RC_SUCCESS;
}

static TPML_PCR_SELECTION pcr_selection(uint32_t mask) {
    TPML_PCR_SELECTION sel = {0};
    sel.count = 1;
    sel.pcrSelections[0].hash = TPM2_ALG_SHA256;
    sel.pcrSelections[0].sizeofSelect = 3;
    for (int i = 0; i < 24; i++)
        if (mask & (1u << i)) sel.pcrSelections[0].pcrSelect[i / 8] |= (uint8_t)(1u << (i % 8));
    return sel;
}

// PolicyCounterTimer: the `size`-byte big-endian `value` compared with TPMS_TIME_INFO at `offset`.
static TSS2_RC counter_timer(ESYS_CONTEXT *esys, ESYS_TR session, uint64_t value, int size, UINT16 offset, TPM2_EO op) {
    TPM2B_OPERAND operand = {.size = (UINT16)size};
    for (int i = 0; i < size; i++) operand.buffer[i] = (uint8_t)(value >> (8 * (size - 1 - i)));
    return Esys_PolicyCounterTimer(esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &operand, offset, op);
}

// Runs the policy commands on `session`; returns the failing stage in *stage.
static TSS2_RC run_policy(ESYS_CONTEXT *esys, ESYS_TR session, n11tpm_policy p, int *stage) {
    TSS2_RC rc;
    if (p.pcr_mask) {
        TPM2B_DIGEST empty = {0};
        TPML_PCR_SELECTION sel = pcr_selection(p.pcr_mask);
        *stage = 2;
        rc = Esys_PolicyPCR(esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &empty, &sel);
        if (rc != TSS2_RC_SUCCESS) return rc;
    }
    *stage = 3;
    // offset 8 in TPMS_TIME_INFO is clockInfo.clock
    if (p.deadline && (rc = counter_timer(esys, session, p.deadline, 8, 8, TPM2_EO_UNSIGNED_LT)) != TSS2_RC_SUCCESS) return rc;
    if (p.has_reset_limit) {
        // offset 16 is clockInfo.resetCount
        rc = counter_timer(esys, session, p.reset_limit, 4, 16, TPM2_EO_UNSIGNED_LE);
        if (rc != TSS2_RC_SUCCESS) return rc;
    }
    *stage = 4;
    return Esys_PolicyAuthValue(esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE);
}

static TSS2_RC policy_digest(n11tpm *t, n11tpm_policy p, TPM2B_DIGEST *out) {
    ESYS_TR trial = ESYS_TR_NONE;
    TSS2_RC rc = Esys_StartAuthSession(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                       NULL, TPM2_SE_TRIAL, &session_sym, TPM2_ALG_SHA256, &trial);
    if (rc != TSS2_RC_SUCCESS) return rc;
    int stage = 0;
    // A trial session never checks the clock: the digest is what a real session must reach.
    rc = run_policy(t->esys, trial, p, &stage);
    TPM2B_DIGEST *digest = NULL;
    if (rc == TSS2_RC_SUCCESS) rc = Esys_PolicyGetDigest(t->esys, trial, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &digest);
    if (rc == TSS2_RC_SUCCESS) { *out = *digest; Esys_Free(digest); }
    (void)Esys_FlushContext(t->esys, trial);
    return rc;
}

uint32_t n11tpm_seal(n11tpm *t, const uint8_t *auth, size_t auth_len, const uint8_t *secret, size_t secret_len,
                     n11tpm_policy p, uint8_t *blob, size_t cap, size_t *blob_len) {
    if (auth_len > sizeof(((TPM2B_AUTH *)0)->buffer) || secret_len > sizeof(((TPM2B_SENSITIVE_DATA *)0)->buffer))
        return TSS2_ESYS_RC_BAD_VALUE;
    TPM2B_PUBLIC pub = {0};
    pub.publicArea.type = TPM2_ALG_KEYEDHASH;
    pub.publicArea.nameAlg = TPM2_ALG_SHA256;
    pub.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | (p.no_da ? TPMA_OBJECT_NODA : 0);
    pub.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
    TSS2_RC rc = policy_digest(t, p, &pub.publicArea.authPolicy);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    sensitive.sensitive.userAuth.size = (UINT16)auth_len;
    memcpy(sensitive.sensitive.userAuth.buffer, auth, auth_len);
    sensitive.sensitive.data.size = (UINT16)secret_len;
    memcpy(sensitive.sensitive.data.buffer, secret, secret_len);
    ESYS_TR session = ESYS_TR_NONE;
    rc = Esys_StartAuthSession(t->esys, t->primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL,
                               TPM2_SE_HMAC, &session_sym, TPM2_ALG_SHA256, &session);
    if (rc == TSS2_RC_SUCCESS)
        rc = Esys_TRSess_SetAttributes(t->esys, session, TPMA_SESSION_DECRYPT | TPMA_SESSION_CONTINUESESSION, 0xff);
    TPM2B_PRIVATE *out_private = NULL;
    TPM2B_PUBLIC *out_public = NULL;
    if (rc == TSS2_RC_SUCCESS) {
        TPM2B_DATA outside = {0};
        TPML_PCR_SELECTION none = {0};
        rc = Esys_Create(t->esys, t->primary, session, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &pub, &outside, &none,
                         &out_private, &out_public, NULL, NULL, NULL);
    }
    wipe(&sensitive, sizeof sensitive);
    if (session != ESYS_TR_NONE) (void)Esys_FlushContext(t->esys, session);
    if (rc == TSS2_RC_SUCCESS) {
        size_t offset = 0;
        rc = Tss2_MU_TPM2B_PUBLIC_Marshal(out_public, blob, cap, &offset);
        if (rc == TSS2_RC_SUCCESS) rc = Tss2_MU_TPM2B_PRIVATE_Marshal(out_private, blob, cap, &offset);
        *blob_len = offset;
    }
    Esys_Free(out_private);
    Esys_Free(out_public);
    return rc;
}

uint32_t n11tpm_unseal(n11tpm *t, const uint8_t *blob, size_t blob_len, const uint8_t *auth, size_t auth_len,
                       n11tpm_policy p, uint8_t *out, size_t cap, size_t *out_len, int *stage) {
    *stage = 1;
    if (auth_len > sizeof(((TPM2B_AUTH *)0)->buffer)) return TSS2_ESYS_RC_BAD_VALUE;
    TPM2B_PUBLIC pub = {0};
    TPM2B_PRIVATE priv = {0};
    size_t offset = 0;
    TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(blob, blob_len, &offset, &pub);
    if (rc == TSS2_RC_SUCCESS) rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal(blob, blob_len, &offset, &priv);
    if (rc != TSS2_RC_SUCCESS) return rc;
    ESYS_TR object = ESYS_TR_NONE, session = ESYS_TR_NONE;
    rc = Esys_Load(t->esys, t->primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &priv, &pub, &object);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_StartAuthSession(t->esys, t->primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL,
                               TPM2_SE_POLICY, &session_sym, TPM2_ALG_SHA256, &session);
    if (rc == TSS2_RC_SUCCESS)
        rc = Esys_TRSess_SetAttributes(t->esys, session, TPMA_SESSION_ENCRYPT | TPMA_SESSION_CONTINUESESSION, 0xff);
    if (rc == TSS2_RC_SUCCESS) rc = run_policy(t->esys, session, p, stage);
    TPM2B_SENSITIVE_DATA *data = NULL;
    if (rc == TSS2_RC_SUCCESS) {
        TPM2B_AUTH value = {.size = (UINT16)auth_len};
        memcpy(value.buffer, auth, auth_len);
        rc = Esys_TR_SetAuth(t->esys, object, &value);
        wipe(&value, sizeof value);
        *stage = 5;
        if (rc == TSS2_RC_SUCCESS) rc = Esys_Unseal(t->esys, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &data);
    }
    if (rc == TSS2_RC_SUCCESS) {
        if (data->size > cap) rc = TSS2_ESYS_RC_INSUFFICIENT_BUFFER;
        else { memcpy(out, data->buffer, data->size); *out_len = data->size; }
    }
    if (data) { wipe(data, sizeof *data); Esys_Free(data); }
    if (session != ESYS_TR_NONE) (void)Esys_FlushContext(t->esys, session);
    (void)Esys_FlushContext(t->esys, object);
    return rc;
}

uint32_t n11tpm_clock(n11tpm *t, uint64_t *clock) {
    TPMS_TIME_INFO *info = NULL;
    TSS2_RC rc = Esys_ReadClock(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &info);
    if (rc != TSS2_RC_SUCCESS) return rc;
    *clock = info->clockInfo.clock;
    Esys_Free(info);
    return TSS2_RC_SUCCESS;
}

uint32_t n11tpm_clock_info(n11tpm *t, uint64_t *clock, uint32_t *reset_count, int *safe) {
    TPMS_TIME_INFO *info = NULL;
    TSS2_RC rc = Esys_ReadClock(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &info);
    if (rc != TSS2_RC_SUCCESS) return rc;
    *clock = info->clockInfo.clock;
    *reset_count = info->clockInfo.resetCount;
    *safe = info->clockInfo.safe == TPM2_YES;
    Esys_Free(info);
    return TSS2_RC_SUCCESS;
}

uint32_t n11tpm_lockout_auth_set(n11tpm *t, int *set) {
    TPMS_CAPABILITY_DATA *cap = NULL;
    TPMI_YES_NO more = 0;
    TSS2_RC rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
                                    TPM2_PT_PERMANENT, 1, &more, &cap);
    if (rc != TSS2_RC_SUCCESS) return rc;
    *set = -1;
    for (UINT32 i = 0; i < cap->data.tpmProperties.count; i++)
        if (cap->data.tpmProperties.tpmProperty[i].property == TPM2_PT_PERMANENT)
            *set = (cap->data.tpmProperties.tpmProperty[i].value & TPMA_PERMANENT_LOCKOUTAUTHSET) != 0;
    Esys_Free(cap);
    return *set < 0 ? TSS2_BASE_RC_GENERAL_FAILURE : TSS2_RC_SUCCESS;
}

// A salted HMAC session for the lockout hierarchy, authorised by `auth`.
static TSS2_RC lockout_session(n11tpm *t, const uint8_t *auth, size_t auth_len, TPMA_SESSION attributes, ESYS_TR *session) {
    if (auth_len > sizeof(((TPM2B_AUTH *)0)->buffer)) return TSS2_ESYS_RC_BAD_VALUE;
    TPM2B_AUTH value = {.size = (UINT16)auth_len};
    if (auth_len) memcpy(value.buffer, auth, auth_len);
    TSS2_RC rc = Esys_TR_SetAuth(t->esys, ESYS_TR_RH_LOCKOUT, &value);
    wipe(&value, sizeof value);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_StartAuthSession(t->esys, t->primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL,
                               TPM2_SE_HMAC, &session_sym, TPM2_ALG_SHA256, session);
    if (rc == TSS2_RC_SUCCESS) rc = Esys_TRSess_SetAttributes(t->esys, *session, attributes, 0xff);
    return rc;
}

uint32_t n11tpm_lockout_change(n11tpm *t, const uint8_t *old, size_t old_len, const uint8_t *new_auth, size_t new_len) {
    if (new_len > sizeof(((TPM2B_AUTH *)0)->buffer)) return TSS2_ESYS_RC_BAD_VALUE;
    ESYS_TR session = ESYS_TR_NONE;
    TSS2_RC rc = lockout_session(t, old, old_len, TPMA_SESSION_DECRYPT | TPMA_SESSION_CONTINUESESSION, &session);
    if (rc == TSS2_RC_SUCCESS) {
        TPM2B_AUTH value = {.size = (UINT16)new_len};
        if (new_len) memcpy(value.buffer, new_auth, new_len);
        rc = Esys_HierarchyChangeAuth(t->esys, ESYS_TR_RH_LOCKOUT, session, ESYS_TR_NONE, ESYS_TR_NONE, &value);
        wipe(&value, sizeof value);
    }
    if (session != ESYS_TR_NONE) (void)Esys_FlushContext(t->esys, session);
    TPM2B_AUTH none = {0};
    (void)Esys_TR_SetAuth(t->esys, ESYS_TR_RH_LOCKOUT, &none);
    return rc;
}

uint32_t n11tpm_lockout_reset(n11tpm *t, const uint8_t *auth, size_t auth_len) {
    ESYS_TR session = ESYS_TR_NONE;
    TSS2_RC rc = lockout_session(t, auth, auth_len, TPMA_SESSION_CONTINUESESSION, &session);
    if (rc == TSS2_RC_SUCCESS) rc = Esys_DictionaryAttackLockReset(t->esys, ESYS_TR_RH_LOCKOUT, session, ESYS_TR_NONE, ESYS_TR_NONE);
    if (session != ESYS_TR_NONE) (void)Esys_FlushContext(t->esys, session);
    TPM2B_AUTH none = {0};
    (void)Esys_TR_SetAuth(t->esys, ESYS_TR_RH_LOCKOUT, &none);
    return rc;
}

uint32_t n11tpm_lockout(n11tpm *t, uint32_t *counter, uint32_t *max_tries, uint32_t *interval, uint32_t *recovery) {
    TPMS_CAPABILITY_DATA *cap = NULL;
    TPMI_YES_NO more = 0;
    TSS2_RC rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
                                    TPM2_PT_LOCKOUT_COUNTER, 4, &more, &cap);
    if (rc != TSS2_RC_SUCCESS) return rc;
    for (UINT32 i = 0; i < cap->data.tpmProperties.count; i++) {
        TPMS_TAGGED_PROPERTY prop = cap->data.tpmProperties.tpmProperty[i];
        if (prop.property == TPM2_PT_LOCKOUT_COUNTER) *counter = prop.value;
        if (prop.property == TPM2_PT_MAX_AUTH_FAIL) *max_tries = prop.value;
        if (prop.property == TPM2_PT_LOCKOUT_INTERVAL) *interval = prop.value;
        if (prop.property == TPM2_PT_LOCKOUT_RECOVERY) *recovery = prop.value;
    }
    Esys_Free(cap);
    return TSS2_RC_SUCCESS;
}

static TSS2_RC nv_handle(n11tpm *t, uint32_t index, const uint8_t *auth, size_t auth_len, ESYS_TR *out) {
    if (auth_len > sizeof(((TPM2B_AUTH *)0)->buffer)) return TSS2_ESYS_RC_BAD_VALUE;
    TSS2_RC rc = Esys_TR_FromTPMPublic(t->esys, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, out);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_AUTH value = {.size = (UINT16)auth_len};
    if (auth_len) memcpy(value.buffer, auth, auth_len);
    rc = Esys_TR_SetAuth(t->esys, *out, &value);
    wipe(&value, sizeof value);
    if (rc != TSS2_RC_SUCCESS) (void)Esys_TR_Close(t->esys, out);
    return rc;
}

uint32_t n11tpm_nv_define(n11tpm *t, uint32_t index, const uint8_t *auth, size_t auth_len) {
    if (auth_len > sizeof(((TPM2B_AUTH *)0)->buffer)) return TSS2_ESYS_RC_BAD_VALUE;
    TPM2B_AUTH value = {.size = (UINT16)auth_len};
    if (auth_len) memcpy(value.buffer, auth, auth_len);
    TPM2B_NV_PUBLIC info = {0};
    info.nvPublic.nvIndex = index;
    info.nvPublic.nameAlg = TPM2_ALG_SHA256;
    info.nvPublic.attributes = TPMA_NV_AUTHWRITE | TPMA_NV_AUTHREAD | TPMA_NV_NO_DA
        | (TPM2_NT_COUNTER << TPMA_NV_TPM2_NT_SHIFT);
    info.nvPublic.dataSize = 8;
    ESYS_TR handle = ESYS_TR_NONE;
    // A salted session: the new index's auth value crosses the bus encrypted.
    ESYS_TR session = ESYS_TR_NONE;
    TSS2_RC rc = Esys_StartAuthSession(t->esys, t->primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL,
                                       TPM2_SE_HMAC, &session_sym, TPM2_ALG_SHA256, &session);
    if (rc == TSS2_RC_SUCCESS)
        rc = Esys_TRSess_SetAttributes(t->esys, session, TPMA_SESSION_DECRYPT | TPMA_SESSION_CONTINUESESSION, 0xff);
    if (rc == TSS2_RC_SUCCESS)
        rc = Esys_NV_DefineSpace(t->esys, ESYS_TR_RH_OWNER, session, ESYS_TR_NONE, ESYS_TR_NONE, &value, &info, &handle);
    wipe(&value, sizeof value);
    if (session != ESYS_TR_NONE) (void)Esys_FlushContext(t->esys, session);
    if (rc != TSS2_RC_SUCCESS) return rc;
    // A counter reads only after its first increment (ESYS keeps the auth given at definition).
    rc = Esys_NV_Increment(t->esys, handle, handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);
    (void)Esys_TR_Close(t->esys, &handle);
    return rc;
}

uint32_t n11tpm_nv_increment(n11tpm *t, uint32_t index, const uint8_t *auth, size_t auth_len) {
    ESYS_TR handle = ESYS_TR_NONE;
    TSS2_RC rc = nv_handle(t, index, auth, auth_len, &handle);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_NV_Increment(t->esys, handle, handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);
    (void)Esys_TR_Close(t->esys, &handle);
    return rc;
}

uint32_t n11tpm_nv_read(n11tpm *t, uint32_t index, const uint8_t *auth, size_t auth_len, uint64_t *value) {
    ESYS_TR handle = ESYS_TR_NONE;
    TSS2_RC rc = nv_handle(t, index, auth, auth_len, &handle);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_MAX_NV_BUFFER *data = NULL;
    rc = Esys_NV_Read(t->esys, handle, handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, 8, 0, &data);
    if (rc == TSS2_RC_SUCCESS) {
        if (data->size != 8) rc = TSS2_BASE_RC_GENERAL_FAILURE;
        else {
            uint64_t v = 0;
            for (int i = 0; i < 8; i++) v = (v << 8) | data->buffer[i];
            *value = v;
        }
        Esys_Free(data);
    }
    (void)Esys_TR_Close(t->esys, &handle);
    return rc;
}

uint32_t n11tpm_nv_undefine(n11tpm *t, uint32_t index) {
    ESYS_TR handle = ESYS_TR_NONE;
    TSS2_RC rc = nv_handle(t, index, NULL, 0, &handle);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_NV_UndefineSpace(t->esys, ESYS_TR_RH_OWNER, handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);
    if (rc != TSS2_RC_SUCCESS) (void)Esys_TR_Close(t->esys, &handle);
    return rc;
}

uint32_t n11tpm_pcr_read(n11tpm *t, uint32_t mask, uint8_t *out, size_t cap, size_t *len) {
    *len = 0;
    for (int i = 0; i < 24; i++) {
        if (!(mask & (1u << i))) continue;
        TPML_PCR_SELECTION sel = pcr_selection(1u << i);
        UINT32 counter = 0;
        TPML_PCR_SELECTION *out_sel = NULL;
        TPML_DIGEST *values = NULL;
        TSS2_RC rc = Esys_PCR_Read(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &sel, &counter, &out_sel, &values);
        if (rc != TSS2_RC_SUCCESS) return rc;
        int ok = values->count == 1 && values->digests[0].size == 32 && *len + 32 <= cap;
        if (ok) { memcpy(out + *len, values->digests[0].buffer, 32); *len += 32; }
        Esys_Free(out_sel);
        Esys_Free(values);
        if (!ok) return TSS2_BASE_RC_GENERAL_FAILURE;
    }
    return TSS2_RC_SUCCESS;
}

const char *n11tpm_describe(uint32_t rc) { return Tss2_RC_Decode(rc); }

uint32_t n11tpm_base_code(uint32_t rc) {
    if ((rc & 0xFFFF0000u) != 0 && (rc & TSS2_RC_LAYER_MASK) != TSS2_RESMGR_TPM_RC_LAYER) return 0;
    rc &= 0xFFFFu;
    if (rc & TPM2_RC_FMT1) return (rc & 0x3Fu) | TPM2_RC_FMT1;
    return rc & 0xFFFu & ~0x0u;
}
