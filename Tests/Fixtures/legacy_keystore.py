#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turns a key store and vault folder made today back into what the program wrote before issue 55,
from docs/FORMAT.md alone, so the tests can watch the first unlock migrate them (crash-safe):
master.n11k version 3 -> 1 (no pepper; slot 0 re-sealed under the PIN's KEK, its payload without
the recovery commitment and generation, §4.2, §4.2e), recovery.n11r version 2 -> 1 (key sets with
the Fade key again, §5.2), security-keys.n11u a version 1 decoy (§4.2d).

Usage: legacy_keystore.py --keystore KS --vault V   (the primary PIN on stdin)"""
import argparse, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import splice_client as sc  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey  # noqa: E402
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305  # noqa: E402
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat  # noqa: E402


def wrap(key, secret, ad):
    """§3 KeyWrap: nonce (12) || ChaCha20-Poly1305(key, nonce, secret, ad)."""
    nonce = os.urandom(12)
    return nonce + ChaCha20Poly1305(key).encrypt(nonce, secret, ad)


def write(path, data):
    tmp = path + ".legacy-tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--keystore", required=True)
    p.add_argument("--vault", required=True)
    a = p.parse_args()
    pin = sys.stdin.buffer.readline().rstrip(b"\n")
    m = sc.read_master(a.keystore)
    dkey = sc.device_key(a.keystore)
    kek = sc.pin_keks(m, dkey, pin)[0]
    head = m[:4] + b"\x01" + m[5:32]
    k0 = sc.hkdf(kek, m[-32:], b"nu11vlt kek slot 0 v1") if m[4] == 3 else kek
    payload = sc.unwrap(k0, m[32:188], head + b"\x00")
    if payload is None:
        sys.exit("the PIN does not open slot 0")
    legacy = payload[:105] + bytes(23)
    slot0 = wrap(kek, legacy, head + b"\x00")
    write(os.path.join(a.keystore, "master.n11k"), head + slot0 + m[188:500])
    # recovery.n11r: version 1, one key set holding the Fade key.
    path = os.path.join(a.vault, "recovery.n11r")
    r = open(path, "rb").read()
    clear, pub = r[8:56], r[24:56]
    eph = X25519PrivateKey.generate()
    eph_pub = eph.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    shared = eph.exchange(X25519PublicKey.from_public_bytes(pub))
    sealed = eph_pub + wrap(sc.hkdf(shared, eph_pub + pub, b"nu11vlt recovery seal v1"), legacy,
                            b"nu11vlt recovery keys v1" + clear)
    binding = r[56 + 188:56 + 220]
    write(path, b"N11Q\x01\x01\x00\x00" + clear + sealed + binding)
    write(os.path.join(a.keystore, "security-keys.n11u"), b"N11U\x01\x00\x00\x00" + os.urandom(1748))


if __name__ == "__main__":
    main()
