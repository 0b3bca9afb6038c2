# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/nu11vlt_decrypt.py's vault folders (docs/FORMAT.md §5): the index when it is sound,
the sidecars (§2.2, §2.3) for what it lacks, every item written as export writes it."""
import json
import math
import os
import re
import sqlite3
import urllib.parse

from nu11vlt_decrypt_crypto import ChaCha20Poly1305, Bad, Quiet, chunked_open, fail, read_file, say, subkey, unseal
from nu11vlt_decrypt_output import MANIFEST, Output, Tally, safe_name

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
    """The manifest's object for one written item (the Live Photo link is added after)."""
    info = item["info"]
    return {"id": item["id"], "file": file, "kind": "note" if item["kind"] == 2 else "file",
             "name": info["name"] if item["named"] else None, "size": info.get("size") if item["named"] else None,
             "type": info.get("type"), "album": album_label, "albumID": item["album"].hex() if item["album"] else None,
             "created": number(info, "created"), "modified": number(info, "modified"), "taken": number(info, "taken"),
             "fadesAt": fades_at, "motion": None, "still": None}


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
    by_id = {entry["id"]: entry for _, entry in entries}
    for item, entry in entries:              # the Live Photo link, both ways
        motion = item["info"].get("motion") if item["named"] else None
        if isinstance(motion, str) and HEX32.match(motion):
            entry["motion"] = {"id": motion, "file": written.get(motion)}
            if motion in by_id:
                by_id[motion]["still"] = {"id": item["id"], "file": entry["file"]}
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
