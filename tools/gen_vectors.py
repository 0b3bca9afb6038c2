#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Generates Nu11VLT's own negative-heavy test vectors, independently of the Swift code.

Written from docs/FORMAT.md and the c2sp.org/chunked-encryption spec with PyPI's
`cryptography`, so that the Swift implementation is checked against a second one.
Output is deterministic (seeded), so re-running it reproduces the checked-in files:

    python3 tools/gen_vectors.py Tests/Nu11FormatTests/Vectors

Two files, in the JSON shape of Wycheproof's c2sp_chunked_encryption tests (`ct` is hex of
zlib-compressed bytes):
  nu11vlt_chunked_chacha20_poly1305_test.json  ChaCha20-Poly1305 + HKDF-SHA-512 instantiation
  nu11vlt_n11_envelope_test.json               whole .n11/.n11note files, with an `expect`
                                               identity and an `error` code for invalid ones
"""
import hashlib
import json
import random
import sys
import zlib
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

CHUNK = 16384
TAG = 16
AEAD_NAME = b"AEAD_CHACHA20_POLY1305"
rng = random.Random(0x4E55_3131)


def rbytes(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def derive(key, salt, ctx):
    info = b"c2sp.org/chunked-encryption@v1+" + AEAD_NAME + b"\x00" + salt + ctx
    okm = HKDFExpand(algorithm=hashes.SHA512(), length=32 + 12 + 32, info=info).derive(key)
    return okm[:32], okm[32:44], okm[44:]


def nonce(base, i):
    return (int.from_bytes(base, "big") ^ i).to_bytes(12, "big")


def chunks_of(msg):
    out = [msg[i:i + CHUNK] for i in range(0, len(msg) - len(msg) % CHUNK, CHUNK)]
    out.append(msg[len(msg) - len(msg) % CHUNK:])
    return out


def encrypt(key, ctx, msg, salt=None):
    salt = salt if salt is not None else rbytes(24)
    k, base, commitment = derive(key, salt, ctx)
    aead = ChaCha20Poly1305(k)
    sealed = [aead.encrypt(nonce(base, i), c, None) for i, c in enumerate(chunks_of(msg))]
    return salt + commitment, sealed, (k, base)


def encrypt_zero_body(key, ctx, n):
    """A message of n bytes chosen so that its ciphertext body is zeros (compresses well)."""
    salt = rbytes(24)
    k, base, _ = derive(key, salt, ctx)
    aead = ChaCha20Poly1305(k)
    sizes = [CHUNK] * (n // CHUNK) + [n % CHUNK]
    msg = b"".join(aead.encrypt(nonce(base, i), bytes(size), None)[:size] for i, size in enumerate(sizes))
    head, sealed, _ = encrypt(key, ctx, msg, salt)
    return msg, head, sealed


def flip(data, index, bit=0):
    b = bytearray(data)
    b[index] ^= 1 << bit
    return bytes(b)


def case(tests, comment, key, ctx, ct, result, flags, msg=None, extra=None):
    t = {"tcId": len(tests) + 1, "comment": comment, "key": key.hex(), "ctx": ctx.hex(),
         "ct": zlib.compress(ct, 9).hex()}
    if msg is not None:
        t["msgLength"] = len(msg)
        t["msgSha512"] = hashlib.sha512(msg).hexdigest()
    t["result"] = result
    t["flags"] = flags
    if extra:
        t.update(extra)
    tests.append(t)


def chunked_vectors():
    tests = []
    key = rbytes(32)
    ctx = b""
    for n, comment in [(0, "empty message"), (7, "short message, single chunk"),
                       (CHUNK - 1, "one byte short of a full chunk"),
                       (CHUNK, "full chunk followed by empty terminating chunk"),
                       (CHUNK + 1, "full chunk followed by one-byte chunk"),
                       (2 * CHUNK, "two full chunks followed by empty terminating chunk"),
                       (3 * CHUNK + 100, "three full chunks followed by short chunk")]:
        msg = rbytes(n)
        head, sealed, _ = encrypt(key, ctx, msg)
        case(tests, comment, key, ctx, head + b"".join(sealed), "valid", [], msg)
    # Plaintext = keystream, so the 4 MiB ciphertext body is zeros and compresses well
    # (Wycheproof's trick for its rollover vectors).
    salt = rbytes(24)
    k, base, _ = derive(key, salt, ctx)
    zero_aead = ChaCha20Poly1305(k)
    msg = b"".join(zero_aead.encrypt(nonce(base, i), bytes(CHUNK), None)[:CHUNK] for i in range(256))
    msg += zero_aead.encrypt(nonce(base, 256), bytes(5), None)[:5]
    head, sealed, _ = encrypt(key, ctx, msg, salt)
    case(tests, "256 full chunks plus short chunk, counter crosses a byte boundary", key, ctx,
         head + b"".join(sealed), "valid", ["CounterRollover"], msg)
    for c, comment in [(b"nu11vlt test context", "non-empty context"),
                       (b"ctx\x00with\x00nulls", "context containing null bytes")]:
        msg = rbytes(50)
        head, sealed, _ = encrypt(key, c, msg)
        case(tests, comment, key, c, head + b"".join(sealed), "valid", [], msg)

    # Negative cases, all from one three-chunk message (two full chunks + short final).
    msg, head, s = encrypt_zero_body(key, ctx, 2 * CHUNK + 300)
    full = head + b"".join(s)
    first = msg[:CHUNK]
    two = msg[:2 * CHUNK]
    neg = [
        ("flipped bit in salt", flip(full, 3), ["ModifiedCiphertext", "HeaderFailure"], None),
        ("flipped bit in commitment", flip(full, 30), ["ModifiedCiphertext", "HeaderFailure"], None),
        ("flipped bit in first chunk body", head + flip(s[0], 100) + s[1] + s[2],
         ["ModifiedCiphertext", "ValidFinalChunk"], None),
        ("flipped bit in first chunk tag", head + flip(s[0], CHUNK + 5) + s[1] + s[2],
         ["ModifiedCiphertext", "ValidFinalChunk"], None),
        ("flipped bit in final chunk body", head + s[0] + s[1] + flip(s[2], 0),
         ["ModifiedCiphertext", "PartialPlaintext"], two),
        ("flipped bit in final chunk tag", head + s[0] + s[1] + flip(s[2], len(s[2]) - 1),
         ["ModifiedCiphertext", "PartialPlaintext"], two),
        ("empty ciphertext", b"", ["Truncation", "HeaderFailure"], None),
        ("salt only", full[:24], ["Truncation", "HeaderFailure"], None),
        ("header cut inside commitment", full[:50], ["Truncation", "HeaderFailure"], None),
        ("header only, no chunks", head, ["Truncation"], None),
        ("truncated at a chunk boundary (final chunk dropped)", head + s[0] + s[1],
         ["Truncation", "PartialPlaintext"], two),
        ("truncated after first chunk", head + s[0], ["Truncation", "PartialPlaintext"], first),
        ("final chunk cut inside its tag", head + s[0] + s[1] + s[2][:10],
         ["Truncation", "PartialPlaintext"], two),
        ("final chunk missing its last byte", full[:-1], ["Truncation", "PartialPlaintext"], two),
        ("first chunk cut mid-body", head + s[0][:5000], ["Truncation"], None),
        ("chunks 0 and 1 swapped", head + s[1] + s[0] + s[2], ["ChunkReordering", "ValidFinalChunk"], None),
        ("chunk 0 duplicated in place of chunk 1", head + s[0] + s[0] + s[2],
         ["ChunkReordering", "PartialPlaintext", "ValidFinalChunk"], first),
        ("middle chunk dropped", head + s[0] + s[2], ["ChunkReordering", "PartialPlaintext"], first),
        ("trailing garbage after final chunk", full + b"\x00" * 7, ["TrailingData", "PartialPlaintext"], two),
        ("trailing copy of the final chunk", full + s[2], ["TrailingData", "PartialPlaintext"], two),
    ]
    for comment, ct, flags, prefix in neg:
        case(tests, comment, key, ctx, ct, "invalid", flags, prefix)
    # Final chunk of another message with the same key at the same index.
    _, _, s2 = encrypt_zero_body(key, ctx, 2 * CHUNK + 300)
    case(tests, "final chunk taken from another message", key, ctx, head + s[0] + s[1] + s2[2],
         "invalid", ["ModifiedCiphertext", "PartialPlaintext"], two)
    small_msg = rbytes(40)
    h3, s3, _ = encrypt(key, ctx, small_msg)
    small = h3 + b"".join(s3)
    case(tests, "valid ciphertext decrypted with wrong key", rbytes(32), ctx, small, "invalid",
         ["WrongKey", "HeaderFailure"])
    case(tests, "valid ciphertext decrypted with wrong context", key, b"another context", small, "invalid",
         ["WrongContext", "HeaderFailure"])
    case(tests, "key one byte too short", key[:31], ctx, small, "invalid", ["InvalidKeySize", "HeaderFailure"])
    case(tests, "key one byte too long", key + b"\x00", ctx, small, "invalid", ["InvalidKeySize", "HeaderFailure"])
    return {"algorithm": "nu11vlt-chunked-chacha20-poly1305",
            "header": ["c2sp.org/chunked-encryption with AEAD_CHACHA20_POLY1305 and HKDF-SHA-512",
                       "generated by tools/gen_vectors.py (Nu11VLT), same shape as Wycheproof's"],
            "numberOfTests": len(tests),
            "testGroups": [{"type": "ChunkedEncryption", "aead": "AEAD_CHACHA20_POLY1305", "sha": "SHA-512",
                            "tests": tests}]}


DOMAINS = {"vault": 1, "fade": 2, "backup": 3, "archive": 4}
KINDS = {"file": 1, "note": 2}


def n11_header(kind, domain, item_id, version=1, flags=0):
    return b"NU11" + bytes([version, KINDS[kind], DOMAINS[domain], flags]) + item_id


def n11_file(key, kind, domain, item_id, msg):
    header = n11_header(kind, domain, item_id)
    head, sealed, _ = encrypt(key, b"nu11vlt.n11" + header, msg)
    return header + head + b"".join(sealed)


def n11_zero_body(key, kind, domain, item_id, n):
    header = n11_header(kind, domain, item_id)
    msg, head, sealed = encrypt_zero_body(key, b"nu11vlt.n11" + header, n)
    return msg, header + head + b"".join(sealed)


def n11_vectors():
    tests = []

    def add(comment, key, expect, data, result, flags, msg=None, error=None):
        extra = {"expect": expect}
        if error:
            extra["error"] = error
        case(tests, comment, key, b"", data, result, flags, msg, extra)

    key_a, key_b = rbytes(32), rbytes(32)
    id_a, id_b = rbytes(16), rbytes(16)
    ea = {"itemId": id_a.hex(), "domain": "vault", "kind": "file"}
    msg, fa = n11_zero_body(key_a, "file", "vault", id_a, CHUNK + 77)
    add("valid photo in the vault domain", key_a, ea, fa, "valid", [], msg)
    note = "a note \u2713".encode()
    en = {"itemId": id_b.hex(), "domain": "fade", "kind": "note"}
    add("valid note in the fade domain", key_b, en, n11_file(key_b, "note", "fade", id_b, note), "valid", [], note)
    add("empty item", key_a, ea, n11_file(key_a, "file", "vault", id_a, b""), "valid", [], b"")
    fb = n11_file(key_b, "file", "vault", id_b, rbytes(500))
    add("file of item B where item A is expected (swapped files)", key_a, ea, fb, "invalid", ["SwappedFile"],
        error="corrupted")
    add("file of item B with its header rewritten to A's ID", key_a, ea, n11_header("file", "vault", id_a) + fb[24:],
        "invalid", ["SwappedFile"], error="corrupted")
    add("wrong item key", key_b, ea, fa, "invalid", ["WrongKey"], error="corrupted")
    add("bad magic", key_a, ea, flip(fa, 0), "invalid", ["ModifiedHeader"], error="corrupted")
    add("unknown format version 2", key_a, ea, fa[:4] + b"\x02" + fa[5:], "invalid", ["UnknownVersion"],
        error="unsupportedVersion")
    add("unknown format version 0", key_a, ea, fa[:4] + b"\x00" + fa[5:], "invalid", ["UnknownVersion"],
        error="unsupportedVersion")
    add("kind changed from file to note", key_a, ea, fa[:5] + b"\x02" + fa[6:], "invalid", ["ModifiedHeader"],
        error="corrupted")
    add("unknown kind", key_a, ea, fa[:5] + b"\x09" + fa[6:], "invalid", ["ModifiedHeader"], error="corrupted")
    add("domain changed from vault to fade", key_a, ea, fa[:6] + b"\x02" + fa[7:], "invalid", ["ModifiedHeader"],
        error="corrupted")
    ea_fade = dict(ea, domain="fade")
    add("domain byte and expectation both moved to fade (context binding)", key_a, ea_fade,
        fa[:6] + b"\x02" + fa[7:], "invalid", ["ModifiedHeader", "WrongContext"], error="corrupted")
    add("reserved flags set", key_a, ea, fa[:7] + b"\x01" + fa[8:], "invalid", ["ModifiedHeader"], error="corrupted")
    add("flipped bit in item ID", key_a, ea, flip(fa, 12), "invalid", ["ModifiedHeader"], error="corrupted")
    add("header cut short", key_a, ea, fa[:20], "invalid", ["Truncation"], error="truncated")
    add("header only", key_a, ea, fa[:24], "invalid", ["Truncation"], error="truncated")
    add("flipped bit in salt", key_a, ea, flip(fa, 24 + 5), "invalid", ["ModifiedCiphertext"], error="corrupted")
    add("flipped bit in commitment", key_a, ea, flip(fa, 24 + 40), "invalid", ["ModifiedCiphertext"],
        error="corrupted")
    add("flipped bit in body", key_a, ea, flip(fa, 24 + 56 + 9), "invalid", ["ModifiedCiphertext"], error="corrupted")
    add("flipped bit in final tag", key_a, ea, flip(fa, len(fa) - 2), "invalid",
        ["ModifiedCiphertext", "PartialPlaintext"], msg[:CHUNK], error="corrupted")
    add("final chunk dropped", key_a, ea, fa[:24 + 56 + CHUNK + TAG], "invalid", ["Truncation", "PartialPlaintext"],
        msg[:CHUNK], error="truncated")
    add("trailing data", key_a, ea, fa + b"\x00", "invalid", ["TrailingData", "PartialPlaintext"], msg[:CHUNK],
        error="corrupted")
    return {"algorithm": "nu11vlt-n11-envelope",
            "header": ["Whole .n11/.n11note files (docs/FORMAT.md), format version 1",
                       "generated by tools/gen_vectors.py (Nu11VLT)"],
            "numberOfTests": len(tests),
            "testGroups": [{"type": "N11Envelope", "aead": "AEAD_CHACHA20_POLY1305", "sha": "SHA-512",
                            "tests": tests}]}


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "Tests/Nu11FormatTests/Vectors")
    out.mkdir(parents=True, exist_ok=True)
    for name, data in [("nu11vlt_chunked_chacha20_poly1305_test.json", chunked_vectors()),
                       ("nu11vlt_n11_envelope_test.json", n11_vectors())]:
        (out / name).write_text(json.dumps(data, indent=1) + "\n")
        print(f"{name}: {data['numberOfTests']} tests")


if __name__ == "__main__":
    main()
