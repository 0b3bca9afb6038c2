#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The vault-folder writer's forgery of docs/FORMAT.md §5.2: a key set of the attacker's own keys
(main = 0xAA…, fade = 0, archive = 0xCC…), sealed to the owner's real public key and bound under
its own main key, put first (`--prepend`) or as the only set.

Usage: forge_recovery.py recovery.n11r [--prepend]     (rewrites the file in place)
       forge_recovery.py --meta-opens index.sqlite ID    (exit 0 when the row's meta opens under 0xAA…)
       forge_recovery.py --plant-meta index.sqlite ID NAME  (the row's meta replaced by one of the
                                                          attacker's, named NAME, sealed under 0xAA…)
       forge_recovery.py recovery.n11r --own-key        (this vault's ID kept; the public key is the
                                                          attacker's (private key ATTACKER), one set of
                                                          the attacker's keys sealed to it and bound under them)
       forge_recovery.py --seal-opens VAULT ID           (exit 0 when item ID's recovery seal opens with
                                                          the attacker's private key; prints opens/does-not-open)"""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import splice_client as sc  # noqa: E402
from legacy_keystore import wrap  # noqa: E402
from cryptography.hazmat.primitives import hashes, hmac  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey  # noqa: E402
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat  # noqa: E402

MAIN, ARCHIVE = b"\xaa" * 32, b"\xcc" * 32
ATTACKER = X25519PrivateKey.from_private_bytes(b"\x11" * 32)


def main():
    if sys.argv[1] == "--meta-opens":
        row = sc.index_query(os.path.dirname(sys.argv[2]), "SELECT meta, album FROM item WHERE id = ?", sys.argv[3])
        key = sc.subkey(MAIN, b"index metadata")
        meta, album = row
        aid = bytes.fromhex(album) if album else bytes(16)
        ok = sc.unwrap(key, meta, b"nu11vlt item meta v2" + bytes.fromhex(sys.argv[3]) + aid) is not None
        print("opens" if ok else "does-not-open")
        return 0 if ok else 1
    if sys.argv[1] == "--plant-meta":
        import json, sqlite3
        item = sys.argv[3]
        db = sqlite3.connect(sys.argv[2])
        (album,) = db.execute("SELECT album FROM item WHERE id = ?", (item,)).fetchone()
        aid = bytes.fromhex(album) if album else bytes(16)
        plain = json.dumps({"name": sys.argv[4], "size": 999, "type": "application/x-attacker", "created": 1000000000}).encode()
        plain += b" " * (512 - len(plain))
        meta = wrap(sc.subkey(MAIN, b"index metadata"), plain, b"nu11vlt item meta v2" + bytes.fromhex(item) + aid)
        db.execute("UPDATE item SET meta = ? WHERE id = ?", (meta, item))
        db.commit()
        return 0
    if sys.argv[1] == "--seal-opens":
        vault, item = sys.argv[2], sys.argv[3]
        vault_id = open(os.path.join(vault, "recovery.n11r"), "rb").read()[8:24]
        row = sc.index_query(vault, "SELECT seal FROM recovery WHERE id = ?", item)
        ok = False
        if row and row[0]:
            ok = any(sc.seal_open(ATTACKER, bytes(row[0]), b"nu11vlt recovery item v1" + vault_id + bytes.fromhex(item) + bytes([k]))
                     is not None for k in range(256))
        print("opens" if ok else "does-not-open")
        return 0 if ok else 1
    path, prepend, own = sys.argv[1], "--prepend" in sys.argv, "--own-key" in sys.argv
    r = open(path, "rb").read()
    if own:
        r = r[:24] + ATTACKER.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) + r[56:]
    clear, pub = r[8:56], r[24:56]
    payload = bytes([1]) + MAIN + bytes(32) + ARCHIVE + bytes(8) + bytes(23)
    eph = X25519PrivateKey.generate()
    eph_pub = eph.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    shared = eph.exchange(X25519PublicKey.from_public_bytes(pub))
    sealed = eph_pub + wrap(sc.hkdf(shared, eph_pub + pub, b"nu11vlt recovery seal v1"), payload, b"nu11vlt recovery keys v1" + clear)
    mac = hmac.HMAC(sc.subkey(MAIN, b"recovery binding"), hashes.SHA256())
    mac.update(clear)
    forged = sealed + mac.finalize()
    sets = [forged] + ([r[56 + 220 * i:56 + 220 * (i + 1)] for i in range(r[5])] if prepend else [])
    with open(path, "wb") as f:
        f.write(r[:5] + bytes([len(sets)]) + r[6:56] + b"".join(sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
