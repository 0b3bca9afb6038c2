# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/nu11vlt_decrypt.py's credentials: the recovery phrase (docs/FORMAT.md §5.2) and the
key store with its PIN (§4). Each gives the item keys and metadata keys of its domains."""
import json
import os
import re
import struct
import sys
import time
import unicodedata

from nu11vlt_decrypt_crypto import (MAX_M_KIB, MAX_T, MODHEX, SET, Bad, Encoding, PublicFormat, Quiet, X25519PrivateKey,
                                    X25519PublicKey, argon2id, fail, hkdf, read_file, say, subkey, unseal)
from nu11vlt_decrypt_vault import listdir

class Phrase:
    """§5.2: the recovery phrase, the vault ID and public key of recovery.n11r, the item keys
    from the recovery seals (the index's `recovery` rows, else the sidecars')."""
    domains = {1}
    what = "recovery.n11r"
    left_out = "it has no recovery seal (imported while the vault had no recovery phrase)"
    left_out_summary = "without a recovery seal (imported while the vault had no recovery phrase)"
    counts_fade = True          # Fade items are never sealed to the phrase: counted, not opened
    seal_in_sidecar = True      # with the index gone, an item's seal is in its sidecar only

    @staticmethod
    def fades_at(hexid, domain):
        return None

    def __init__(self, vault):
        typed = [c for c in sys.stdin.readline().lower() if c not in " -\t\r\n"]
        if len(typed) != 32 or any(c not in MODHEX for c in typed):
            fail("that is not a recovery phrase (32 letters from " + MODHEX + ")")
        phrase = bytes(MODHEX.index(typed[i]) << 4 | MODHEX.index(typed[i + 1]) for i in range(0, 32, 2))
        rec = read_file(os.path.join(vault, "recovery.n11r"))
        if rec is None:
            fail(f"{vault}/recovery.n11r is missing: without it the phrase opens nothing (the vault ID is in it)")
        if rec[:4] != b"N11Q" or rec[4] not in (1, 2) or not 1 <= rec[5] <= 8 or len(rec) != 56 + rec[5] * SET:
            fail("recovery.n11r is not version 1 or 2 recovery data")
        self.vault_id, self.public = rec[8:24], rec[24:56]
        self.private = X25519PrivateKey.from_private_bytes(hkdf(phrase, self.vault_id, b"nu11vlt recovery phrase v1"))
        # public_bytes(Raw, Raw): Debian 12's cryptography (38) has no public_bytes_raw().
        if self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) != self.public:
            fail("the recovery phrase does not open this vault")
        self.mains = []
        for i in range(rec[5]):
            payload = self.seal_open(rec[56 + i * SET:56 + i * SET + SET - 32], b"nu11vlt recovery keys v1" + rec[8:56])
            if payload is not None and len(payload) == 128:
                self.mains.append(payload[1:33])

    def seal_open(self, sealed, ad):
        """SealTo (§5.2): eph_pub || KeyWrap under HKDF(X25519(eph, pub), eph_pub || pub)."""
        if len(sealed) < 32 + 28:
            return None
        try:
            shared = self.private.exchange(X25519PublicKey.from_public_bytes(bytes(sealed[:32])))
        except ValueError:
            return None
        return unseal(hkdf(shared, bytes(sealed[:32]) + self.public, b"nu11vlt recovery seal v1"), sealed[32:], ad)

    def meta_keys(self, domain):
        return [subkey(m, b"index metadata") for m in self.mains] if domain == 1 else []

    def item_key(self, item_id, kind, domain, index_seal, sidecar_seal):
        seals = [s for s in (index_seal, sidecar_seal) if s and any(s)]
        ad = b"nu11vlt recovery item v1" + self.vault_id + item_id + bytes([kind])
        for s in seals:
            key = self.seal_open(s, ad)
            if key is not None and len(key) == 32:
                return key
        if seals:
            raise Bad("its recovery seal does not open with this phrase (sealed to another phrase, or altered)")
        return None


class KeyStore:
    """§4: device key (§4.1), master.n11k behind the PIN (§4.2, Argon2id), forward records of
    an unfinished rotation (§4.2a), the item key records (§4.3 packs; layout 1's loose files)."""
    what = "the key store"
    left_out = "it has no key record (deleted, or its record is lost)"
    left_out_summary = "without a key record (deleted, or their record is lost)"
    counts_fade = False         # the other vault's Fade items are not this PIN's to mention
    seal_in_sidecar = False     # the key records are in the key store

    def __init__(self, ks):
        d = read_file(os.path.join(ks, "device.n11d"), 64)
        m = read_file(os.path.join(ks, "master.n11k"), 1 << 16)
        if d is None or m is None:
            fail(f"{ks} is not a key store (device.n11d or master.n11k is missing)")
        if m[:4] == b"N11K" and m[4:5] in (b"\x02", b"\x04"):
            fail("this key store is bound to a TPM (master.n11k version %d): open it with nu11vlt, "
                 "or use the recovery phrase (--vault VAULTDIR OUTDIR)" % m[4])
        if len(d) < 37 or d[:5] != b"N11D\x01":
            fail("device.n11d is not a version 1 device key")
        if m[:4] != b"N11K" or m[4] not in (1, 3) or m[5] != 1 or len(m) != (500 if m[4] == 1 else 532):
            fail("master.n11k is not a version 1 or 3 master record")
        t, mem = struct.unpack(">II", m[8:16])
        if not 1 <= t <= MAX_T or not 8 <= mem <= MAX_M_KIB:
            fail("master.n11k asks for a KDF cost over the cap")
        pin = sys.stdin.buffer.readline().rstrip(b"\n")
        forms = []
        try:
            forms.append(unicodedata.normalize("NFC", pin.decode()).encode())
        except UnicodeDecodeError:
            pass
        forms += [] if pin in forms else [pin]        # a PIN set before normalisation, as typed
        head = m[:4] + b"\x01" + m[5:32]                # byte 4 read as 1 whatever the version
        self.sets = []
        for form in forms:
            kek = hkdf(argon2id(form, m[16:32], t, mem), d[5:37], b"nu11vlt kek v1")
            for i in range(3):
                k = hkdf(kek, m[-32:], b"nu11vlt kek slot 0 v1") if i == 0 and m[4] == 3 else kek
                ad = (head if i == 0 else head[:6] + b"\x00" + head[7:]) + bytes([i])
                p = unseal(k, m[32 + 156 * i:188 + 156 * i], ad)
                if p is not None and len(p) == 128:
                    self.sets.append((p[0], p[1:33], p[33:65]))
            if self.sets:
                break
        if not self.sets:
            fail("the PIN does not open this key store")
        self.follow_forward(ks)
        roles = {s[0] for s in self.sets}
        self.domains = ({1} if 1 in roles else set()) | ({3} if roles & {2, 3} else set()) | {2}
        self.fade_deadlines, self.now = self.read_state(ks, d[5:37])
        vid = read_file(os.path.join(ks, "vault-id.n11v"), 4096) or b""
        plain = unseal(subkey(d[5:37], b"vault id"), vid[5:], b"nu11vlt vault id v1") if vid[:5] == b"N11V\x01" else None
        self.vault_id = plain if plain and len(plain) == 16 else None
        self.records = {}
        for name in listdir(os.path.join(ks, "keys")):
            pack = read_file(os.path.join(ks, "keys", name), 1 << 30) or b""
            if re.match(r"^[0-9a-f]{2}\.n11p$", name) and pack[:5] == b"N11P\x01":
                for o in range(8, len(pack) - 83, 84):
                    self.add_record(pack[o:o + 84])
        for folder in ("items", "quarantine"):
            for name in listdir(os.path.join(ks, folder)):
                if name.endswith(".key"):
                    self.add_record(read_file(os.path.join(ks, folder, name), 84) or b"")

    @staticmethod
    def read_state(ks, device_key):
        """§4.4 state.n11s: "N11S" || 1 || SmallSeal(JSON, Subkey(device key, "device state"),
        ad = "nu11vlt device state v1"): ({item ID: Fade deadline, unix seconds}, or None when it
        does not open; now, never before the state's latest seen time)."""
        f = read_file(os.path.join(ks, "state.n11s")) or b""
        plain = unseal(subkey(device_key, b"device state"), f[5:], b"nu11vlt device state v1") if f[:5] == b"N11S\x01" else None
        try:
            state = json.loads(plain) if plain is not None else None
        except ValueError:
            state = None
        if not isinstance(state, dict):
            say("state.n11s does not open with this key store's device key: Fade items are left out")
            return None, time.time()
        return {e.get("id"): float(e.get("deadline") or 0) for e in state.get("fade") or [] if isinstance(e, dict)}, \
            max(time.time(), float(state.get("latestSeen") or 0))    # time never runs backwards (§4.4)

    def fades_at(self, hexid, domain):
        return self.fade_deadlines.get(hexid) if domain == 2 and self.fade_deadlines else None

    def add_record(self, r):
        """§4.3: "N11R" || 1 || domain || kind || 0 || item ID || KeyWrap(item key, domain key, ad = bytes[0..<24])."""
        if len(r) == 84 and r[:5] == b"N11R\x01":
            self.records.setdefault(r[8:24], []).append(r)

    def follow_forward(self, ks):
        """§4.2a forward/<hex(tag(old))>.n11f: the keys an unfinished rotation leads to (both
        sets open records and rows until it is finished)."""
        todo = list(self.sets)
        while todo:
            role, main, _ = todo.pop()
            tag = subkey(main, b"forward tag")[:16]
            f = read_file(os.path.join(ks, "forward", tag.hex() + ".n11f"), 4096) or b""
            p = unseal(subkey(main, b"forward wrap"), f[24:180], f[:24] + tag) if f[:5] == b"N11F\x01" else None
            if p is not None and len(p) == 128 and all(p[1:33] != s[1] for s in self.sets):
                self.sets.append((p[0], p[1:33], p[33:65]))
                todo.append(self.sets[-1])

    def domain_keys(self, domain):
        """§4.2: the main key of role 1 wraps domain 1; of roles 2 and 3 domain 3; each vault's
        Fade key domain 2."""
        if domain == 2:
            return [s[2] for s in self.sets if any(s[2])]
        return [s[1] for s in self.sets if (s[0] == 1) == (domain == 1)] if domain in (1, 3) else []

    def meta_keys(self, domain):
        return [subkey(k, b"index metadata") for k in self.domain_keys(domain)]

    def item_key(self, item_id, kind, domain, index_seal, sidecar_seal):
        records = [r for r in self.records.get(item_id, []) if r[5] == domain and r[6] == kind]
        if domain == 2 and (self.fade_deadlines is None or not records):
            raise Quiet()
        for r in records:
            for k in self.domain_keys(domain):
                key = unseal(k, r[24:84], r[:24])
                if key is not None and len(key) == 32:
                    # A Fade item only before its deadline (the vault shreds it at its next command).
                    if domain == 2 and self.fade_deadlines.get(item_id.hex(), self.now + 1) <= self.now:
                        raise Quiet("faded")
                    return key
        if records and domain == 2:
            raise Quiet()          # the other vault's Fade item
        if records:
            raise Bad("its key record does not open under the keys this PIN opens")
        return None
