# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/nu11vlt_decrypt.py's base: its messages, and the cryptography of docs/FORMAT.md it
needs (§1 chunked encryption, §3 key wrapping and subkeys, Argon2id), through Debian's
python3-cryptography and python3-argon2."""
import hmac
import sys

NEEDS = ("needs Debian's python3-cryptography and python3-argon2 "
         "(apt-get install python3-cryptography python3-argon2)")


def fail(msg):
    sys.stderr.write(f"nu11vlt_decrypt: {msg}\n")
    sys.exit(1)


def say(msg):
    sys.stderr.write(f"nu11vlt_decrypt: {msg}\n")


def missing(error):
    fail(f"{NEEDS}; missing: {(error.name or str(error)).split('.')[0]}")


try:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives import hashes
    # X25519 and the serialization names are for nu11vlt_decrypt_keys (the phrase's keys).
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
except ImportError as e:
    missing(e)


def argon2_low_level():
    """python3-argon2, needed by archives and the key store only (the phrase needs none)."""
    try:
        from argon2 import low_level
    except ImportError as e:
        missing(e)
    return low_level


def argon2id(secret, salt, t, m):
    """Argon2id v1.3, p = 1, 32 bytes."""
    a = argon2_low_level()
    return a.hash_secret_raw(secret, salt, time_cost=t, memory_cost=m, parallelism=1, hash_len=32, type=a.Type.ID)


CHUNK, TAG, HEADER = 16384, 16, 56
MAX_T, MAX_M_KIB = 32, 4 * 1024 * 1024
MODHEX = "cbdefghijklnrtuv"
SET = 32 + 12 + 128 + 16 + 32


class Bad(Exception):
    """One item (or the archive's manifest) failed; the message says how."""


class Quiet(Exception):
    """An item this credential is not meant to open (the other vault's Fade item), left out
    without a word; or ("faded") one of its Fade items past its deadline, only counted."""


def hkdf(ikm, salt, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def subkey(key, purpose):
    """§3: HKDF-Expand-SHA-256(K, "nu11vlt subkey v1 " || purpose, 32)."""
    return HKDFExpand(algorithm=hashes.SHA256(), length=32, info=b"nu11vlt subkey v1 " + purpose).derive(key)


def unseal(key, blob, ad):
    """§3 KeyWrap / §5.1 SmallSeal: nonce (12) || ChaCha20-Poly1305; None when it does not open."""
    if len(blob) < 28:
        return None
    try:
        return ChaCha20Poly1305(key).decrypt(bytes(blob[:12]), bytes(blob[12:]), ad)
    except InvalidTag:
        return None


def read_file(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(limit + 1)
    except OSError:
        return None


def read_exact(src, n):
    data = src.read(n)
    if len(data) != n:
        raise Bad("the file ended early")
    return data


def chunked_open(key, context, src, length, sink, aead_name=b"AEAD_AES_256_GCM", aead_class=AESGCM):
    """§1, c2sp.org/chunked-encryption with HKDF-SHA-512: AES-256-GCM (archives) or
    ChaCha20-Poly1305 (.n11). Reads `length` bytes from `src`; hands `sink` each chunk only
    after it authenticated; returns the plaintext length."""
    if length < HEADER:
        raise Bad("shorter than its header (truncated)")
    head = read_exact(src, HEADER)
    info = b"c2sp.org/chunked-encryption@v1+" + aead_name + b"\x00" + head[:24] + context
    okm = HKDFExpand(algorithm=hashes.SHA512(), length=76, info=info).derive(key)
    if not hmac.compare_digest(head[24:56], okm[44:]):
        raise Bad("key commitment mismatch (wrong key, or the file was altered)")
    body = length - HEADER
    if body % (CHUNK + TAG) == 0:
        raise Bad("truncated (no final chunk)")
    if body % (CHUNK + TAG) < TAG:
        raise Bad("its last chunk is damaged")
    aead, base, i, total = aead_class(okm[:32]), int.from_bytes(okm[32:44], "big"), 0, 0
    while body:
        piece = read_exact(src, min(CHUNK + TAG, body))
        try:
            plain = aead.decrypt((base ^ i).to_bytes(12, "big"), piece, None)
        except InvalidTag:
            raise Bad(f"chunk {i} does not authenticate (damaged or altered)") from None
        sink(plain)
        total, body, i = total + len(plain), body - len(piece), i + 1
    return total
