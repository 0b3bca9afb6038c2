# SPDX-License-Identifier: GPL-3.0-or-later
"""A video plays inside the app (issue 58), decoded by the sandboxed image helper: the viewer's
Play turns into Pause, the clip's red first seconds are read back from a screenshot of the
picture, Pause holds it, and it ends by itself. Meanwhile `strace` follows every thread of the
app and every process it starts: it creates, renames or links no file at all (the plaintext
goes to the helper over a pipe), and no new file appears in the session's runtime folder.
Used by library_test.py.

The app runs under `strace -f --seccomp-bpf` from its start (library_test.py), not attached to
its threads later: attached with plain ptrace, every system call of every thread stops for the
tracer, and on two loaded cores one walk of the accessibility tree (each node a D-Bus call the
traced main loop answers) took up to 11 s — longer than the clip's red seconds, so the test
looked after they had played (the helper had decoded the whole clip and exited 0; the app had
shown every frame). With the filter in the kernel only the traced calls stop. The step also
makes no tree walk between Play and its screenshots: the button and the picture are looked up
before, and the app's own `--timings` events (frames received and shown, the stream's end)
say when it played, so a failure says what the player did."""
import os
import subprocess
import time

import pyatspi

from atspi_driver import Timeout, click, double_click, enabled, find, focus_window, gone, key, named, press, screenshot, showing, texts, type_text, wait_for

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

    def typed():
        for candidate in [entry] + [c for c in entry if c is not None]:
            try:
                t = candidate.queryText()
                return t.getText(0, t.characterCount)
            except NotImplementedError:
                continue
        return None
    for _ in range(3):  # a click while the gallery still slides in may miss the entry
        click(entry)
        key("ctrl+a")
        key("BackSpace")
        if text:
            type_text(text)
        try:
            wait_for(lambda: typed() in (text, None) or None, f"the search to read {text!r}", 5)
            return
        except Timeout:
            continue
    raise AssertionError(f"the search entry reads {typed()!r}, not {text!r}")


def player_events(lib, since=0.0):
    """The app's playback events (`--timings`: "event MS what") after monotonic time `since`
    (seconds; the app and this test read the same clock)."""
    out = []
    for line in open(os.path.join(lib.work, "library-app.log"), errors="replace"):
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0] == "event" and parts[2].startswith("play-") and float(parts[1]) / 1000 >= since:
            out.append((float(parts[1]) / 1000, parts[2].strip()))
    return out


def wait_event(lib, what, since, timeout):
    """The time of the first playback event starting with `what` after `since`."""
    try:
        return wait_for(lambda: next((t for t, e in player_events(lib, since) if e.startswith(what)), None), f"the app's {what!r}",
                        timeout, interval=0.05)
    except Timeout:
        raise AssertionError(f"the app never said {what!r}; its playback events: {said(lib, since)}")


def said(lib, since):
    return "; ".join(f"+{t - since:.2f} s {e}" for t, e in player_events(lib, since)) or "none"


def button_named(acc, name, timeout):
    """Waits until the held button's accessible name is `name` (no walk of the tree)."""
    try:
        wait_for(lambda: acc.name == name or None, f"the button to say {name!r}", timeout, interval=0.05)
    except Timeout:
        raise AssertionError(f"the Play button says {acc.name!r}, not {name!r}")


def in_window(line, start, end):
    """Whether a `strace -ttt` line ("PID SECONDS.MICROS call(…") lies in [start, end]."""
    fields = line.split(None, 2)
    try:
        return start <= float(fields[1]) <= end
    except (IndexError, ValueError):
        return False


def play_in_app(lib):
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
    window_start = time.time()  # strace -ttt: the wall clock
    double_click(find("clip.mp4", "label", timeout=15))
    find("Back to gallery", "push button", timeout=15)
    time.sleep(1.0)
    # Looked up before Play: from then on only screenshots and the held button.
    button = wait_for(lambda: ([a for a in named("Play", "push button") if showing(a) and enabled(a)] or [None])[0],
                      "an enabled Play button", 15)
    picture = wait_for(lambda: ([a for a in named("clip.mp4") if showing(a) and a.getRoleName() not in ("label", "list item")]
                                or [None])[0], "the viewer's picture", 10)
    box = picture.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    # The middle 64 x 64 of the picture (the video is fitted into it, centred): cheap to
    # read back, so the test keeps up with the clip.
    area = (box.x + box.width // 2 - 32, box.y + box.height // 2 - 32, 64, 64)
    shot = os.path.join(lib.shots, "viewer-video-playing.png")
    pressed = time.monotonic()
    button.queryAction().doAction(0)
    shown = wait_event(lib, "play-first-frame-shown", pressed, 60)
    # The red seconds run from the first frame shown; look while they last (a screenshot and
    # its read-back take a few tenths of a second on a loaded machine).
    red = 0
    while time.monotonic() < shown + lib.red_seconds - 1:
        red = red_pixels(shoot(shot), area)
        if red > 3600:
            break
        time.sleep(0.1)
    assert red > 3600, (f"the playing video's red frames are not on screen ({red} red pixels in the picture at {area}; "
                        f"the player: {said(lib, pressed)})")
    button.queryAction().doAction(0)  # Pause, while the red lasts
    paused = time.monotonic()
    step(f"  {red} of the 4096 pixels in the middle of the picture read back red {paused - shown:.1f} s into the clip; paused")
    assert paused < shown + lib.red_seconds, f"paused only {paused - shown:.1f} s into the clip, after its red seconds"
    button_named(button, "Play", 10)
    time.sleep(1.0)
    held = os.path.join(lib.shots, "viewer-video-paused.png")
    screenshot(held)
    assert red_pixels(held, area) > 3600, f"the paused video left the picture (the player: {said(lib, pressed)})"
    assert not [e for _, e in player_events(lib, pressed) if e.startswith("play-ended")], \
        f"the clip ended while paused: {said(lib, pressed)}"
    resumed = time.monotonic()
    button.queryAction().doAction(0)  # Play again
    # Resumed, it plays on into the clip's last second (testsrc: the middle is no longer
    # red), ends there, and the button says Play again.
    wait_for(lambda: red_pixels(shoot(shot), area) < 1000 or None, "the clip to play on past its red seconds", lib.clip_seconds + 30)
    wait_event(lib, "play-ended", resumed, lib.clip_seconds + 30)
    button_named(button, "Play", 30)
    window_end = time.time()
    events = player_events(lib, pressed)
    ended = [e for _, e in events if e.startswith("play-ended")]
    assert len(ended) == 1, f"one play, one end: {said(lib, pressed)}"
    assert not [e for _, e in events if e.startswith("play-stream-failed")], f"the stream failed: {said(lib, pressed)}"
    step(f"  the player: {said(lib, pressed)}")
    time.sleep(0.5)  # strace writes its lines as the calls return
    lines = [line for line in open(lib.trace, errors="replace") if in_window(line, window_start, window_end)]
    window = os.path.join(lib.work, "play.trace")
    with open(window, "w") as f:
        f.writelines(lines)
    made = writes_in(window, (lib.vault, lib.keystore))
    step(f"  strace of the app, its threads and the helper during playback: {len(lines)} traced calls, {len(made)} that made or wrote a file")
    # The trace is live: it saw the helper the app started load FFmpeg (every child followed).
    assert [line for line in lines if "libavcodec" in line], "strace saw no helper load FFmpeg while the video played: the trace is not working"
    assert not made, "the app made or wrote a file while playing:\n" + "\n".join(made[:20])
    new = files_under(watched) - before
    assert not new, f"new files while playing: {sorted(new)[:10]}"
    press("Back to gallery")
    search("")
    wait_for(lambda: "beach.jpg" in texts() or None, "all again, the search cleared", 15)
