#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Seed corpus for the fuzz harnesses (Fuzz/corpus/<harness>/), written from docs/FORMAT.md.
Everything is keyed with the harnesses' fixed key (32 bytes of 0x42) so that valid seeds
open and mutations reach deep code. Deterministic: python3 tools/gen_fuzz_corpus.py"""
import io
import json
import random
import zipfile
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

KEY = b"\x42" * 32
rng = random.Random(7)
OUT = Path(__file__).resolve().parent.parent / "Fuzz" / "corpus"


def rb(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def chunked(aead_cls, name, key, ctx, msg):
    salt = rb(24)
    info = b"c2sp.org/chunked-encryption@v1+" + name + b"\x00" + salt + ctx
    okm = HKDFExpand(algorithm=hashes.SHA512(), length=76, info=info).derive(key)
    k, base, com = okm[:32], int.from_bytes(okm[32:44], "big"), okm[44:]
    chunks = [msg[i:i + 16384] for i in range(0, len(msg) - len(msg) % 16384, 16384)] + [msg[len(msg) - len(msg) % 16384:]]
    a = aead_cls(k)
    return salt + com + b"".join(a.encrypt((base ^ i).to_bytes(12, "big"), c, None) for i, c in enumerate(chunks))


def subkey(key, purpose):
    return HKDFExpand(algorithm=hashes.SHA256(), length=32, info=b"nu11vlt subkey v1 " + purpose.encode()).derive(key)


def small_seal(key, plain, ad):
    nonce = rb(12)
    return nonce + ChaCha20Poly1305(key).encrypt(nonce, plain, ad)


def write(harness, name, data):
    d = OUT / harness
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def main():
    for kind, n in [(1, 0), (1, 100), (2, 16384), (1, 20000)]:
        header = b"NU11" + bytes([1, kind, 1, 0]) + rb(16)
        write("n11", f"valid-{kind}-{n}", header + chunked(ChaCha20Poly1305, b"AEAD_CHACHA20_POLY1305", KEY,
                                                          b"nu11vlt.n11" + header, rb(n)))
    write("n11", "header-only", b"NU11\x01\x01\x01\x00" + rb(16))
    # Key store records.
    item_id = rb(16)
    clear = b"N11R" + bytes([1, 1, 1, 0]) + item_id
    write("keystore", "item-record", clear + small_seal(KEY, rb(32), clear))
    master_clear = b"N11K" + bytes([1, 1, 0, 0]) + (2).to_bytes(4, "big") + (19456).to_bytes(4, "big") + rb(16)
    payload = bytes([1]) + rb(96) + bytes(31)
    slot0 = small_seal(KEY, payload, master_clear + b"\x00")
    write("keystore", "master", master_clear + slot0 + rb(156) + rb(156))
    write("keystore", "device", b"N11D\x01" + rb(32))
    state = json.dumps({"latestSeen": 1.0, "failures": 0, "lockedUntil": 0, "fade": []}, sort_keys=True).encode()
    state += b" " * ((1024 - len(state) % 1024) % 1024)
    write("keystore", "state", b"N11S\x01" + small_seal(subkey(KEY, "device state"), state, b"nu11vlt device state v1"))
    # Settings: sealed files and raw documents of both versions.
    v2 = json.dumps({"version": 2, "values": {"deletion.mode": "secure", "fade.default": "10m", "preview.cache_mib": "64",
                                              "kdf.memory_mib": "0", "kdf.iterations": "0", "pin.erase_after": "0",
                                              "backup.allow": "false"}}).encode()
    v1 = json.dumps({"version": 1, "values": {"secure_delete": "true", "fade_seconds": "3600", "thumbnail_cache": "5"}}).encode()
    write("settings", "doc-v2", v2)
    write("settings", "doc-v1", v1)
    write("settings", "sealed-v2", b"N11C\x01" + small_seal(subkey(KEY, "settings"), v2, b"nu11vlt settings v1"))
    write("settings", "duration", b"24h")
    # Archives.
    for items in (0, 1, 2):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            header = {"format": "nu11vlt-archive", "version": 1, "kind": "portable", "items": items,
                      "kdf": {"algorithm": "argon2id", "iterations": 2, "memoryKiB": 19456, "parallelism": 1,
                              "salt": rb(16).hex()}}
            z.writestr("nu11vlt-archive.json", json.dumps(header))
            entries = [f"items/{rb(16).hex()}.c2sp" for _ in range(items)]
            manifest = {"version": 1, "albums": [], "items": [
                {"entry": e, "kind": "file", "name": f"f{i}", "size": 10, "type": "image/png", "created": 0.0,
                 "album": None, "fadeDeadline": None} for i, e in enumerate(entries)]}
            z.writestr("manifest.c2sp", chunked(AESGCM, b"AEAD_AES_256_GCM", KEY, b"nu11vlt-archive/v1/manifest",
                                                json.dumps(manifest).encode()))
            for e in entries:
                z.writestr(e, chunked(AESGCM, b"AEAD_AES_256_GCM", KEY, b"nu11vlt-archive/v1/item/" + e.encode(), rb(10)))
        write("archive", f"portable-{items}", buf.getvalue())


if __name__ == "__main__":
    main()
