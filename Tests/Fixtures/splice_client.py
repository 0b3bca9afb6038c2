#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""An adversary's client for Nu11VLT, for end-to-end tests: written from docs/FORMAT.md alone (no
code shared with nu11vlt), it reports what a credential opens in copies of a vault and key store.

  splice_client.py pin --keystore KS --vault V --item ID           PIN on stdin
  splice_client.py phrase --vault V --item ID [--keystore KS]      recovery phrase on stdin
  splice_client.py listing --keystore KS --vault V                 PIN on stdin
  splice_client.py securitykey --keystore KS --vault V --item ID   and one of --hmac-secret-hex-stdin,
        --cred-random-hex [HEX; else on stdin], --authenticator-state FILE (soft_fido2.py's state)
  splice_client.py selftest                                        public vectors, no vault

stdout is one line: `opened <ID> sha256=<hex> name=<name or ?>` (exit 0), or the step that failed
(exit 1): no-device-key no-master no-slot no-record record-does-not-open no-file
content-does-not-open; no-recovery-file no-seal phrase-does-not-open seal-does-not-open;
no-listing listing-does-not-open; no-security-keys security-keys-do-not-open no-entry
entry-does-not-open kek-does-not-open. `tpm-bound` exits 3; a crash prints `error`, exits 2.
Where several ways in fail (phrase), the furthest step is named. Details go to stderr.
"""
import argparse, glob, hashlib, hmac, json, os, sqlite3, struct, sys, traceback, unicodedata, urllib.parse, zlib
from collections import namedtuple

from argon2.low_level import Type, hash_secret_raw
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

KeySet = namedtuple("KeySet", "role main fade archive created via")


class Step(Exception):
    """A failed step: its name goes to stdout."""


def note(msg):
    print(f"splice_client: {msg}", file=sys.stderr)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def hkdf(ikm, salt, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def subkey(key, purpose):
    """§3: Subkey(K, purpose) = HKDF-Expand-SHA-256(K, "nu11vlt subkey v1 " || purpose, 32)."""
    return HKDFExpand(algorithm=hashes.SHA256(), length=32, info=b"nu11vlt subkey v1 " + purpose).derive(key)


def unwrap(key, blob, ad):
    """§3 KeyWrap, §5.1 SmallSeal: nonce (12) || ChaCha20-Poly1305(K, nonce, x, ad); None if it fails."""
    try:
        return ChaCha20Poly1305(key).decrypt(blob[:12], blob[12:], ad) if len(blob) >= 28 else None
    except Exception:
        return None


def chunked_open(key, context, data, aead_name=b"AEAD_CHACHA20_POLY1305", aead=ChaCha20Poly1305):
    """§1 (c2sp.org/chunked-encryption, HKDF-SHA-512): the commitment before any chunk, every chunk,
    the short final chunk. The whole plaintext, or ValueError("truncated" | "corrupted")."""
    if len(key) != 32:
        raise ValueError("corrupted")
    if len(data) < 56:
        raise ValueError("truncated")
    info = b"c2sp.org/chunked-encryption@v1+" + aead_name + b"\x00" + data[:24] + context
    okm, body = HKDFExpand(algorithm=hashes.SHA512(), length=76, info=info).derive(key), data[56:]
    if not hmac.compare_digest(okm[44:], data[24:56]):
        raise ValueError("corrupted")
    if len(body) % 16400 == 0:                     # ends after a full chunk, or holds none
        raise ValueError("truncated")
    if len(body) % 16400 < 16:
        raise ValueError("corrupted")
    box, base, out = aead(okm[:32]), int.from_bytes(okm[32:44], "big"), []
    for i, pos in enumerate(range(0, len(body), 16400)):
        try:
            out.append(box.decrypt((base ^ i).to_bytes(12, "big"), body[pos:pos + 16400], None))
        except Exception:
            raise ValueError("corrupted") from None
    return b"".join(out)


def open_n11(data, key, item_id, domain=None, kind=None):
    """§2: "NU11" || 1 || kind || domain || flags 0 || ID, then N11-ChaCha with context "nu11vlt.n11" || header."""
    if len(data) < 24:
        raise ValueError("truncated")
    h = data[:24]
    if h[:4] == b"NU11" and h[4] != 1:
        raise ValueError("unsupportedVersion")
    if h[:4] != b"NU11" or h[7] != 0 or h[8:] != item_id or domain not in (None, h[6]) or kind not in (None, h[5]):
        raise ValueError("corrupted")
    return chunked_open(key, b"nu11vlt.n11" + h, data[24:])


def device_key(ks):
    """§4.1 device.n11d: "N11D" || 1 || device key (32)."""
    d = read(os.path.join(ks, "device.n11d"))
    if not d or d[:5] != b"N11D\x01" or len(d) < 37:
        raise Step("no-device-key")
    return d[5:37]


def parse_payload(p, via):
    """§4.2 payload (128): role || main || fade || archive || created (8) || 23 zero bytes."""
    return KeySet(p[0], p[1:33], p[33:65], p[65:97], struct.unpack(">Q", p[97:105])[0], via)


def read_master(ks):
    """§4.2 master.n11k, version 1, or 3 (version 1 + slot 0's pepper, its last 32 bytes, §4.2e);
    versions 2 and 4 are bound to a TPM (§4.2b: not opened here)."""
    m = read(os.path.join(ks, "master.n11k"))
    if m and m[:5] in (b"N11K\x02", b"N11K\x04"):
        print("tpm-bound")
        sys.exit(3)
    if not m or m[:6] not in (b"N11K\x01\x01", b"N11K\x03\x01") or len(m) != (500 if m[4] == 1 else 532):
        raise Step("no-master")
    return m


def pin_keks(m, dkey, pin):
    """§4.2: KEK = HKDF-SHA-256(Argon2id(NFC(PIN), salt, t, m, p = 1), salt = device key, "nu11vlt kek v1");
    the PIN as typed too when it is not NFC. Costs capped (t <= 32, m <= 4 GiB) first."""
    t, mem = struct.unpack(">II", m[8:16])
    if not 1 <= t <= 32 or not 8 <= mem <= 4 << 20:
        raise Step("no-master")
    forms = []
    try:
        forms.append(unicodedata.normalize("NFC", pin.decode("utf-8")).encode())
    except UnicodeDecodeError:
        pass
    forms += [] if pin in forms else [pin]
    return [hkdf(hash_secret_raw(f, m[16:32], time_cost=t, memory_cost=mem, parallelism=1, hash_len=32, type=Type.ID),
                 dkey, b"nu11vlt kek v1") for f in forms]


def open_slots(m, kek, from_pin=True):
    """§4.2: slot i = KeyWrap(payload, KEK_i, ad = bytes[0..<32] || i), byte 6 (flags) = 0 for slots 1, 2, and
    byte 4 read as 1 in every version; §4.2e: in version 3 slot 0's KEK from a PIN is
    HKDF-SHA-256(KEK, salt = pepper, "nu11vlt kek slot 0 v1") (a security key gives slot 0's KEK itself)."""
    sets, head = [], m[:4] + b"\x01" + m[5:32]
    cleared = head[:6] + b"\x00" + head[7:32]
    for i in range(3):
        k = hkdf(kek, m[-32:], b"nu11vlt kek slot 0 v1") if i == 0 and m[4] == 3 and from_pin else kek
        p = unwrap(k, m[32 + 156 * i:188 + 156 * i], (cleared if i else head) + bytes([i]))
        sets += [parse_payload(p, f"slot {i}")] if p and len(p) == 128 else []
    return sets


def follow_forward(ks, sets):
    """§4.2a forward/<hex(tag(old))>.n11f: "N11F" || 1 || 000 || tag(new) || KeyWrap(payload(new),
    Subkey(old main, "forward wrap"), ad = bytes[0..<24] || tag(old)); tag(k) = Subkey(k.main, "forward tag")[:16]."""
    out, todo = list(sets), list(sets)
    while todo:
        old = todo.pop()
        tag = subkey(old.main, b"forward tag")[:16]
        f = read(os.path.join(ks, "forward", tag.hex() + ".n11f"))
        if not f:
            continue
        p = unwrap(subkey(old.main, b"forward wrap"), f[24:180], f[:24] + tag) if f[:5] == b"N11F\x01" else None
        if not p or len(p) != 128:
            note(f"forward/{tag.hex()}.n11f does not open under {old.via}")
            continue
        new = parse_payload(p, old.via + " -> forward")
        if subkey(new.main, b"forward tag")[:16] != f[8:24]:
            note(f"forward/{tag.hex()}.n11f: tag(new) does not match its payload")
        if all(new.main != s.main for s in out):
            out.append(new)
            todo.append(new)
    return out


def find_records(ks, item_id):
    """§4.3 keys/<hh>.n11p ("N11P" || 1 || 000, then 84-byte slots); layout 1 items/<ID>.key; §4.4b quarantine/."""
    pack = read(os.path.join(ks, "keys", f"{item_id[0]:02x}.n11p")) or b""
    recs = [pack[o:o + 84] for o in range(8, len(pack) - 83, 84)] if pack[:5] == b"N11P\x01" else []
    recs += [read(os.path.join(ks, d, item_id.hex() + ".key")) or b"" for d in ("items", "quarantine")]
    return [r for r in recs if len(r) == 84 and r[:5] == b"N11R\x01" and r[8:24] == item_id]


def unwrap_records(recs, sets):
    """§4.3: KeyWrap(item key, domain key, ad = record[0..<24]); domain 1 = main key of role 1, 3 = main key
    of roles 2, 3 (§4.2), 2 = fade key, 4 = archive key (inferred). Then, as an adversary, every other key
    (said on stderr if one opens). Returns [(item key, the key that opened it)]."""
    named = {1: lambda s: [s.main] * (s.role == 1), 3: lambda s: [s.main] * (s.role in (2, 3)),
             2: lambda s: [s.fade], 4: lambda s: [s.archive]}
    found = []
    for r in recs:
        first = [(k, s) for s in sets for k in named.get(r[5], lambda s: [])(s)]
        rest = [(k, s) for s in sets for k in s[1:4] if (k, s) not in first]
        for i, (k, s) in enumerate(first + rest):
            ik = unwrap(k, r[24:84], r[:24])
            if ik is not None:
                found.append((ik, k))
                if i >= len(first):
                    note(f"a domain {r[5]} record opened under a key of {s.via} that §4.3 does not name")
    return found


def index_query(vault, sql, *args):
    """§5.1 index.sqlite, opened read-only; None when absent or without that table."""
    path = os.path.join(vault, "index.sqlite")
    if not os.path.isfile(path):
        return None
    try:
        with sqlite3.connect("file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro", uri=True) as db:
            return db.execute(sql, args).fetchone()
    except sqlite3.Error:
        return None


def item_name(vault, item_id, keys):
    """§5.1: meta = SmallSeal(JSON, Subkey(domain key, "index metadata"), ad = "nu11vlt item meta v2" || ID ||
    album ID or zeros), or the older ad "nu11vlt item meta v1" || ID."""
    row = index_query(vault, "SELECT album, meta FROM item WHERE id = ?", item_id.hex())
    if not row or not row[1]:
        return "?"
    ads = [b"nu11vlt item meta v2" + item_id + (bytes.fromhex(row[0]) if row[0] else bytes(16)),
           b"nu11vlt item meta v1" + item_id]
    for plain in (unwrap(subkey(k, b"index metadata"), bytes(row[1]), ad) for k in keys for ad in ads):
        if plain is not None:
            return str(json.loads(plain.decode().rstrip(" ")).get("name", "?")).replace("\n", "\\n")
    return "?"


def opened(vault, item_id, item_keys, meta_keys):
    """§5: the item's file in any of its places (§2), under any item key found; then its name (§5.1)."""
    h = item_id.hex()
    pats = [f"Vault/Photos/{h}.n11", f"Vault/Albums/*/{h}.n11", f"Fade/{h}.n11", f"Backup/{h}.n11",
            f"Notes/vault_{h}.n11note", f"Notes/fade_{h}.n11note"]
    paths = [p for pat in pats for p in sorted(glob.glob(os.path.join(glob.escape(vault), pat)))]
    if not paths:
        raise Step("no-file")
    for p in paths:
        for k in item_keys:
            try:
                plain = open_n11(read(p) or b"", k, item_id)
            except ValueError as e:
                note(f"{os.path.relpath(p, vault)}: {e}")
                continue
            print(f"opened {h} sha256={hashlib.sha256(plain).hexdigest()} name={item_name(vault, item_id, meta_keys)}")
            return
    raise Step("content-does-not-open")


def through_keystore(args, sets):
    """The slots' key sets, then forward records (§4.2a) -> the key record (§4.3) -> the content."""
    if not sets:
        raise Step("no-slot")
    sets = follow_forward(args.keystore, sets)
    note("key sets: " + ", ".join(f"{s.via} (role {s.role})" for s in sets))
    recs = find_records(args.keystore, args.item)
    found = unwrap_records(recs, sets)
    if not found:
        raise Step("record-does-not-open" if recs else "no-record")
    opened(args.vault, args.item, [ik for ik, _ in found], [k for _, k in found] + [k for s in sets for k in s[1:3]])


def unlock_pin(args):
    m, dkey = read_master(args.keystore), device_key(args.keystore)
    pin = sys.stdin.buffer.readline().rstrip(b"\n")
    return [s for kek in pin_keks(m, dkey, pin) for s in open_slots(m, kek)]


def cmd_pin(args):
    through_keystore(args, unlock_pin(args))


def cmd_listing(args):
    """§4.6b listing.n11g: "N11G" || 1 || 000 (also the ad) || SmallSeal(count (u32 LE) || count × 74-byte
    entry (item ID first), HKDF(Vault key, "nu11vlt subkey v1 listing cache"), read as Subkey)."""
    sets = unlock_pin(args)
    if not sets:
        raise Step("no-slot")
    f = read(os.path.join(args.keystore, "listing.n11g"))
    if f is None:
        raise Step("no-listing")
    for s in follow_forward(args.keystore, sets) if f[:8] == b"N11G\x01\x00\x00\x00" else []:
        plain = unwrap(subkey(s.main, b"listing cache"), f[8:], f[:8])
        if plain and len(plain) >= 4:
            n = struct.unpack("<I", plain[:4])[0]
            if len(plain) != 4 + 74 * n:
                note(f"listing.n11g says {n} entries in {len(plain) - 4} bytes")
            print(f"listing {n} ids")
            print("".join(plain[o:o + 16].hex() + "\n" for o in range(4, 4 + 74 * n, 74)), end="")
            return
    raise Step("listing-does-not-open")


def seal_open(private, sealed, ad):
    """§5.2 SealTo = eph_pub || KeyWrap(x, HKDF-SHA-256(X25519(eph, pub), salt = eph_pub || pub,
    "nu11vlt recovery seal v1"), ad)."""
    try:
        shared = private.exchange(X25519PublicKey.from_public_bytes(sealed[:32]))
    except Exception:
        return None
    pub = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return unwrap(hkdf(shared, sealed[:32] + pub, b"nu11vlt recovery seal v1"), sealed[32:], ad)


def recovery_sets(rec, private):
    """§5.2 recovery.n11r sets: SealTo(pub, payload, "nu11vlt recovery keys v1" || bytes[8..<56]) (188) ||
    binding = HMAC-SHA-256(Subkey(main, "recovery binding"), bytes[8..<56]) (32)."""
    sets = []
    for i in range(rec[5]):
        s = rec[56 + 220 * i:276 + 220 * i]
        p = seal_open(private, s[:188], b"nu11vlt recovery keys v1" + rec[8:56])
        if p and len(p) == 128:
            sets.append(parse_payload(p, f"recovery set {i}"))   # a zero fade key (version 2) opens nothing
            binding = hmac.new(subkey(sets[-1].main, b"recovery binding"), rec[8:56], "sha256").digest()
            if not hmac.compare_digest(s[188:], binding):
                note(f"recovery set {i}: its binding does not verify")
    return sets


def cmd_phrase(args):
    """§5.2: private = HKDF-SHA-256(phrase, vault ID, "nu11vlt recovery phrase v1"), for the vault ID of
    recovery.n11r and of the index; (a) the item's `recovery` row, (b) the file's key sets + the key store."""
    modhex, typed = "cbdefghijklnrtuv", [c for c in sys.stdin.readline().lower() if c not in " -\t\r\n"]
    if len(typed) != 32 or any(c not in modhex for c in typed):
        raise Step("phrase-does-not-open")
    phrase = bytes(modhex.index(typed[i]) << 4 | modhex.index(typed[i + 1]) for i in range(0, 32, 2))
    rec, hexid = read(os.path.join(args.vault, "recovery.n11r")), args.item.hex()
    if rec and (rec[:4] != b"N11Q" or rec[4] not in (1, 2) or not 1 <= rec[5] <= 8 or len(rec) != 56 + 220 * rec[5]):
        note("recovery.n11r is not N11Q version 1 or 2 of its length")
        rec = None
    vids = [rec[8:24]] if rec else []
    vid = (index_query(args.vault, "SELECT id FROM vault") or [None])[0]
    vids += [bytes.fromhex(vid)] if vid and bytes.fromhex(vid) not in vids else []
    privs = [X25519PrivateKey.from_private_bytes(hkdf(phrase, v, b"nu11vlt recovery phrase v1")) for v in vids]
    seal = (index_query(args.vault, "SELECT seal FROM recovery WHERE id = ?", hexid) or [None])[0]
    if rec is None and seal is None:
        raise Step("no-recovery-file")
    kind = (index_query(args.vault, "SELECT kind FROM item WHERE id = ?", hexid) or [None])[0]
    failed, keys, sets = [], [], []
    if seal is None:                                                                      # (a)
        failed.append("no-seal")
    else:
        for priv, v in zip(privs, vids):
            for k in [kind] if kind in (1, 2) else [1, 2]:
                ik = seal_open(priv, bytes(seal), b"nu11vlt recovery item v1" + v + args.item + bytes([k]))
                keys += [ik] if ik else []
        failed += [] if keys else ["seal-does-not-open"]
    mine = [p for p in privs if rec and p.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) == rec[24:56]]
    if rec:                                                                               # (b)
        sets = recovery_sets(rec, mine[0]) if mine else []
        failed += [] if sets else ["seal-does-not-open" if mine else "phrase-does-not-open"]
        if sets and args.keystore:
            sets = follow_forward(args.keystore, sets)
            recs = find_records(args.keystore, args.item)
            found = unwrap_records(recs, sets)
            failed += [] if found else ["record-does-not-open" if recs else "no-record"]
            keys += [ik for ik, _ in found]
    if not keys:
        order = ["no-recovery-file", "no-seal", "phrase-does-not-open", "seal-does-not-open", "no-record",
                 "record-does-not-open"]
        raise Step(max(failed, key=order.index))
    opened(args.vault, args.item, keys, [k for s in sets for k in s[1:3]])


def cmd_securitykey(args):
    """§4.2d security-keys.n11u: "N11U" || 1 || 000 || SmallSeal(body, Subkey(device key, "security keys"),
    ad = bytes[0..<8]); per in-use entry W = HKDF-SHA-256(hmac-secret, device key, "nu11vlt security key v1")
    opens F (ad "N11U entry v1" || entry ID), F opens K0 (ad "N11U kek v1"), K0 opens the slot."""
    dkey, f = device_key(args.keystore), read(os.path.join(args.keystore, "security-keys.n11u"))
    if not f or f[:8] not in (b"N11U\x01\x00\x00\x00", b"N11U\x02\x00\x00\x00"):
        raise Step("no-security-keys")
    body = unwrap(subkey(dkey, b"security keys"), f[8:], f[:8])
    size = 400 if f[4] == 1 else 464          # version 2: entries of 464 bytes, kind 2 sealed to a public key
    if body is None or len(body) != 120 + 4 * size:
        raise Step("security-keys-do-not-open")
    state = json.load(open(args.authenticator_state)) if args.authenticator_state else None
    given = None if state else bytes.fromhex(args.cred_random_hex if args.cred_random_hex not in (None, "-")
                                             else sys.stdin.readline().strip())
    entries = [e for e in (body[120 + size * i:120 + size * (i + 1)] for i in range(4))
               if e[0] in (1, 2) and 1 <= struct.unpack(">H", e[2:4])[0] <= 256]
    if not entries:
        raise Step("no-entry")
    fs = []
    for e in entries:
        cred, salt, eid = e[4:4 + struct.unpack(">H", e[2:4])[0]], e[260:292], e[292:308]
        if state is not None:     # soft_fido2.py: HMAC-SHA-256(CredRandom, salt); with UV for policy 2
            c = state["creds"].get(cred.hex())
            randoms = ([c["with_uv"], c["without_uv"]][::1 if e[1] == 2 else -1]) if c else []
            secrets = [hmac.new(bytes.fromhex(r), salt, "sha256").digest() for r in randoms]
        else:
            secrets = [given if args.hmac_secret_hex_stdin else hmac.new(given, salt, "sha256").digest()]
        for j, hs in enumerate(secrets):
            w = hkdf(hs, dkey, b"nu11vlt security key v1")
            key_f = unwrap(w, e[340:400], b"N11U entry v1" + eid) if e[0] == 1 else open_entry_v2(w, e, eid)
            if key_f is not None:
                note(f"entry {eid.hex()} (policy {e[1]}) opens" + (" with the other CredRandom" if j else ""))
                fs.append(key_f)
                break
    if not fs:
        raise Step("entry-does-not-open")
    k0s = [k for k in (unwrap(x, body[60:120], b"N11U kek v1") for x in fs) if k]
    if not k0s:
        raise Step("kek-does-not-open")
    through_keystore(args, [s for k0 in k0s for s in open_slots(read_master(args.keystore), k0, from_pin=False)])


def open_entry_v2(w, e, eid):
    """§4.2d kind 2: e = HKDF-SHA-256(W, salt = "", "nu11vlt security key entry v2") as X25519; P_e at 340;
    SealTo at 372: eph || KeyWrap(F, HKDF-SHA-256(X25519(e, eph), salt = eph || P_e, "nu11vlt security key seal v1"),
    ad = "N11U entry v2" || entry ID)."""
    priv = X25519PrivateKey.from_private_bytes(hkdf(w, b"", b"nu11vlt security key entry v2"))
    pub = priv.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    if pub != e[340:372]:
        return None
    eph = e[372:404]
    shared = priv.exchange(X25519PublicKey.from_public_bytes(eph))
    return unwrap(hkdf(shared, eph + pub, b"nu11vlt security key seal v1"), e[404:464], b"N11U entry v2" + eid)


def cmd_selftest(_args):
    """§1, §2, §4.2, §4.3 against Tests/Nu11FormatTests/Vectors: c2sp's public Cobblestone-256 vectors and
    the project's N11-ChaCha, envelope and key store vectors."""
    vec = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Nu11FormatTests", "Vectors")
    load, bad, n = (lambda name: json.load(open(os.path.join(vec, name)))), [], 0
    for name, aead_name, aead in [("c2sp_chunked_encryption_aes_256_gcm_test.json", b"AEAD_AES_256_GCM", AESGCM),
                                  ("nu11vlt_chunked_chacha20_poly1305_test.json", b"AEAD_CHACHA20_POLY1305",
                                   ChaCha20Poly1305),
                                  ("nu11vlt_n11_envelope_test.json", None, None)]:
        for t in (t for g in load(name)["testGroups"] for t in g["tests"]):
            key, ct, x, n = bytes.fromhex(t["key"]), zlib.decompress(bytes.fromhex(t["ct"])), t.get("expect"), n + 1
            try:
                got = (chunked_open(key, bytes.fromhex(t["ctx"]), ct, aead_name, aead) if aead else
                       open_n11(ct, key, bytes.fromhex(x["itemId"]), {"vault": 1, "fade": 2, "backup": 3}[x["domain"]],
                                {"file": 1, "note": 2}[x["kind"]]))
                ok = t["result"] == "valid" and hashlib.sha512(got).hexdigest() == t["msgSha512"]
            except ValueError as e:
                ok = t["result"] == "invalid" and t.get("error", str(e)) == str(e)
            bad += [] if ok else [f"{name} #{t['tcId']} {t['comment']}"]
    ks = load("nu11vlt_keystore_test.json")
    for t in ks["master"]:
        m, n = bytes.fromhex(t["record"]), n + 1
        got = [(int(s.via[-1]), s.role, [s.main.hex(), s.fade.hex(), s.archive.hex()])
               for k in pin_keks(m, bytes.fromhex(t["deviceKey"]), t["pin"].encode()) for s in open_slots(m, k)]
        bad += [] if got == ([(t["slot"], t["role"], t["keys"])] if t["result"] == "valid" else []) else [t["comment"]]
    for t in ks["itemKeyRecords"]:
        r, n = bytes.fromhex(t["record"]), n + 1
        got = unwrap(bytes.fromhex(t["domainKey"]), r[24:84], r[:24])
        bad += [] if (got.hex() if got else None) == t["itemKey"] else [t["comment"]]
    print("".join(f"BAD {b}\n" for b in bad) + f"selftest: {n - len(bad)} of {n} vectors pass")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description="An adversary's Nu11VLT client (tests only); see the source.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("pin", "phrase", "listing", "securitykey", "selftest"):
        p = sub.add_parser(name)
        if name != "selftest":
            p.add_argument("--keystore", required=name != "phrase")
            p.add_argument("--vault", required=True)
        if name in ("pin", "phrase", "securitykey"):
            p.add_argument("--item", required=True, type=lambda s: bytes.fromhex(s) if len(s) == 32 else b"")
        if name == "securitykey":
            how = p.add_mutually_exclusive_group(required=True)
            how.add_argument("--hmac-secret-hex-stdin", action="store_true")
            how.add_argument("--cred-random-hex", nargs="?", const="-")
            how.add_argument("--authenticator-state")
    args = ap.parse_args()
    if getattr(args, "item", None) == b"":
        ap.error("--item takes 32 hex digits")
    try:
        return globals()["cmd_" + args.cmd](args) or 0
    except Step as s:
        print(s.args[0])
        return 1
    except Exception:       # a crash is never "does not open"
        traceback.print_exc()
        print("error")
        return 2


if __name__ == "__main__":
    sys.exit(main())
