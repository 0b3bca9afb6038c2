# SPDX-License-Identifier: GPL-3.0-or-later
"""A video plays inside the app (issue 58), decoded by the sandboxed image helper: the viewer's
Play turns into Pause, the clip's red first seconds are read back from a screenshot of the
picture, Pause holds it, and it ends by itself. Meanwhile `strace` follows every thread of the
app: it creates, renames or links no file at all (the plaintext goes to the helper over a
pipe), and no new file appears in the session's runtime folder. Used by library_test.py."""
import os
import signal
import subprocess
import time

import pyatspi

from atspi_driver import click, double_click, find, focus_window, gone, key, named, press, screenshot, showing, texts, type_text, wait_for

# The calls that would leave a file behind: creating, renaming, linking, and memfd (a file in
# memory another process could be handed).
TRACED = "open,openat,openat2,creat,rename,renameat,renameat2,link,linkat,symlink,symlinkat,memfd_create,mknod,mknodat"


def files_under(roots):
    out = set()
    for root in roots:
        for folder, _, names in os.walk(root):
            out.update(os.path.join(folder, n) for n in names)
    return out


def red_pixels(shot, box):
    """How many pixels of the screenshot inside box (x, y, w, h) are plainly red."""
    x, y, w, h = box
    raw = subprocess.run(["convert", shot, "-crop", f"{w}x{h}+{x}+{y}", "+repage", "-depth", "8", "rgb:-"],
                         check=True, capture_output=True).stdout
    return sum(1 for i in range(0, len(raw) - 2, 3) if raw[i] > 200 and raw[i + 1] < 70 and raw[i + 2] < 70)


def shoot(path):
    screenshot(path)
    return path


def writes_in(trace_path, own):
    """The trace's calls (successful ones only: strace -z) that made, renamed or linked a file,
    or opened one for writing, outside `own` (the vault's and key store's folders: ciphertext
    and their lock files) and /dev (devices: nothing is created there)."""
    found = []
    for line in open(trace_path, errors="replace"):
        if "(" not in line:
            continue
        call = line.split("(", 1)[0].split()[-1]
        path = line.split('"')[1] if line.count('"') >= 2 else ""
        if call in ("open", "openat", "openat2") and not any(f in line for f in ("O_CREAT", "O_WRONLY", "O_RDWR", "O_TMPFILE")):
            continue
        if call not in TRACED.split(","):
            continue
        if path.startswith("/dev/") or any(path.startswith(o + "/") for o in own):
            continue
        found.append(line.strip())
    return found


def search(text):
    """Types `text` into the gallery's search (the tile may be scrolled out of sight)."""
    entry = wait_for(lambda: ([a for a in named("Search by name") if showing(a) and a.getRoleName() not in ("label", "panel")]
                              or [None])[0], "the search entry", 15)
    click(entry)
    key("ctrl+a")
    key("BackSpace")
    if text:
        type_text(text)


def play_in_app(lib, pid):
    step = lib.step
    step("library: a video plays in the viewer, decoded by the helper: red on screen, Pause holds it, no plaintext file made")
    # The run's own runtime folder (tmpfs, where older versions wrote the video for the
    # desktop's player); /dev/shm and /tmp are shared with whatever else runs on the machine,
    # and strace covers every path anyway.
    watched = [os.environ.get("XDG_RUNTIME_DIR", "/nonexistent")]
    before = files_under(watched)
    focus_window("^Nu11VLT$")  # after the share's dialogs: the privacy cover goes
    gone("Privacy cover", timeout=10)
    search("clip")
    wait_for(lambda: "beach.jpg" not in texts() or None, "the search for the clip", 15)
    double_click(find("clip.mp4", "label", timeout=15))
    find("Back to gallery", "push button", timeout=15)
    time.sleep(1.0)
    trace = os.path.join(lib.work, "play.trace")
    threads = os.listdir(f"/proc/{pid}/task")
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-z", "-e", f"trace={TRACED}", "-o", trace]
                              + [a for t in threads for a in ("-p", t)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2.0)  # attached to every thread
    try:
        press("Play")
        find("Pause", "push button", timeout=30)
        picture = wait_for(lambda: ([a for a in named("clip.mp4") if showing(a) and a.getRoleName() not in ("label", "list item")]
                                    or [None])[0], "the viewer's picture", 10)
        box = picture.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        # The middle 64 x 64 of the picture (the video is fitted into it, centred): cheap to
        # read back, so the test keeps up with the clip.
        area = (box.x + box.width // 2 - 32, box.y + box.height // 2 - 32, 64, 64)
        shot = os.path.join(lib.shots, "viewer-video-playing.png")
        red = 0
        for _ in range(40):
            screenshot(shot)
            red = red_pixels(shot, area)
            if red > 3600:
                break
            time.sleep(0.1)
        assert red > 3600, f"the playing video's red frames are not on screen ({red} red pixels in the picture at {area})"
        step(f"  {red} of the 4096 pixels in the middle of the picture read back red while it plays")
        press("Pause")
        find("Play", "push button", timeout=10)
        time.sleep(1.0)
        held = os.path.join(lib.shots, "viewer-video-paused.png")
        screenshot(held)
        assert red_pixels(held, area) > 3600, "the paused video left the picture"
        press("Play")
        # Resumed, it plays on into the clip's last second (testsrc: the middle is no longer
        # red), ends there, and the button says Play again.
        wait_for(lambda: red_pixels(shoot(shot), area) < 1000 or None, "the clip to play on past its red seconds", 40)
        find("Play", "push button", timeout=30)
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(timeout=15)
    made = writes_in(trace, (lib.vault, lib.keystore))
    lines = sum(1 for _ in open(trace, errors="replace"))
    step(f"  strace of the app's threads during playback: {lines} traced calls, {len(made)} that made or wrote a file")
    assert not made, "the app made or wrote a file while playing:\n" + "\n".join(made[:20])
    new = files_under(watched) - before
    assert not new, f"new files while playing: {sorted(new)[:10]}"
    press("Back to gallery")
    search("")
    wait_for(lambda: "beach.jpg" in texts() or None, "all again, the search cleared", 15)
