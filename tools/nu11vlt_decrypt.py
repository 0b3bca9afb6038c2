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
its modules beside it (tools/nu11vlt_decrypt_{crypto,keys,vault,output}.py).

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
import json
import os
import sys
import unicodedata
import zipfile

sys.dont_write_bytecode = True          # no __pycache__ beside the tool
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    # The base first: a Python module it needs that is missing is one line (Debian's packages).
    from nu11vlt_decrypt_crypto import MAX_M_KIB, MAX_T, Bad, argon2_low_level, argon2id, chunked_open, fail, say
    from nu11vlt_decrypt_keys import KeyStore, Phrase
    from nu11vlt_decrypt_output import Output, safe_name
    from nu11vlt_decrypt_vault import recover_items
except ModuleNotFoundError as e:
    if not (e.name or "").startswith("nu11vlt_decrypt"):
        raise
    sys.stderr.write(f"nu11vlt_decrypt: {e.name}.py is missing: keep tools/nu11vlt_decrypt*.py together\n")
    sys.exit(1)


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
