#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""An independent decrypter for Nu11VLT, written from docs/FORMAT.md alone — no code shared
with nu11vlt:

    nu11vlt_decrypt.py ARCHIVE OUTDIR                              portable archive (§6); password on stdin
    nu11vlt_decrypt.py --vault VAULTDIR OUTDIR                     vault folder + recovery phrase (§5.2); phrase on stdin
    nu11vlt_decrypt.py --vault VAULTDIR --keystore KSDIR OUTDIR    vault folder + key store (§4); PIN on stdin

The vault modes read index.sqlite when it is sound and every item's sidecar (Meta/<ID>.n11m,
§2.2) for what the index lacks — so they work with the index deleted or damaged (§5.3).
Needs Debian's python3-cryptography, and python3-argon2 for archives and the key store; and
nu11vlt_decrypt_output.py beside this file.

What OUTDIR gets from a vault folder (files 0600; nothing already there is ever replaced):
  * every file item, flat, as `nu11vlt export --all -o OUTDIR` writes it: the same bytes,
    the same file name (made safe: no "/", "\\" or control character, no leading dot; a taken
    name gets " (2)" before its extension), in export's order (capture date, else the
    file's date, else the import time), and the source file's modification time set back
    from the sealed metadata;
  * then every note, as TITLE.txt holding its body (export --all takes no notes);
  * last nu11vlt-decrypt-manifest.json: for each item its id, file, kind, name, size, type,
    album and albumID, created, modified and taken (unix seconds), fadesAt (a Fade item's
    deadline), and the Live Photo link both ways ("motion" on the still, "still" on its
    video: {id, file}); the albums, empty ones too; what did not come back
    ("notRecovered": id, reason, why).
Albums are not folders, since export makes none: an item's album is in the manifest and in
the line printed for it. Fade items: with the key store, those before their deadline come
back like any item, those past it do not (they are meant to disappear) and are counted; the
phrase never covers a Fade item, so they are counted, not opened. An item whose metadata
does not open (sidecar lost or altered with the index gone) still comes back, named
recovered-<8 hex digits of its ID>, without its date; but with the phrase and no index row,
an item whose sidecar is lost does not (its recovery seal was in it): the key store opens it.
An archive's items go to OUTDIR the same way (names made safe), without a manifest.
Prints one line per item (stdout): kind TAB album TAB file name TAB size; then one summary
line (stderr): how many recovered, how many without their name, what was not and why.
Exit 0: every item it could open was written; 1: an error, or some item is damaged (named
on stderr).
"""
import hmac
import json
import math
import os
import re
import sqlite3
import struct
import sys
import time
import unicodedata
import urllib.parse
import zipfile

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
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
except ImportError as e:
    missing(e)

sys.dont_write_bytecode = True          # no __pycache__ beside the tool
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from nu11vlt_decrypt_output import MANIFEST, Output, Tally, safe_name
except ImportError:
    fail("nu11vlt_decrypt_output.py is missing: keep it beside nu11vlt_decrypt.py (both are in tools/)")


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


# ---------------------------------------------------------------------------------------------
# Portable archives (§6)

def decrypt_archive(archive, outdir):
    # Normalised to Unicode NFC, as nu11vlt does (§4.2).
    password = unicodedata.normalize("NFC", sys.stdin.readline().rstrip("\n")).encode()
    with zipfile.ZipFile(archive) as z:
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
        key = argon2id(password, bytes.fromhex(kdf["salt"]), kdf["iterations"], kdf["memoryKiB"])

        def entry_open(entry, context, sink):
            info = z.getinfo(entry)
            with z.open(info) as src:
                return chunked_open(key, context, src, info.file_size, sink)

        manifest = bytearray()
        try:
            if z.getinfo("manifest.c2sp").file_size > 64 << 20:
                fail("the manifest is over 64 MiB")
            entry_open("manifest.c2sp", b"nu11vlt-archive/v1/manifest", manifest.extend)
        except Bad:
            fail("wrong password, or the archive was altered (the manifest does not open)")
        out, failed = Output(outdir), 0
        for item in json.loads(bytes(manifest))["items"]:
            entry = item["entry"]
            try:
                def produce(sink, entry=entry, size=item["size"]):
                    n = entry_open(entry, b"nu11vlt-archive/v1/item/" + entry.encode(), sink)
                    if n != size:
                        raise Bad("its size differs from the manifest")
                    return n
                note = ".txt" if item["kind"] == "note" else ""
                name, size = out.write(out.plan(safe_name(str(item["name"]) + note, entry.split("/")[-1])), produce)
            except Bad as e:
                say(f"{entry}: {e}")
                failed += 1
                continue
            print(f"{item['kind']}\t{item.get('album') or ''}\t{name}\t{size}")
    if failed:
        fail(f"{failed} item(s) could not be decrypted (named above)")


# ---------------------------------------------------------------------------------------------
# Vault folders (§5): the index when it is sound, the sidecars (§2.2) for what it lacks.

ITEM_NAME = re.compile(r"^(vault_|fade_)?([0-9a-f]{32})\.(n11|n11note)$")
HEX32 = re.compile(r"^[0-9a-f]{32}$")


def listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def item_files(vault):
    """Every content file (§5) whose header (§2) names the item its file name does:
    {hex ID: [(path, header, album ID from its folder or None)]}."""
    places = [("Vault/Photos", None), ("Fade", None), ("Backup", None), ("Notes", None)]
    places += [("Vault/Albums/" + a, bytes.fromhex(a)) for a in listdir(os.path.join(vault, "Vault", "Albums"))
               if HEX32.match(a)]
    found = {}
    for rel, album in places:
        for name in listdir(os.path.join(vault, rel)):
            m = ITEM_NAME.match(name)
            if not m or (m.group(3) == "n11note") != (rel == "Notes") or (m.group(1) is None) != (rel != "Notes"):
                continue
            path = os.path.join(vault, rel, name)
            header = read_file(path, 24) or b""
            if len(header) >= 24 and header[:4] == b"NU11" and header[8:24] == bytes.fromhex(m.group(2)):
                found.setdefault(m.group(2), []).append((path, header[:24], album))
    return found


def read_index(vault):
    """§5.1, read-only: {vault, items, albums, seals}; None (with why) when missing or damaged."""
    path = os.path.join(vault, "index.sqlite")
    if not os.path.isfile(path):
        return None, "index.sqlite is missing"
    try:
        db = sqlite3.connect("file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro", uri=True)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "item" not in tables:
                return None, "index.sqlite holds no item table"
            row = db.execute("SELECT id FROM vault").fetchone() if "vault" in tables else None
            index = {"vault": bytes.fromhex(row[0]) if row and row[0] else None,
                     "items": db.execute("SELECT id, kind, domain, album, meta FROM item ORDER BY seq").fetchall(),
                     "albums": {r[0]: bytes(r[1] or b"") for r in db.execute("SELECT id, name FROM album")},
                     "seals": ({r[0]: bytes(r[1] or b"") for r in db.execute("SELECT id, seal FROM recovery")}
                               if "recovery" in tables else {})}
            return index, None
        finally:
            db.close()
    except (sqlite3.Error, ValueError) as e:
        return None, f"index.sqlite cannot be read ({e})"


def sidecar(vault, hexid, header):
    """§2.2 Meta/<ID>.n11m: (recovery seal or None, the file's bytes) when it is this item's."""
    data = read_file(os.path.join(vault, "Meta", hexid + ".n11m"))
    if (data is None or len(data) <= 116 + 28 or len(data) > 1 << 20 or data[:4] != b"N11M" or data[4] != 1
            or data[5:7] != header[5:7] or data[7] & ~1 or data[8:24] != header[8:24]):
        return None, None
    return (data[24:116] if data[7] & 1 else None), data


def sidecar_facts(data, item_key):
    """§2.2: SmallSeal(album flag || album ID || metadata JSON, Subkey(item key, "item sidecar"),
    ad = bytes[0..<7] || 0 || item ID) -> (metadata dict, album ID or None), or None."""
    plain = unseal(subkey(item_key, b"item sidecar"), data[116:], data[:7] + b"\x00" + data[8:24])
    if plain is None or len(plain) <= 17 or plain[0] > 1:
        return None
    try:
        return json.loads(plain[17:].decode().rstrip(" ")), (plain[1:17] if plain[0] == 1 else None)
    except ValueError:
        return None


def index_facts(blob, item_id, album, meta_keys):
    """§5.1 item meta, ad v2 (ID || album or zeros) or v1; the metadata dict or None."""
    ads = [b"nu11vlt item meta v2" + item_id + (album or bytes(16)), b"nu11vlt item meta v1" + item_id]
    for key in meta_keys:
        for ad in ads:
            plain = unseal(key, blob, ad)
            if plain is not None:
                try:
                    return json.loads(plain.decode().rstrip(" "))
                except ValueError:
                    return None
    return None


def album_names(vault, index, keys):
    """{album ID: name}: the index's rows, else Meta/<AlbumID>.n11a (§2.3), each opened under a
    metadata key the credential gave."""
    sealed = {}
    for name in listdir(os.path.join(vault, "Meta")):
        if name.endswith(".n11a") and HEX32.match(name[:-5]):
            data = read_file(os.path.join(vault, "Meta", name), 64 << 10) or b""
            if len(data) > 52 and data[:8] == b"N11A\x01\x00\x00\x00" and data[8:24].hex() == name[:-5]:
                sealed.setdefault(data[8:24], []).append(data[24:])
    for hexid, name in (index or {}).get("albums", {}).items():
        if HEX32.match(hexid):
            sealed.setdefault(bytes.fromhex(hexid), []).insert(0, name)
    names = {}
    for album, blobs in sealed.items():
        for blob in blobs:
            plain = next((p for k in keys for p in [unseal(k, blob, b"nu11vlt album name v1" + album)] if p), None)
            if plain is not None:
                names[album] = plain.rstrip(b"\0").decode(errors="replace")
                break
    return names


def number(info, *keys):
    """The first of `keys` that holds a number (Swift's `taken ?? modified ?? created`)."""
    for key in keys:
        value = info.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    return None


def open_item(vault, files, index, opener, tally, entry):
    """One item's key, metadata and album: a dict for `write_item`, or None (tallied)."""
    hexid, kind, domain, album, meta, seq = entry
    item_id = bytes.fromhex(hexid)
    paths = [f for f in files.get(hexid, []) if f[1][5] == kind and f[1][6] == domain]
    if not paths:
        say(f"item {hexid}: its file is missing from the vault folder")
        return tally.lost(hexid, "damaged", "its file is missing from the vault folder")
    seal, data = sidecar(vault, hexid, paths[0][1])
    try:
        item_key = opener.item_key(item_id, kind, domain, (index or {}).get("seals", {}).get(hexid), seal)
    except Quiet as q:
        return tally.lost(hexid, "faded", "past its Fade deadline") if q.args else None
    except Bad as e:
        say(f"item {hexid}: {e}")
        return tally.lost(hexid, "damaged", str(e))
    if item_key is None:
        if data is None and opener.seal_in_sidecar and not (index or {}).get("seals", {}).get(hexid):
            say(f"item {hexid}: its sidecar (Meta/{hexid}.n11m) is lost or not this item's, and with it its recovery seal")
            return tally.lost(hexid, "no-sidecar", "its sidecar, which holds its recovery seal, is lost or not this item's")
        return tally.lost(hexid, "left-out", opener.left_out)
    info = index_facts(meta, item_id, album, opener.meta_keys(domain)) if meta else None
    facts = sidecar_facts(data, item_key) if data else None
    if info is None and facts:
        info = facts[0]
    if meta is None:                       # not in the index: its folder, else its sidecar
        album = paths[0][2] or (facts[1] if facts and kind == 1 and domain != 2 else None)
    named = isinstance(info, dict) and isinstance(info.get("name"), str)
    if not named:
        say(f"item {hexid}: its name did not come back (no metadata opens); named recovered-{hexid[:8]}")
        info = {"name": f"recovered-{hexid[:8]}"}
    # export's order: the capture date, else the file's date, else the import time; ties in
    # import order (the index's, then the sidecars' import times); an item without metadata last.
    when = number(info, "taken", "modified", "created")
    order = (when is None, when or 0.0, seq is None, seq if seq is not None else number(info, "created") or 0.0, hexid)
    return {"id": hexid, "kind": kind, "domain": domain, "album": album, "info": info, "named": named,
            "key": item_key, "paths": paths, "order": order}


def write_item(vault, out, item, name):
    """Decrypts the item into OUTDIR as `name` (from its album's folder first): (name, size)
    or None when no copy of its file opens (each said on stderr)."""
    info, last = item["info"], "no readable copy"
    for path, header, _ in sorted(item["paths"], key=lambda p: p[2] != item["album"]):
        if header[4] != 1 or header[7] != 0:
            last = f"unsupported version {header[4]} or flags"
            say(f"item {item['id']}: {path}: {last}")
            continue
        try:
            def produce(sink, path=path, header=header):
                with open(path, "rb") as src:
                    src.seek(24)
                    n = chunked_open(item["key"], b"nu11vlt.n11" + header, src, os.fstat(src.fileno()).st_size - 24,
                                     sink, b"AEAD_CHACHA20_POLY1305", ChaCha20Poly1305)
                if isinstance(info.get("size"), int) and n != info["size"]:
                    raise Bad(f"{n} bytes, its metadata says {info['size']}")
                return n
            return out.write(name, produce, number(info, "modified"))
        except Bad as e:
            last = str(e)
            say(f"item {item['id']}: {os.path.relpath(path, vault)}: {e}")
    item["why"] = last
    return None


def manifest_entry(item, file, album_label, fades_at):
    info = item["info"]
    entry = {"id": item["id"], "file": file, "kind": "note" if item["kind"] == 2 else "file",
             "name": info["name"] if item["named"] else None, "size": info.get("size") if item["named"] else None,
             "type": info.get("type"), "album": album_label, "albumID": item["album"].hex() if item["album"] else None,
             "created": number(info, "created"), "modified": number(info, "modified"), "taken": number(info, "taken"),
             "fadesAt": fades_at, "motion": None, "still": None}
    return entry


def recover_items(vault, outdir, opener):
    """Every item of the domains `opener` holds keys for, from the index and the folder:
    files in export's order and names, then notes, then the manifest and the summary."""
    index, why = read_index(vault)
    if index is None:
        say(f"{why}: the items are read from their sidecars (Meta/)")
    elif opener.vault_id and index["vault"] and index["vault"] != opener.vault_id:
        fail(f"index.sqlite belongs to another vault than {opener.what}")
    files, todo, seen = item_files(vault), [], set()
    for seq, (hexid, kind, domain, album, meta) in enumerate((index or {}).get("items", [])):
        if domain in opener.domains and HEX32.match(hexid or "") and hexid not in seen:
            seen.add(hexid)
            todo.append((hexid, kind, domain, bytes.fromhex(album) if album else None, bytes(meta or b""), seq))
    tally = Tally()
    for hexid in sorted(files):
        if hexid not in seen:
            header = files[hexid][0][1]
            if header[6] in opener.domains:
                todo.append((hexid, header[5], header[6], None, None, None))
            elif header[6] == 2 and opener.counts_fade:
                tally.uncovered += 1
    albums = album_names(vault, index, opener.meta_keys(1) + opener.meta_keys(3))
    out = Output(outdir)
    opened = [i for i in (open_item(vault, files, index, opener, tally, e) for e in todo) if i is not None]
    written, entries = {}, []
    # Files first, in export's order, each name planned before any is written (as export
    # does: a name stays taken even when its item turns out damaged); then notes, as NAME.txt.
    for group in (sorted((i for i in opened if i["kind"] != 2), key=lambda i: i["order"]),
                  sorted((i for i in opened if i["kind"] == 2), key=lambda i: i["order"])):
        names = [out.plan(safe_name(i["info"]["name"] + (".txt" if i["kind"] == 2 else ""), i["id"])) for i in group]
        for item, name in zip(group, names):
            done = write_item(vault, out, item, name)
            if done is None:
                tally.lost(item["id"], "damaged", item["why"])
                continue
            name, size = done
            label = (albums.get(item["album"]) or f"Album {item['album'].hex()[:8]}") if item["album"] else None
            print(f"{'note' if item['kind'] == 2 else 'file'}\t{label or ''}\t{name}\t{size}")
            tally.recovered += 1
            tally.unnamed += 0 if item["named"] else 1
            written[item["id"]] = name
            entries.append((item, manifest_entry(item, name, label, opener.fades_at(item["id"], item["domain"]))))
    for item, entry in entries:              # the Live Photo link, both ways
        motion = item["info"].get("motion") if item["named"] else None
        if isinstance(motion, str) and HEX32.match(motion):
            entry["motion"] = {"id": motion, "file": written.get(motion)}
            for other, linked in entries:
                if other["id"] == motion:
                    linked["still"] = {"id": item["id"], "file": entry["file"]}
    manifest = None
    if entries or tally.not_recovered:
        manifest = out.write_json(MANIFEST, {
            "format": "nu11vlt-decrypt-manifest", "version": 1,
            "index": "read" if index is not None else why,
            "albums": sorted(({"id": a.hex(), "name": n} for a, n in albums.items()), key=lambda a: (a["name"], a["id"])),
            "items": [e for _, e in entries], "notRecovered": tally.not_recovered,
            "fadeNotCovered": tally.uncovered})
    if not todo:
        say("the vault folder holds no item this credential opens")
    line = tally.line(outdir, manifest, opener.left_out_summary)
    if tally.count("damaged"):
        fail(line)
    say(line)


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


def main():
    args = sys.argv[1:]
    if args in (["-h"], ["--help"]):
        print(__doc__.strip())
        return None
    if len(args) == 3 and args[0] == "--vault":
        return recover_items(args[1], args[2], Phrase(args[1]))
    if len(args) == 5 and args[0] == "--vault" and args[2] == "--keystore":
        argon2_low_level()
        return recover_items(args[1], args[4], KeyStore(args[3]))
    if len(args) == 5 and args[0] == "--keystore" and args[2] == "--vault":
        argon2_low_level()
        return recover_items(args[3], args[4], KeyStore(args[1]))
    if len(args) != 2 or args[0].startswith("-"):
        fail("usage: nu11vlt_decrypt.py ARCHIVE OUTDIR | --vault VAULTDIR [--keystore KEYSTOREDIR] OUTDIR "
             "(password, phrase or PIN on stdin)")
    argon2_low_level()
    return decrypt_archive(args[0], args[1])


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        fail("interrupted")
    except OSError as e:
        fail(f"{e.filename or ''}: {e.strerror or e}" if e.filename else str(e))
    except (zipfile.BadZipFile, KeyError, ValueError) as e:
        fail(f"not a valid archive or vault file ({type(e).__name__}: {e})")
