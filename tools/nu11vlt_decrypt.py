#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""An independent decrypter for portable .nu11vlt archives (docs/FORMAT.md section 6) and for
a vault folder opened with its recovery phrase alone (section 5.2), written from the spec
alone — no code shared with nu11vlt.

    python3 tools/nu11vlt_decrypt.py ARCHIVE OUTDIR            (password on stdin, one line)
    python3 tools/nu11vlt_decrypt.py --vault VAULTDIR OUTDIR   (recovery phrase on stdin)

Needs PyPI's `cryptography` and `argon2-cffi`. Writes every item to OUTDIR under its
archived name (made unique), notes as NAME.txt, and prints one line per item.
"""
import glob
import hmac
import json
import os
import sqlite3
import sys
import unicodedata
import zipfile

from argon2.low_level import Type, hash_secret_raw
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand

CHUNK = 16384
TAG = 16
HEADER = 56
MAX_T, MAX_M_KIB = 32, 4 * 1024 * 1024


def fail(msg):
    sys.exit(f"nu11vlt_decrypt: {msg}")


def cobblestone_decrypt(key, context, data, aead_name=b"AEAD_AES_256_GCM", aead_class=AESGCM):
    """c2sp.org/chunked-encryption with HKDF-SHA-512: AES-256-GCM (Cobblestone-256, archives)
    or ChaCha20-Poly1305 (N11-ChaCha, the vault's .n11 files)."""
    if len(data) < HEADER:
        fail("ciphertext shorter than its header")
    salt, commitment, body = data[:24], data[24:56], data[56:]
    info = b"c2sp.org/chunked-encryption@v1+" + aead_name + b"\x00" + salt + context
    okm = HKDFExpand(algorithm=hashes.SHA512(), length=32 + 12 + 32, info=info).derive(key)
    k, base, expected = okm[:32], int.from_bytes(okm[32:44], "big"), okm[44:]
    if not hmac.compare_digest(commitment, expected):
        fail("key commitment mismatch (wrong password, or the archive was altered)")
    aead, out, i, pos = aead_class(k), bytearray(), 0, 0
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


def write_unique(outdir, used, name, note, data):
    """Writes an item under its own name (made unique; notes as NAME.txt); returns the name."""
    name = os.path.basename(name or "") or "untitled"
    if note:
        name += ".txt"
    base, n = name, 1
    while name in used:
        n += 1
        name = f"{n}-{base}"
    used.add(name)
    with open(os.path.join(outdir, name), "wb") as f:
        f.write(data)
    return name


MODHEX = "cbdefghijklnrtuv"
SET = 32 + 12 + 128 + 16 + 32


def hkdf(ikm, salt, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def subkey(key, purpose):
    return HKDFExpand(algorithm=hashes.SHA256(), length=32, info=b"nu11vlt subkey v1 " + purpose).derive(key)


def seal_open(private, public, sealed, ad):
    """SealTo (section 5.2): eph_pub || nonce || ChaCha20-Poly1305 under HKDF(X25519(eph, pub))."""
    shared = private.exchange(X25519PublicKey.from_public_bytes(sealed[:32]))
    key = hkdf(shared, sealed[:32] + public, b"nu11vlt recovery seal v1")
    return ChaCha20Poly1305(key).decrypt(sealed[32:44], sealed[44:], ad)


def recover_vault(vault, outdir):
    """Opens a vault folder with its recovery phrase alone (docs/FORMAT.md section 5.2)."""
    typed = [c for c in sys.stdin.readline().lower() if c not in " -\t\r\n"]
    if len(typed) != 32 or any(c not in MODHEX for c in typed):
        fail("that is not a recovery phrase (32 letters from " + MODHEX + ")")
    phrase = bytes(MODHEX.index(typed[i]) << 4 | MODHEX.index(typed[i + 1]) for i in range(0, 32, 2))
    rec = open(os.path.join(vault, "recovery.n11r"), "rb").read()
    if rec[:4] != b"N11Q" or rec[4] not in (1, 2) or not 1 <= rec[5] <= 8 or len(rec) != 56 + rec[5] * SET:
        fail("recovery.n11r is not version 1 or 2 recovery data")
    vault_id, public = rec[8:24], rec[24:56]
    private = X25519PrivateKey.from_private_bytes(hkdf(phrase, vault_id, b"nu11vlt recovery phrase v1"))
    # public_bytes(Raw, Raw): Debian 12's cryptography (38) has no public_bytes_raw().
    if private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) != public:
        fail("the recovery phrase does not open this vault")
    mains = []
    for i in range(rec[5]):
        sealed = rec[56 + i * SET:56 + i * SET + SET - 32]
        payload = seal_open(private, public, sealed, b"nu11vlt recovery keys v1" + rec[8:56])
        mains.append(payload[1:33])
    db = sqlite3.connect(f"file:{os.path.join(vault, 'index.sqlite')}?mode=ro", uri=True)
    if bytes.fromhex(db.execute("SELECT id FROM vault").fetchone()[0]) != vault_id:
        fail("recovery.n11r belongs to another vault")
    seals = {row[0]: row[1] for row in db.execute("SELECT id, seal FROM recovery")}
    meta_keys = [subkey(m, b"index metadata") for m in mains]

    def open_small(blob, ads):
        for key in meta_keys:
            for ad in ads:
                try:
                    return ChaCha20Poly1305(key).decrypt(blob[:12], blob[12:], ad)
                except Exception:
                    pass
        return None

    albums = {}
    for album_id, name in db.execute("SELECT id, name FROM album WHERE domain = 1"):
        plain = open_small(name, [b"nu11vlt album name v1" + bytes.fromhex(album_id)])
        albums[album_id] = plain.rstrip(b"\0").decode() if plain is not None else album_id
    os.makedirs(outdir, exist_ok=True)
    used, skipped = set(), 0
    for item_id, kind, album, meta in db.execute("SELECT id, kind, album, meta FROM item WHERE domain = 1 ORDER BY seq"):
        if item_id not in seals:
            skipped += 1
            continue
        raw_id = bytes.fromhex(item_id)
        plain = open_small(meta, [b"nu11vlt item meta v2" + raw_id + (bytes.fromhex(album) if album else bytes(16)),
                                  b"nu11vlt item meta v1" + raw_id])
        if plain is None:
            fail(f"item {item_id}: its metadata opens under no recovered key")
        info = json.loads(plain.decode().rstrip(" "))
        item_key = seal_open(private, public, seals[item_id], b"nu11vlt recovery item v1" + vault_id + raw_id + bytes([kind]))
        if kind == 2:
            paths = [os.path.join(vault, "Notes", f"vault_{item_id}.n11note")]
        else:
            paths = glob.glob(os.path.join(vault, "Vault", "Photos", item_id + ".n11")) + \
                glob.glob(os.path.join(vault, "Vault", "Albums", "*", item_id + ".n11"))
        paths = [p for p in paths if os.path.isfile(p)]
        if not paths:
            fail(f"item {item_id}: its file is missing from the vault folder")
        data = open(paths[0], "rb").read()
        header = data[:24]
        if header[:4] != b"NU11" or header[4] != 1 or header[5] != kind or header[6] != 1 or header[8:24] != raw_id:
            fail(f"item {item_id}: its file's header does not match the index")
        content = cobblestone_decrypt(item_key, b"nu11vlt.n11" + header, data[24:],
                                      b"AEAD_CHACHA20_POLY1305", ChaCha20Poly1305)
        if len(content) != info.get("size", len(content)):
            fail(f"item {item_id}: size differs from its metadata")
        name = write_unique(outdir, used, info.get("name"), kind == 2, content)
        print(f"{'note' if kind == 2 else 'file'}\t{albums.get(album, '') if album else ''}\t{name}\t{len(content)}")
    if skipped:
        print(f"{skipped} item(s) have no recovery seal and were left out", file=sys.stderr)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--vault":
        return recover_vault(sys.argv[2], sys.argv[3])
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
            name = write_unique(sys.argv[2], used, item["name"], item["kind"] == "note", data)
            print(f"{item['kind']}\t{item.get('album') or ''}\t{name}\t{len(data)}")


if __name__ == "__main__":
    main()
