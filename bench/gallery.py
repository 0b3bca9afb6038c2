#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Gallery benchmark (issue: the desktop app): a vault of N photos (default 10,000), the app
(release build) unlocked under Xvfb, and its own --timings on stderr:

  listed        unlock → the sorted listing of every item is in the grid model
  (each measured over 5 unlocks in one session, Ctrl+L between)
  first-screen  unlock → the end of the first frame painted in which every tile on screen
                shows its name and thumbnail (the app sorts, then decrypts and decodes the
                first screen in the listing's call, so that frame is complete)
  tile          one tile's thumbnail decrypted (vault LRU) and decoded into a texture, on
                the worker thread (never the main thread), while the test scrolls

usage: bench/gallery.py [N] [--videos PERCENT] [--keep DIR]   (run by bench/run; needs a release build)
  --videos P   P % of the N items are short H.264 clips (each unique; their poster frames are
               made at import by the helper, as a phone dump's are); the rest are photos
  --keep DIR   make the vault in DIR (once) and keep it, so repeated runs skip the setup"""
import concurrent.futures
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, ".build/release")
ARGS = [a for a in sys.argv[1:]]
KEEP = None
if "--keep" in ARGS:
    at = ARGS.index("--keep")
    if at + 1 >= len(ARGS):
        raise SystemExit("bench: --keep needs a folder (e.g. --keep /tmp/gallery10k)")
    KEEP = os.path.abspath(ARGS[at + 1])
    del ARGS[at:at + 2]
VIDEOS = 0
if "--videos" in ARGS:
    at = ARGS.index("--videos")
    if at + 1 >= len(ARGS) or not ARGS[at + 1].isdigit() or not 0 <= int(ARGS[at + 1]) <= 100:
        raise SystemExit("bench: --videos needs a percentage from 0 to 100 (e.g. --videos 10)")
    VIDEOS = int(ARGS[at + 1])
    del ARGS[at:at + 2]
N = int(ARGS[0]) if ARGS else 10000
ROUNDS = 5
PIN = "bench-gallery-2468"


def make_photos(folder, n):
    os.makedirs(folder)
    rnd = random.Random(7)
    every = round(100 / VIDEOS) if VIDEOS else 0
    clips = []
    for i in range(n):
        if every and i % every == 0:
            clips.append(os.path.join(folder, f"v{i:05d}.mp4"))
            continue
        colour = (rnd.randrange(256), rnd.randrange(256), rnd.randrange(256))
        Image.new("RGB", (320, 240), colour).save(os.path.join(folder, f"p{i:05d}.jpg"), quality=80)
    if clips:
        base = os.path.join(os.path.dirname(folder), "base.mp4")
        subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=640x360:rate=30", "-t", "2",
                        "-c:v", "libx264", "-pix_fmt", "yuv420p", base], check=True)

        def copy(path):  # the same pictures, a title of its own: no two clips are duplicates
            subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", base, "-c", "copy", "-metadata",
                            "title=" + os.path.basename(path), path], check=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            list(pool.map(copy, clips))
        os.remove(base)


def nu11vlt(work, *args):
    r = subprocess.run([os.path.join(BIN, "nu11vlt"), *args, "--vault", work + "/v", "--keystore", work + "/ks", "--pin-stdin"],
                       input=PIN + "\n", capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"bench: nu11vlt {args[0]} failed: {r.stderr.strip()}")


def xdo(env, *args):
    subprocess.run(["xdotool", *args], env=env, capture_output=True)


def main():
    work = KEEP or tempfile.mkdtemp(prefix="n11gallery.", dir=os.path.join(ROOT, "bench"))
    xvfb = None
    try:
        t = time.monotonic()
        if not (KEEP and os.path.isdir(work + "/v")):
            os.makedirs(work, exist_ok=True)
            make_photos(work + "/photos", N)
            nu11vlt(work, "init", "--kdf-memory", "19", "--kdf-iterations", "2")
            nu11vlt(work, "import", "-r", work + "/photos")
            shutil.rmtree(work + "/photos")
        setup = time.monotonic() - t
        display = ":" + str(120 + os.getpid() % 50)
        xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        env = {"PATH": os.environ["PATH"], "HOME": work, "DISPLAY": display, "GDK_BACKEND": "x11", "LANG": "C.UTF-8",
               "XDG_RUNTIME_DIR": work}
        if os.environ.get("GSK_RENDERER"):  # GTK's renderer (e.g. cairo: no software OpenGL on a GPU-less VM)
            env["GSK_RENDERER"] = os.environ["GSK_RENDERER"]
        log = work + "/timings.log"
        app = subprocess.Popen(["dbus-run-session", "--", os.path.join(BIN, "nu11vlt-app"), "--timings",
                                "--vault", work + "/v", "--keystore", work + "/ks"],
                               env=env, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
        deadline = time.monotonic() + 30
        wid = ""
        while not wid and time.monotonic() < deadline:
            time.sleep(0.3)
            wid = subprocess.run(["xdotool", "search", "--name", "^Nu11VLT$"], env=env, capture_output=True, text=True).stdout.strip()
        time.sleep(1.0)
        xdo(env, "windowfocus", "--sync", wid.split()[0])

        def lines(kind):
            return [float(l.split()[-2]) for l in open(log) if l.startswith(f"timing {kind} ")]
        # Unlock ROUNDS times (Ctrl+L between): each unlock lists and draws the gallery afresh.
        for r in range(ROUNDS):
            xdo(env, "type", "--delay", "20", PIN)
            xdo(env, "key", "Return")
            deadline = time.monotonic() + 60
            while len(lines("first-screen")) <= r and time.monotonic() < deadline:
                time.sleep(0.1)
            if r < ROUNDS - 1:
                time.sleep(0.5)
                xdo(env, "key", "ctrl+l")
                time.sleep(1.0)
        counted = [int(l.split()[-1]) for l in open(log) if l.startswith("count first-screen-tiles ")]
        first_tiles = counted[0] if counted else 0
        # Scroll a screen at a time, ten times a second: tiles bind and decode as they come in.
        xdo(env, "mousemove", "600", "300")
        for _ in range(40):
            xdo(env, "click", "5")  # wheel down
            time.sleep(0.1)
        time.sleep(2)
        # A fling: the wheel turned as fast as a hand does (one notch every 15 ms, 4 s), back
        # to the top and down again; every painted frame's interval in that time is a frame time.
        frames_before = len(lines("frame"))
        for direction in ("4", "5"):
            xdo(env, "click", "--repeat", "130", "--delay", "15", direction)
        time.sleep(1)
        frames = sorted(lines("frame")[frames_before:])
        xdo(env, "key", "ctrl+q")
        app.wait(timeout=30)
        listed, first, tiles, call = lines("listed"), lines("first-screen"), lines("tile"), lines("list-call")
        if len(first) < ROUNDS:
            raise SystemExit(f"bench: the first screen of tiles was reported {len(first)} times in {ROUNDS} unlocks; the app said:\n"
                             + open(log).read()[-2000:])
        tiles.sort()
        p95 = tiles[int(len(tiles) * 0.95) - 1] if tiles else 0
        median = statistics.median(tiles) if tiles else 0
        what = f"{N} items, {VIDEOS} % videos" if VIDEOS else f"{N} photos"
        # The renderer that drew: the app says when it chose cairo over software OpenGL.
        if any(l.startswith("renderer cairo") for l in open(log)):
            renderer = "cairo, the app's choice: OpenGL is software here"
        else:
            renderer = env.get("GSK_RENDERER") or "GTK's default"
        print(f"| gallery: {what}, unlock → IDs sorted by capture date and the first screen decoded, in the grid; median of {ROUNDS} unlocks (the vault call: {statistics.median(call):.0f} ms) | {statistics.median(listed):.0f} ms | |")
        print(f"| gallery: unlock → first screen ({first_tiles} tiles on screen) decrypted, decoded, painted ({renderer}); median of {ROUNDS} unlocks (target ≤ 300 ms) | {statistics.median(first):.0f} ms | {statistics.median(first) / 300:.2f}× target |")
        print(f"| gallery: the same, the slowest of the {ROUNDS} unlocks | {max(first):.0f} ms | {max(first) / 300:.2f}× target |")
        print(f"| gallery: one tile's decrypt + decode on the worker, median / p95 ({len(tiles)} tiles while scrolling) | {median:.2f} / {p95:.2f} ms | {16.7 / max(median, 0.001):.0f} tiles per 60 Hz frame |")
        if frames:
            fp95 = frames[int(len(frames) * 0.95) - 1] if len(frames) >= 20 else frames[-1]
            print(f"| gallery: frame time while flinging through {what} (p95 / median of {len(frames)} frames, GDK frame clock) | {fp95:.1f} / {statistics.median(frames):.1f} ms | {fp95 / 33:.2f}× target (≤ 33 ms) |")
        else:
            print(f"| gallery: frame time while flinging through {what} | no frame painted | |")
        print(f"(setup: {N} items made and imported in {setup:.0f} s)", file=sys.stderr)
    finally:
        if xvfb:
            xvfb.terminate()
        if not KEEP:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
