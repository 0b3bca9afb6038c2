# SPDX-License-Identifier: GPL-3.0-or-later
"""Where tools/nu11vlt_decrypt.py puts what it decrypts (standard library only): the files,
named as `nu11vlt export -o DIR` names them; the manifest; the summary line. Written from the
README's and docs/FORMAT.md's description of export, no code shared with nu11vlt."""
import json
import math
import os
import unicodedata

MANIFEST = "nu11vlt-decrypt-manifest.json"
TEMP_PREFIX, TEMP_SUFFIX = ".nu11vlt_decrypt-", ".part"


def utf8_len(text):
    return len(text.encode("utf-8", "surrogatepass"))


def _joins(text, i):
    """Whether text[i] belongs to the character before it (a combining mark, a variation
    selector, an emoji modifier, or what a zero-width joiner joins): Swift removes whole
    characters, this approximates its grapheme clusters for the cases names meet."""
    c = text[i]
    return (unicodedata.category(c) in ("Mn", "Mc", "Me") or c in "\u200d\ufe0e\ufe0f"
            or 0x1F3FB <= ord(c) <= 0x1F3FF or text[i - 1] == "\u200d")


def _drop_last_character(text):
    i = len(text) - 1
    while i > 0 and _joins(text, i):
        i -= 1
    return text[:i]


def fit(stem, suffix):
    """`stem` + `suffix` in at most 255 bytes, the stem cut at a character boundary."""
    while utf8_len(stem) + utf8_len(suffix) > 255 and stem:
        stem = _drop_last_character(stem)
    return stem + suffix


def extension(name):
    """(name without its extension, extension) as Foundation's pathExtension splits a single
    path component: after the last dot, none when the dot leads."""
    dot = name.rfind(".")
    if dot <= 0:
        return name, ""
    return name[:dot], name[dot + 1:]


def safe_name(name, hexid):
    """The item's name as export makes it one safe path component: "/", "\\" and control
    characters become "_"; "", "." and ".." become "item-<8 hex digits of the ID>"; a leading
    "." becomes "_" (no hidden file); cut to 255 bytes, keeping an extension of up to 16 bytes."""
    name = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in str(name))
    out = "".join("_" if c in "/\\" or unicodedata.category(c) == "Cc" else c for c in name)
    if out in ("", ".", ".."):
        out = "item-" + hexid[:8]
    if out.startswith(".") and not (len(out) > 1 and _joins(out, 1)):
        out = "_" + out[1:]
    if utf8_len(out) <= 255:
        return out
    stem, ext = extension(out)
    return fit(out, "") if not ext or utf8_len(ext) > 16 else fit(stem, "." + ext)


def numbered(name, n):
    """The n-th item of that name: " (n)" before its extension ("beach (2).jpg")."""
    stem, ext = extension(name)
    if not ext:
        return fit(name, f" ({n})")
    return fit(stem, f" ({n}).{ext}")


def mtime_ns(seconds):
    """Seconds since 1970 as nanoseconds, rounded as nu11vlt's export rounds them."""
    whole = math.floor(seconds)
    return whole * 1_000_000_000 + int((seconds - whole) * 1e9)


class Output:
    """OUTDIR: each name planned before anything is written (a name once planned stays taken,
    as in export), never over an existing file; each file written to a temp file first and
    linked under its name only when complete, so a failed item leaves nothing behind."""

    def __init__(self, outdir):
        os.makedirs(outdir, mode=0o700, exist_ok=True)
        self.dir = outdir
        for name in os.listdir(outdir):           # what a killed run left
            if name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX):
                os.unlink(os.path.join(outdir, name))
        self.planned = set()

    def _free(self, name):
        return (unicodedata.normalize("NFC", name) not in self.planned
                and not os.path.lexists(os.path.join(self.dir, name)))

    def plan(self, name):
        """`name` (already safe), or its first free numbered form; taken from now on."""
        candidate, n = name, 1
        while not self._free(candidate):
            n += 1
            candidate = numbered(name, n)
        self.planned.add(unicodedata.normalize("NFC", candidate))
        return candidate

    def write(self, name, produce, mtime=None):
        """`produce(sink)` writes the plaintext and returns its length; the file gets `mtime`
        (seconds since 1970) as its modification time. Returns (the name used, size)."""
        temp = os.path.join(self.dir, f"{TEMP_PREFIX}{os.urandom(8).hex()}{TEMP_SUFFIX}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                size = produce(f.write)
                f.flush()
                os.fsync(f.fileno())
            if mtime is not None:
                stamp = mtime_ns(mtime)
                os.utime(temp, ns=(stamp, stamp))
            final = name
            while True:
                try:
                    os.link(temp, os.path.join(self.dir, final))
                    return final, size
                except FileExistsError:             # appeared meanwhile: never replaced
                    final = self.plan(name)
        finally:
            os.unlink(temp)

    def write_json(self, name, document):
        data = (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")

        def produce(sink):
            sink(data)
            return len(data)
        return self.write(self.plan(name), produce)[0]


class Tally:
    """What came back and what did not, for the manifest and the one summary line."""

    def __init__(self):
        self.recovered, self.unnamed = 0, 0
        self.not_recovered = []          # {"id", "why"}
        self.uncovered = 0               # Fade items the phrase does not cover (counted, unopened)

    def lost(self, hexid, reason, why):
        self.not_recovered.append({"id": hexid, "reason": reason, "why": why})

    def count(self, reason):
        return sum(1 for e in self.not_recovered if e["reason"] == reason)

    def line(self, outdir, manifest, left_out_why):
        parts = [(self.count("damaged"), "damaged or unreadable (named above)"),
                 (self.count("faded"), "Fade item(s) past their deadline (meant to disappear)"),
                 (self.count("left-out"), left_out_why),
                 (self.count("no-sidecar"), "without their sidecar (Meta/<ID>.n11m held the recovery seal; the key store opens them)"),
                 (self.uncovered, "Fade item(s): the phrase never covers them (--keystore brings back those before their deadline)")]
        lost = "; ".join(f"{n} {why}" for n, why in parts if n) or "none"
        named = f" ({self.unnamed} without their name: named recovered-<ID>)" if self.unnamed else ""
        where = f"; the list is in {os.path.join(outdir, manifest)}" if manifest else ""
        return f"summary: {self.recovered} item(s) recovered{named}; not recovered: {lost}{where}"
