#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Key store and index vectors, written from docs/FORMAT.md (§ 4.2 master record, § 4.3 item
key records, § 5.1 sealed metadata) with PyPI's `cryptography` and `argon2-cffi`,
independently of the Swift code. Deterministic (seeded):

    python3 tools/gen_keystore_vectors.py Tests/Nu11FormatTests/Vectors Tests/Nu11VaultTests/Vectors
"""
import json
import random
import struct
import sys
import unicodedata
from pathlib import Path

from argon2.low_level import Type, hash_secret_raw
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand

rng = random.Random(0x4B_53_54)


def rbytes(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def wrap(secret, key, ad):
    nonce = rbytes(12)
    return nonce + ChaCha20Poly1305(key).encrypt(nonce, secret, ad)


def flip(data, i):
    b = bytearray(data)
    b[i] ^= 0x01
    return bytes(b)


# § 4.2: master.n11k
T, M_KIB = 2, 19 * 1024


def kek(pin, salt, device):
    stretched = hash_secret_raw(unicodedata.normalize("NFC", pin).encode(), salt, time_cost=T, memory_cost=M_KIB,
                                parallelism=1, hash_len=32, type=Type.ID, version=19)
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=device, info=b"nu11vlt kek v1").derive(stretched)


def fields(flags, salt):
    return b"N11K" + bytes([1, 1, flags, 0]) + struct.pack(">II", T, M_KIB) + salt


def payload(role, keys):
    return bytes([role]) + keys[0] + keys[1] + keys[2] + bytes(31)


def master(slots, flags, salt, device):
    """slots: {index: (pin, role, keys)}; the others are random filler."""
    out = fields(flags, salt)
    for i in range(3):
        if i in slots:
            pin, role, keys = slots[i]
            ad = fields(flags if i == 0 else 0, salt) + bytes([i])
            out += wrap(payload(role, keys), kek(pin, salt, device), ad)
        else:
            out += rbytes(128 + 28)
    return out


def master_vectors():
    tests = []
    device = rbytes(32)
    salt = rbytes(16)
    primary = (rbytes(32), rbytes(32), rbytes(32))
    backup = (rbytes(32), rbytes(32), rbytes(32))

    def case(comment, record, pin, result, slot=None, role=None, keys=None, dev=device):
        tests.append({"comment": comment, "deviceKey": dev.hex(), "record": record.hex(), "pin": pin, "result": result,
                      "slot": slot, "role": role, "keys": [k.hex() for k in keys] if keys else None})

    rec = master({0: ("primary pin", 1, primary), 1: ("backup pin", 2, backup)}, 0, salt, device)
    case("primary slot", rec, "primary pin", "valid", 0, 1, primary)
    case("backup slot", rec, "backup pin", "valid", 1, 2, backup)
    case("wrong PIN", rec, "primary pim", "invalid")
    case("wrong device key", rec, "primary pin", "invalid", dev=rbytes(32))
    case("salt altered", flip(rec, 20), "primary pin", "invalid")
    case("cost altered", flip(rec, 11), "primary pin", "invalid")
    case("primary slot altered", flip(rec, 32 + 40), "primary pin", "invalid")
    armed = master({0: ("primary pin", 1, primary), 1: ("backup pin", 2, backup)}, 1, salt, device)
    case("Skeleton Switch armed: primary opens", armed, "primary pin", "valid", 0, 1, primary)
    case("Skeleton flag cleared in the file: primary opens nothing", bytes(armed[:6]) + b"\x00" + armed[7:], "primary pin", "invalid")
    case("Skeleton flag cleared: backup still opens (flag bound into slot 0 only)", bytes(armed[:6]) + b"\x00" + armed[7:],
         "backup pin", "valid", 1, 2, backup)
    nfc = master({0: ("caf\u00e9", 1, primary)}, 0, salt, device)
    case("a PIN typed decomposed opens a slot sealed under its NFC form", nfc, "cafe\u0301", "valid", 0, 1, primary)
    return tests


def item_record_vectors():
    tests = []
    domain_key = rbytes(32)
    for comment, domain, kind, mutate, result in [
        ("vault file", 1, 1, None, "valid"), ("fade note", 2, 2, None, "valid"),
        ("domain byte altered", 1, 1, lambda r: bytes(r[:5]) + b"\x02" + r[6:], "invalid"),
        ("kind byte altered", 1, 1, lambda r: bytes(r[:6]) + b"\x02" + r[7:], "invalid"),
        ("item ID altered", 1, 1, lambda r: flip(r, 10), "invalid"),
        ("wrapped key altered", 1, 1, lambda r: flip(r, 60), "invalid"),
        ("wrong domain key", 1, 1, "key", "invalid"),
    ]:
        item_id, item_key = rbytes(16), rbytes(32)
        clear = b"N11R" + bytes([1, domain, kind, 0]) + item_id
        record = clear + wrap(item_key, domain_key, clear)
        key = domain_key
        if mutate == "key":
            key = rbytes(32)
        elif mutate:
            record = mutate(record)
        tests.append({"comment": comment, "domainKey": key.hex(), "record": record.hex(), "result": result,
                      "itemKey": item_key.hex() if result == "valid" else None})
    return tests


def metadata_vectors():
    tests = []
    domain_key = rbytes(32)
    sub = HKDFExpand(algorithm=hashes.SHA256(), length=32, info=b"nu11vlt subkey v1 index metadata").derive(domain_key)

    def seal(item_id, album, doc, version=2, pad=True):
        plain = json.dumps(doc, separators=(",", ":")).encode()
        if pad:
            bucket = 256
            while bucket < len(plain):
                bucket *= 2
            plain += b" " * (bucket - len(plain))
        ad = (b"nu11vlt item meta v2" + item_id + (album or bytes(16))) if version == 2 else b"nu11vlt item meta v1" + item_id
        nonce = rbytes(12)
        return nonce + ChaCha20Poly1305(sub).encrypt(nonce, plain, ad)

    def case(comment, item_id, album, sealed, result, doc=None, legacy=False):
        tests.append({"comment": comment, "domainKey": domain_key.hex(), "id": item_id.hex(), "album": album.hex() if album else None,
                      "sealed": sealed.hex(), "result": result, "name": doc["name"] if doc else None,
                      "size": doc["size"] if doc else None, "legacy": legacy})

    doc = {"name": "beach.jpg", "size": 123456, "type": "image/jpeg", "created": 1790000000}
    long_doc = {"name": "n" * 600, "size": 1, "type": "text/plain", "created": 1790000001}
    a, b, album, other = rbytes(16), rbytes(16), rbytes(16), rbytes(16)
    case("in an album", a, album, seal(a, album, doc), "valid", doc)
    case("in Photos (no album)", a, None, seal(a, None, doc), "valid", doc)
    case("a long name pads to the next bucket", a, None, seal(a, None, long_doc), "valid", long_doc)
    case("moved to another album in the index", a, other, seal(a, album, doc), "invalid")
    case("moved out of its album in the index", a, None, seal(a, album, doc), "invalid")
    case("another row's metadata (swapped)", b, album, seal(a, album, doc), "invalid")
    case("a bit flipped", a, album, flip(seal(a, album, doc), 30), "invalid")
    case("version 1 (before album binding) still opens", a, album, seal(a, None, doc, version=1, pad=False), "valid", doc, legacy=True)
    case("version 1 of another row", b, None, seal(a, None, doc, version=1, pad=False), "invalid")
    return tests


def main():
    fmt = Path(sys.argv[1] if len(sys.argv) > 1 else "Tests/Nu11FormatTests/Vectors")
    vault = Path(sys.argv[2] if len(sys.argv) > 2 else "Tests/Nu11VaultTests/Vectors")
    note = "generated by tools/gen_keystore_vectors.py (Nu11VLT) from docs/FORMAT.md; Argon2id t=2, m=19 MiB, p=1"
    keystore = {"source": note, "master": master_vectors(), "itemKeyRecords": item_record_vectors()}
    (fmt / "nu11vlt_keystore_test.json").write_text(json.dumps(keystore, indent=1) + "\n")
    vault.mkdir(parents=True, exist_ok=True)
    (vault / "nu11vlt_index_metadata_test.json").write_text(json.dumps({"source": note, "tests": metadata_vectors()}, indent=1) + "\n")
    print(f"keystore: {len(keystore['master'])} master, {len(keystore['itemKeyRecords'])} item key records; metadata written")


if __name__ == "__main__":
    main()
