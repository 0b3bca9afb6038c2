#!/usr/bin/env python3
"""An independent decrypter for portable .nu11vlt archives, written from docs/FORMAT.md
(section 6) alone — no code shared with nu11vlt.

    python3 tools/nu11vlt_decrypt.py ARCHIVE OUTDIR  (password on stdin, one line)

Needs PyPI's `cryptography` and `argon2-cffi`. Writes every item to OUTDIR under its
archived name (made unique), notes as NAME.txt, and prints one line per item.
"""
import hmac
import json
import os
import sys
import unicodedata
import zipfile

from argon2.low_level import Type, hash_secret_raw
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

CHUNK = 16384
TAG = 16
HEADER = 56
MAX_T, MAX_M_KIB = 32, 4 * 1024 * 1024


def fail(msg):
    sys.exit(f"nu11vlt_decrypt: {msg}")


def cobblestone_decrypt(key, context, data):
    """c2sp.org/chunked-encryption with AES-256-GCM and HKDF-SHA-512 (Cobblestone-256)."""
    if len(data) < HEADER:
        fail("ciphertext shorter than its header")
    salt, commitment, body = data[:24], data[24:56], data[56:]
    info = b"c2sp.org/chunked-encryption@v1+AEAD_AES_256_GCM\x00" + salt + context
    okm = HKDFExpand(algorithm=hashes.SHA512(), length=32 + 12 + 32, info=info).derive(key)
    k, base, expected = okm[:32], int.from_bytes(okm[32:44], "big"), okm[44:]
    if not hmac.compare_digest(commitment, expected):
        fail("key commitment mismatch (wrong password, or the archive was altered)")
    aead, out, i, pos = AESGCM(k), bytearray(), 0, 0
    while True:
        piece = body[pos:pos + CHUNK + TAG]
        if len(piece) < TAG:
            fail("truncated ciphertext")
        out += aead.decrypt((base ^ i).to_bytes(12, "big"), piece, None)
        pos += len(piece)
        i += 1
        if len(piece) < CHUNK + TAG:
            if pos != len(body):
                fail("trailing data")
            return bytes(out)
        if pos == len(body):
            fail("truncated ciphertext (no final chunk)")


def main():
    if len(sys.argv) != 3:
        fail("usage: nu11vlt_decrypt.py ARCHIVE OUTDIR (password on stdin)")
    # Normalised to Unicode NFC, as nu11vlt does (docs/FORMAT.md).
    password = unicodedata.normalize("NFC", sys.stdin.readline().rstrip("\n")).encode()
    with zipfile.ZipFile(sys.argv[1]) as z:
        header = json.loads(z.read("nu11vlt-archive.json"))
        if header.get("format") != "nu11vlt-archive" or header.get("version") != 1:
            fail("not a version 1 nu11vlt archive")
        if header.get("kind") != "portable":
            fail("only portable archives can be decrypted without the key store")
        kdf = header["kdf"]
        if kdf["algorithm"] != "argon2id" or kdf["parallelism"] != 1:
            fail("unknown KDF")
        if kdf["iterations"] > MAX_T or kdf["memoryKiB"] > MAX_M_KIB:
            fail("KDF cost over the cap")
        key = hash_secret_raw(password, bytes.fromhex(kdf["salt"]), time_cost=kdf["iterations"],
                              memory_cost=kdf["memoryKiB"], parallelism=1, hash_len=32, type=Type.ID)
        manifest = json.loads(cobblestone_decrypt(key, b"nu11vlt-archive/v1/manifest", z.read("manifest.c2sp")))
        os.makedirs(sys.argv[2], exist_ok=True)
        used = set()
        for item in manifest["items"]:
            entry = item["entry"]
            data = cobblestone_decrypt(key, b"nu11vlt-archive/v1/item/" + entry.encode(), z.read(entry))
            if len(data) != item["size"]:
                fail(f"{entry}: size differs from the manifest")
            name = os.path.basename(item["name"]) or "untitled"
            if item["kind"] == "note":
                name += ".txt"
            base, n = name, 1
            while name in used:
                n += 1
                name = f"{n}-{base}"
            used.add(name)
            with open(os.path.join(sys.argv[2], name), "wb") as f:
                f.write(data)
            print(f"{item['kind']}\t{item.get('album') or ''}\t{name}\t{len(data)}")


if __name__ == "__main__":
    main()
