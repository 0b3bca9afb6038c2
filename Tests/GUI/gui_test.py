#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""End-to-end test of nu11vlt-app, run by Tests/GUI/run.sh under Xvfb and dbus-run-session.

The user's story: unlock with the primary PIN on the keypad; import three photos through
the file chooser (the privacy cover is up while the chooser has the focus); the grid shows
three tiles with their names; open one and export it through the file chooser; export an
archive (a weak password refused); write a note; a fade item disappears at its deadline
with the app open; lock with Ctrl+L; in the settings arm the Skeleton Switch, check in,
disarm, set lock.idle (a bad value refused); the idle lock; unlock with the backup PIN and
see the backup vault only, and set the duress PIN from it; wrong PINs bring the delay as a countdown;
quit. Then nothing of the plaintext is left on disk, GTK's recent files do not mention the
vault's files, and the app opened no socket but AF_UNIX. Last, a second vault with a marker
in an item's name is unlocked and the app is crashed (SIGSEGV): it was not dumpable, and no
core file appears, though its core limit was unlimited and a dumpable control process's
crash in the same folder does write one. (Before that, fling.py flings through 400 photos and
checks that every tile where the grid stops shows its own thumbnail.)

usage: gui_test.py BIN_DIR SCREENSHOT_DIR WORK_DIR"""
import datetime
import hashlib
import json
import os
import shutil
import re
import resource
import secrets
import signal
import subprocess
import sys
import time

import pyatspi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fling import fling_check  # noqa: E402
from library_test import library_check  # noqa: E402
from devices_test import devices_check  # noqa: E402
import atspi_driver  # noqa: E402
from atspi_driver import (Timeout, center, press_row, fill_screen, start_app, double_click, click, enabled, find, focus_window, gone, key, named, press, showing,  # noqa: E402
                          screenshot, texts, type_text, wait_for)

BIN, SHOTS, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
CLI = os.path.join(BIN, "nu11vlt")
APP = os.path.join(BIN, "nu11vlt-app")
VAULT, KEYSTORE = os.path.join(WORK, "vault"), os.path.join(WORK, "keystore")
PHOTOS = os.path.join(WORK, "photos")
# Test PINs, known only to this script (never in argv or the environment of any process).
PRIMARY, BACKUP, WRONG, DURESS = "2468", "1357", "9090", "8642"
# The primary PIN after another process changed it (issue 55): PRIMARY from then on.
NEW_PRIMARY = "3691"
MARKER = "N11GUIMARKER" + secrets.token_hex(8)
NOTE_MARKER = "N11NOTEMARKER" + secrets.token_hex(8)
ARCHIVE_PASSWORD = "-".join(secrets.token_hex(4) for _ in range(5))  # 160 random bits
FADE_SECONDS = 60
# The first run's vault at the default places of a home of its own, which the README's restic
# commands then back up (issue 56): the key store is in that home too, as it is by default.
FIRST_HOME = os.path.join(WORK, "first-home")
FIRST_VAULT = os.path.join(FIRST_HOME, ".local", "share", "nu11vlt")
FIRST_KEYSTORE = os.path.join(FIRST_HOME, ".local", "state", "nu11vlt")
FIRST_PIN = "2580-new-pin"
PLAYER_LOG = os.path.join(WORK, "player.log")
step_started = time.monotonic()


def step(text):
    global step_started
    now = time.monotonic()
    walks = atspi_driver.walk_stats()
    cost = (f"; {walks['count']} tree walks, {walks['seconds']:.1f} s, {walks['nodes'] // walks['count']} nodes each"
            if walks["count"] else "")
    print(f"gui: {text}  (+{now - step_started:.1f} s{cost})", flush=True)
    step_started = now


def cli(args, pin_lines):
    r = subprocess.run([CLI, *args, "--vault", VAULT, "--keystore", KEYSTORE, "--pin-stdin"],
                       input="".join(p + "\n" for p in pin_lines), capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"setup: nu11vlt {' '.join(args)} failed: {r.stderr.strip()}")
    return r.stdout


def photo(name, colour):
    path = os.path.join(PHOTOS, name)
    subprocess.run(["convert", "-size", "320x240", f"gradient:{colour}-white", "-comment", MARKER, path], check=True)
    return path


def start_security_key():
    """The project's software FIDO2 authenticator (Tests/Fixtures/soft_fido2.py): the app and the
    CLI reach it through NU11VLT_FIDO2_DEVICE (an AF_UNIX socket; debug builds only)."""
    sock = os.path.join(WORK, "fido.sock")
    tool = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Fixtures", "soft_fido2.py")
    key_process = subprocess.Popen(["/usr/bin/python3", tool, "--socket", sock, "--state", os.path.join(WORK, "fido.json")],
                                   stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK, "fido.log"), "w"))
    for _ in range(300):
        if os.path.exists(sock):
            break
        time.sleep(0.1)
    os.environ["NU11VLT_FIDO2_DEVICE"] = "unix:" + sock
    return key_process


def played_in_place(shot):
    """Play, and the viewer's picture changes from the poster to the clip's later frames (a
    two-second clip may end before the accessibility tree shows Pause on a loaded machine);
    at the end the button says Play again."""
    poster = shot.replace(".png", "-poster.png")
    screenshot(poster)
    press("Play")

    def moved():
        screenshot(shot)
        r = subprocess.run(["compare", "-metric", "AE", "-fuzz", "15%", poster, shot, "null:"], capture_output=True, text=True)
        try:
            return float(r.stderr.split()[0]) > 500 or None
        except (ValueError, IndexError):
            return None
    wait_for(moved, "the video to play in the viewer (its picture to move on from the poster)", 30)
    find("Play", "push button", timeout=60)


def no_player_no_file(what):
    """Videos play inside the app (issue 58): the desktop's player (the fake one below, a
    tripwire) never got a file, and the private RAM folder older versions played from is not there."""
    assert not os.path.exists(PLAYER_LOG), f"{what} was handed to the desktop's video player: {open(PLAYER_LOG).read()}"
    # The run's own runtime folder (tmpfs: where older versions put the file); /dev/shm is
    # shared with whatever else runs on the machine, so it proves nothing here.
    folder = os.path.join(os.environ["XDG_RUNTIME_DIR"], "nu11vlt-app")
    assert not os.path.exists(folder), f"{what}: the app made its private RAM folder {folder}"


def install_fake_player():
    """The user's default video player, as GIO finds it (a desktop file and mimeapps.list in
    $HOME): a script that records the path it was handed, the SHA-256 of what it read there
    and the file's mode. The app must never start it (videos play inside the app)."""
    script = os.path.join(WORK, "fake_player.py")
    with open(script, "w") as f:
        f.write("import hashlib, os, sys\n"
                "p = sys.argv[1]\n"
                "data = open(p, 'rb').read()\n"
                f"with open({PLAYER_LOG!r}, 'a') as log:\n"
                "    log.write(p + '\\t' + hashlib.sha256(data).hexdigest() + '\\t' + oct(os.stat(p).st_mode & 0o777) + '\\n')\n")
    apps = os.path.join(os.environ["HOME"], ".local/share/applications")
    os.makedirs(apps, exist_ok=True)
    types = ["video/mp4", "video/quicktime", "video/x-matroska"]
    with open(os.path.join(apps, "n11-test-player.desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Test Player\nNoDisplay=true\n"
                f"Exec=/usr/bin/python3 {script} %f\nMimeType={';'.join(types)};\n")
    config = os.path.join(os.environ["HOME"], ".config")
    os.makedirs(config, exist_ok=True)
    with open(os.path.join(config, "mimeapps.list"), "w") as f:
        f.write("[Default Applications]\n" + "".join(f"{t}=n11-test-player.desktop\n" for t in types))


def video(path, seconds, codec, extra=()):
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", str(seconds),
                    "-c:v", codec, *(["-pix_fmt", "yuv420p"] if codec == "libx264" else []), *extra, path], check=True)


def setup():
    os.makedirs(PHOTOS, exist_ok=True)
    install_fake_player()
    cli(["init", "--kdf-iterations", "2", "--kdf-memory", "19"], [PRIMARY])
    cli(["fido2", "enroll", "--name", "GUI test key"], [PRIMARY])
    r = subprocess.run([CLI, "pin", "set-backup", "--vault", VAULT, "--keystore", KEYSTORE, "--pin-stdin", "--new-pin-fd", "0"],
                       input=f"{PRIMARY}\n{BACKUP}\n", capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"setup: set-backup failed: {r.stderr.strip()}")
    cli(["import", photo("backup-only.jpg", "purple")], [BACKUP])
    for i, colour in enumerate(["red", "green", "blue"], 1):
        photo(f"photo-{i}.jpg", colour)


def wait_label(text, timeout=30.0, exact=True):
    return find(text, "label", timeout=timeout, exact=exact)


def main_window():
    focus_window("^Nu11VLT$")


def unlock_with_keypad(pin):
    for digit in pin:
        press(f"Digit {digit}")
    press("Unlock with keypad")


def unlock_typing(pin):
    main_window()
    click(find("PIN", "password text"))
    type_text(pin)
    key("Return")


def through_chooser(path, check_cover=False, button="Import", title="Import into the vault"):
    press(button)
    focus_window(title)
    if check_cover:
        # The chooser is the app's own dialog: the app is not hidden behind the privacy cover
        # while it is open (issue 33) — past the cover's one-second re-check.
        time.sleep(1.5)
        assert not [a for a in named("Privacy cover") if showing(a)], "the privacy cover hides the app behind its own chooser"
    key("ctrl+l")
    time.sleep(0.3)
    type_text(path)
    time.sleep(0.5)
    for _ in range(5):
        key("Return")
        try:
            wait_for(lambda: not window_exists(title), "the chooser to close", 3)
            step(f"  chose {os.path.basename(path)}")
            return
        except Timeout:
            focus_window(title)
    raise Timeout("the file chooser did not take the path")


def window_exists(title):
    r = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", title], capture_output=True, text=True)
    return bool(r.stdout.split())


def tile_names():
    return {t for t in texts("label") if t.endswith(".jpg")}


def run_app():
    env = dict(os.environ)
    strace_log = os.path.join(WORK, "strace.log")
    app = subprocess.Popen(["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=socket,connect", "-o", strace_log,
                            APP, "--vault", VAULT, "--keystore", KEYSTORE],
                           env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK, "app.log"), "w"))
    return app, strace_log


def scenario():
    step("the unlock screen (the gate ran first)")
    wait_label("Enter your PIN", timeout=60)
    main_window()
    # A laptop's screen: the window fills the 1280×800 display (the narrow pass is a phone's).
    wid = focus_window("^Nu11VLT$")
    fill_screen(wid)
    time.sleep(1.0)
    geometry = subprocess.run(["xdotool", "getwindowgeometry", wid], capture_output=True, text=True).stdout
    assert "1280x800" in geometry, f"the window is not 1280×800: {geometry}"
    screenshot(os.path.join(SHOTS, "unlock.png"))

    step("unlock with the primary PIN on the keypad")
    unlock_with_keypad(PRIMARY)
    find("Import", "push button", timeout=60)
    wait_label("fading.jpg")

    step("import three photos through the file chooser")
    for i in (1, 2, 3):
        through_chooser(os.path.join(PHOTOS, f"photo-{i}.jpg"), check_cover=(i == 1))
        wait_label(f"photo-{i}.jpg", timeout=60)
    main_window()
    gone("Privacy cover", timeout=10)

    step("importing a file that is already in the vault asks once (as the CLI does): Skip imports nothing")
    def count():
        # Copies of photo-1.jpg only: a Fade item of the setup may expire meanwhile.
        out = subprocess.run([CLI, "list", "--json", "--all", "--vault", VAULT, "--keystore", KEYSTORE, "--pin-stdin"],
                             input=PRIMARY + "\n", capture_output=True, text=True).stdout
        return sum(1 for item in json.loads(out)["items"] if item.get("name") == "photo-1.jpg")
    before = count()
    assert before == 1, f"photo-1.jpg is in the vault {before} times before the duplicate import"
    through_chooser(os.path.join(PHOTOS, "photo-1.jpg"))
    find("Already in the vault", timeout=30)
    respond("Skip")
    time.sleep(2.0)
    after = count()
    assert after == before, f"a duplicate was imported although Skip was chosen (photo-1.jpg {after} times)"
    main_window()
    gone("Privacy cover", timeout=10)

    step("import a folder from its own chooser (subfolders too): files without a thumbnail show their type's icon")
    dump = os.path.join(WORK, "phone-dump")  # the user's own folder (no photo marker in it)
    os.makedirs(os.path.join(dump, "Documents"), exist_ok=True)
    with open(os.path.join(dump, "readme.txt"), "w") as f:
        f.write("a text file from the phone\n")
    with open(os.path.join(dump, "Documents", "ticket.pdf"), "wb") as f:
        f.write(b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
    os.makedirs(os.path.join(dump, "Camera"), exist_ok=True)
    video(os.path.join(dump, "Camera", "clip-a.mp4"), 2, "libx264", ["-metadata", "creation_time=2024-05-01T10:20:30Z"])
    video(os.path.join(dump, "Camera", "clip-b.webm"), 1, "libvpx-vp9")
    subprocess.run(["convert", "-size", "240x320", "gradient:teal-white", os.path.join(dump, "Camera", "screenshot.png")], check=True)
    subprocess.run(["heif-enc", "-q", "60", os.path.join(dump, "Camera", "screenshot.png"), "-o", os.path.join(dump, "Camera", "iphone.heic")],
                   check=True, capture_output=True)
    # An iPhone Live Photo, taken today: the still and its motion, one name in one folder.
    live_still = os.path.join(WORK, "live-still.png")
    subprocess.run(["convert", "-size", "240x320", "gradient:orange-white", live_still], check=True)
    subprocess.run(["heif-enc", "-q", "60", live_still, "-o", os.path.join(dump, "Camera", "IMG_0001.HEIC")], check=True, capture_output=True)
    video(os.path.join(dump, "Camera", "IMG_0001.MOV"), 2, "libx264", ["-f", "mov"])
    # Files without a capture date are sorted and grouped by their own mtime.
    for name, day in [("readme.txt", (2021, 3, 4)), ("Documents/ticket.pdf", (2020, 2, 3)), ("Camera/clip-b.webm", (2022, 6, 7)),
                      ("Camera/screenshot.png", (2019, 1, 2)), ("Camera/iphone.heic", (2018, 5, 6))]:
        when = datetime.datetime(*day, 12, 0).timestamp()
        os.utime(os.path.join(dump, name), (when, when))
    through_chooser(dump, button="Import a folder", title="Import a folder into the vault")
    wait_label("screenshot.png", timeout=60)
    wait_label("iphone.heic", timeout=60)
    main_window()

    step("files that are neither photos nor videos have a section of their own (Files): their type's icon, their mtime's sections")
    assert "readme.txt" not in texts() and "ticket.pdf" not in texts(), "the photo gallery shows files that are not photos"
    press_row("Files")
    wait_label("readme.txt", timeout=60)
    wait_label("ticket.pdf", timeout=60)
    assert "photo-1.jpg" not in texts() and "iphone.heic" not in texts(), "the Files section shows photos"
    files = wait_for(lambda: (lambda h: h if len(h) >= 2 else None)(section_headers()), "the Files section's two date headers", 30)
    assert [day for day, _, _ in files] == [datetime.date(2021, 3, 4), datetime.date(2020, 2, 3)], f"Files' sections: {files}"
    time.sleep(1.0)
    screenshot(os.path.join(SHOTS, "gallery-files.png"))
    press_row("Photos")
    wait_label("photo-1.jpg", timeout=30)

    step("every tile has a thumbnail or its type's icon and a name; date sections newest first, by capture date or mtime")
    for name in ("screenshot.png", "iphone.heic"):
        find(name, "label", timeout=30, visible=False)
    shown = wait_for(lambda: (lambda h: h if len(h) >= 5 else None)(section_headers()), "the five date headers", 30)
    days = [day for day, _, _ in shown]
    assert days == sorted(days, reverse=True) and len(set(days)) == len(days), f"the sections are out of order: {shown}"
    assert days[0] == datetime.date.today() and days[-1] == datetime.date(2018, 5, 6), f"sections: {shown}"
    find("IMG_0001.HEIC, Live Photo", timeout=30, visible=False)
    step("Ctrl+scroll zooms the sections out to years and back to days (as a pinch and -/+ do)")
    g = center(find("Gallery"))
    subprocess.run(["xdotool", "mousemove", "--sync", str(g[0]), str(g[1])], check=True)
    subprocess.run(["xdotool", "keydown", "ctrl", "click", "--delay", "300", "5", "click", "5", "keyup", "ctrl"], check=True)
    find("Section: 2018", timeout=15, visible=False)
    find("Section: 2024", timeout=15, visible=False)
    screenshot(os.path.join(SHOTS, "gallery-years.png"))
    subprocess.run(["xdotool", "keydown", "ctrl", "click", "--delay", "300", "4", "click", "4", "keyup", "ctrl"], check=True)
    gone("Section: 2018", timeout=15)
    wait_for(lambda: (lambda h: h if len(h) >= 5 else None)(section_headers()), "the day headers again", 30)
    assert "IMG_0001.MOV" not in texts(), "a Live Photo's motion has a tile of its own"
    screenshot(os.path.join(SHOTS, "gallery-sections.png"))

    step("videos: tiles with the poster and duration; the viewer plays one in place (the helper decodes it), no player, no file")
    clip = find("clip-a.mp4, video, 0:02", timeout=60)
    find("clip-b.webm, video, 0:01", timeout=30)
    double_click(clip)
    find("Back to gallery", "push button")
    assert not enabled(find("Full size", "push button")), "Full size is offered for a video"
    press("Information")
    wait_label("Duration: 0:02", timeout=15, exact=False)
    press("Information")
    assert enabled(find("Play", "push button")), "Play is not offered for a video"
    played_in_place(os.path.join(SHOTS, "viewer-video.png"))
    no_player_no_file("the video")
    press("Back to gallery")
    main_window()

    step("a Live Photo is one tile (LIVE); its viewer plays the motion in place")
    double_click(find("IMG_0001.HEIC, Live Photo", timeout=30))
    find("Back to gallery", "push button")
    press("Information")
    wait_label("Live Photo", timeout=15, exact=False)
    press("Information")
    played_in_place(os.path.join(SHOTS, "viewer-live-photo.png"))
    # Delete names the motion that would go with the still (a name-based pairing may be wrong); Cancel keeps both.
    press("Delete item")
    wait_label("“IMG_0001.MOV”", timeout=20, exact=False)
    respond("Cancel")
    gone("“IMG_0001.MOV”", timeout=15, exact=False)
    no_player_no_file("the Live Photo's motion")
    press("Back to gallery")
    main_window()

    step("another program's window in front: the privacy cover is up; back in the app it is gone")
    other = subprocess.Popen(["display", "-size", "200x200", "xc:gray"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        focus_window("^ImageMagick")
        find("Privacy cover", timeout=10)
    finally:
        other.kill()
        other.wait(timeout=10)
    main_window()
    gone("Privacy cover", timeout=10)
    names = wait_for(lambda: (lambda n: n if {"photo-1.jpg", "photo-2.jpg", "photo-3.jpg"} <= n else None)(tile_names()),
                     "three named tiles", 30)
    assert "backup-only.jpg" not in names, "the primary vault shows a backup item"
    time.sleep(1.5)  # thumbnails decode on the worker
    screenshot(os.path.join(SHOTS, "gallery.png"))

    step("open one photo in the viewer")
    double_click(wait_label("photo-2.jpg"))
    find("Back to gallery", "push button")
    time.sleep(1.0)
    screenshot(os.path.join(SHOTS, "viewer.png"))
    # The viewer's buttons are GActions (viewer.*): "Full size" runs once, then greys out.
    assert enabled(find("Next item", "push button")) and enabled(find("Previous item", "push button"))
    press("Full size")
    wait_for(lambda: not enabled(find("Full size", "push button")), "Full size to grey out once shown", 30)

    step("the viewer zooms (+, 0) and shows what is known about the photo (ⓘ)")
    main_window()
    click(find("Zoom in", "push button"))  # a real click: the keyboard focus is then inside the viewer
    wait_label("Zoom 125%", timeout=15)
    key("plus")
    wait_label("Zoom 156%", timeout=15)
    key("0")
    wait_label("Fit", timeout=15)
    press("Information")
    wait_label("Dimensions: 320 × 240", timeout=15, exact=False)
    assert any("Taken:" in t for t in texts()), "the information pane says nothing about when the photo was taken"
    screenshot(os.path.join(SHOTS, "viewer-info.png"))
    press("Information")

    step("move to album: a new album by name, then the same album chosen from the list (no free text)")
    press("Move to album")
    click(find("New album name", "text", timeout=15))
    type_text("Trips")
    respond("Move")
    find("Album Trips", "list item", timeout=30)
    main_window()
    press("Next item")
    press("Move to album")
    find("Trips", "check box", timeout=15)
    respond("Move")  # the first album is chosen already
    def in_trips():
        out = subprocess.run([CLI, "list", "--album", "Trips", "--vault", VAULT, "--keystore", KEYSTORE, "--pin-stdin"],
                             input=PRIMARY + "\n", capture_output=True, text=True).stdout
        return out if out.count(".jpg") == 2 else None
    wait_for(in_trips, "two photos in the album Trips", 30)
    main_window()
    press("Previous item")  # back to photo-2, which the next step exports
    wait_label("photo-2.jpg", timeout=15)

    step("export it through the file chooser: the original's bytes, where the user chose, 0600")
    press("Export item")
    focus_window("^Export$")
    target = os.path.join(PHOTOS, "exported-photo-2.jpg")  # removed with the originals before the scan
    time.sleep(0.5)
    key("ctrl+a")
    type_text(target)
    time.sleep(0.5)
    key("Return")
    original = open(os.path.join(PHOTOS, "photo-2.jpg"), "rb").read()
    wait_for(lambda: os.path.exists(target) and open(target, "rb").read() == original or None, "the exported photo", 30)
    mode = os.stat(target).st_mode & 0o777
    assert mode == 0o600, f"the export is mode {oct(mode)}"
    main_window()
    press("Back to gallery")

    step("export an archive: a weak password refused, a strong one accepted; `nu11vlt archive inspect` reads it")
    archive = os.path.join(WORK, "exported.n11a")
    for password, refused in (("password1", True), (ARCHIVE_PASSWORD, False)):
        main_window()
        press("Archives")
        respond("Export archive…")
        new_password(password)
        if refused:
            wait_label("The password is too weak", timeout=30)
            respond("OK")
            gone("The password is too weak", timeout=10)
    focus_window("^Export archive$")
    time.sleep(0.5)
    key("ctrl+a")
    type_text(archive)
    time.sleep(0.5)
    key("Return")
    wait_label("Archive exported", timeout=120)
    respond("OK")
    assert os.stat(archive).st_mode & 0o777 == 0o600, "the archive is not 0600"
    r = subprocess.run([CLI, "archive", "inspect", archive], capture_output=True, text=True)
    assert r.returncode == 0 and "portable" in r.stdout.lower(), f"archive inspect: {r.stdout} {r.stderr}"
    main_window()
    gone("Privacy cover", timeout=10)

    step("delete from the viewer: the confirmation names the item; Cancel keeps it, Delete destroys it")
    main_window()
    double_click(wait_label("photo-3.jpg"))
    find("Back to gallery", "push button")
    press("Delete item")
    find("Delete “photo-3.jpg”?", timeout=15)
    respond("Cancel")
    press("Delete item")
    find("Delete “photo-3.jpg”?", timeout=15)
    respond("Delete")
    wait_for(lambda: "photo-3.jpg" not in tile_names() or None, "photo-3.jpg to leave the gallery", 30)
    listed = subprocess.run([CLI, "list", "--vault", VAULT, "--keystore", KEYSTORE, "--pin-stdin"],
                            input=PRIMARY + "\n", capture_output=True, text=True).stdout
    assert "photo-3.jpg" not in listed and "photo-1.jpg" in listed, f"the CLI lists: {listed}"
    main_window()  # no window manager here: the focus does not come back from the dialog by itself
    gone("Privacy cover", timeout=10)

    step("a multi-selection (click, Ctrl+click) moves to a new album made in the dialog")
    click(find("clip-a.mp4, video, 0:02", timeout=30))
    ctrl_click(find("clip-b.webm, video, 0:01", timeout=30))
    press("Move selected to album")
    find("Move 2 items to an album", timeout=15)
    click(find("New album name", "text", timeout=15))
    type_text("Clips")
    respond("Move")
    find("Album Clips", "list item", timeout=30)
    wait_for(lambda: (lambda out: out if "clip-a.mp4" in out and "clip-b.webm" in out else None)(
        subprocess.run([CLI, "list", "--album", "Clips", "--vault", VAULT, "--keystore", KEYSTORE, "--pin-stdin"],
                       input=PRIMARY + "\n", capture_output=True, text=True).stdout), "both clips in the album Clips", 30)
    main_window()

    step("export a selection to a folder holding one of the names: asked once, keep both, a summary; nothing replaced")
    here = os.path.join(PHOTOS, "export-here")
    os.makedirs(here, exist_ok=True)
    with open(os.path.join(here, "photo-1.jpg"), "w") as f:
        f.write("the user's own file, already here\n")
    click(wait_label("photo-1.jpg"))
    ctrl_click(wait_label("photo-2.jpg"))
    through_chooser(here, button="Export selected", title="Export 2 items to a folder")
    find("A file named “photo-1.jpg” is already there", timeout=30)
    screenshot(os.path.join(SHOTS, "export-clash.png"))
    respond("Keep both")
    find("1 got a new name", timeout=30, exact=False)
    respond("OK")
    assert open(os.path.join(here, "photo-1.jpg")).read() == "the user's own file, already here\n", "a file in the folder was replaced"
    for name, original in [("photo-1 (2).jpg", "photo-1.jpg"), ("photo-2.jpg", "photo-2.jpg")]:
        with open(os.path.join(here, name), "rb") as a, open(os.path.join(PHOTOS, original), "rb") as b:
            assert a.read() == b.read(), f"{name} is not the original {original}"
    main_window()
    gone("Privacy cover", timeout=10)

    step("a note, typed into the editor and autosaved sealed")
    press_row("Notes")
    press("New note")
    click(find("Note text", "text", timeout=30))
    time.sleep(0.5)
    type_text("Meeting notes " + NOTE_MARKER)
    wait_label("Saved", timeout=30)
    time.sleep(1.5)
    wait_label("Saved", timeout=30)
    screenshot(os.path.join(SHOTS, "notes.png"))

    step("the fade item disappears at its deadline while the app is open")
    press_row("Photos")
    wait_label("photo-1.jpg")
    gone("fading.jpg", "label", timeout=FADE_SECONDS + 60)

    rotation_by_another_process()

    step("lock with Ctrl+L")
    main_window()
    key("ctrl+l")
    wait_label("Locked. Enter your PIN", timeout=30)
    assert not tile_names(), "tiles are still in the tree after lock"

    step("unlock with the backup PIN: the backup vault only")
    unlock_typing(BACKUP)
    names = wait_for(lambda: tile_names() or None, "the backup vault's tiles", 60)
    assert names == {"backup-only.jpg"}, f"the backup PIN sees {names}"

    step("the backup session sets the duress PIN (in its settings: the primary's offer only the backup PIN)")
    press_row("Settings")
    press("Set duress PIN")
    new_password(DURESS)
    wait_label("The duress PIN is set", timeout=60)
    main_window()
    key("ctrl+l")
    wait_label("Locked. Enter your PIN", timeout=30)

    step("unlock with the security key (a touch on the software authenticator, no PIN)")
    main_window()
    press("Unlock with security key")
    find("Import", "push button", timeout=60)
    names = wait_for(lambda: tile_names() or None, "the primary vault's tiles", 60)
    assert "backup-only.jpg" not in names, "the security key opened the backup vault"

    step("the primary's settings")
    press_row("Settings")
    find("Lock after", "text")
    time.sleep(0.5)
    screenshot(os.path.join(SHOTS, "settings.png"))

    step("settings: albums renamed and deleted there (the items kept in Photos), as the CLI then lists them")
    main_window()
    press("Rename album Trips")
    entry = find("Rename the album “Trips”", "text", timeout=15)
    click(entry)
    key("ctrl+a")
    type_text("Holidays")
    respond("OK")
    find("Album Holidays", "list item", timeout=30)
    main_window()
    press("Delete album Clips")
    find("Delete the album “Clips”?", timeout=15)
    respond("Delete album, keep items")
    gone("Album Clips", "list item", timeout=30)
    albums = subprocess.run([CLI, "album", "list", "--vault", VAULT, "--keystore", KEYSTORE, "--pin-stdin"],
                            input=PRIMARY + "\n", capture_output=True, text=True).stdout
    assert "Holidays" in albums and "Trips" not in albums and "Clips" not in albums, f"the CLI lists the albums: {albums}"
    listed = subprocess.run([CLI, "list", "--vault", VAULT, "--keystore", KEYSTORE, "--pin-stdin"],
                            input=PRIMARY + "\n", capture_output=True, text=True).stdout
    assert "clip-a.mp4" in listed and "clip-b.webm" in listed, "deleting the album took its items"
    main_window()

    step("settings: a switch applies at once, and is what `nu11vlt settings get` reports")
    main_window()
    toggle = find("Remove location when exporting", "check box")
    assert not toggle.getState().contains(pyatspi.STATE_CHECKED), "location stripping is on by default"
    click(toggle)
    wait_label("Remove location when exporting: true", timeout=30)
    got = subprocess.run([CLI, "settings", "get", "export.strip_location", "--vault", VAULT, "--keystore", KEYSTORE],
                         capture_output=True, text=True)
    assert got.returncode == 0 and got.stdout.strip().endswith("true"), f"settings get says {got.stdout!r} {got.stderr!r}"

    step("settings: arm the Skeleton Switch (asked, then confirmed), check in, disarm")
    press("Arm Skeleton Switch")
    respond("OK")  # the interval dialog, 7d as offered
    respond("Arm")  # the confirmation
    wait_label("Skeleton Switch armed", timeout=30)
    wait_label("Armed: wipes after 7d without a check-in", timeout=30, exact=False)
    press("Skeleton check-in")
    wait_label("Checked in", timeout=30)
    press("Disarm Skeleton Switch")
    wait_label("Skeleton Switch disarmed", timeout=30)
    wait_label("Off", timeout=30)
    # The switch's GActions follow its state: off, there is nothing to check in or disarm.
    for name in ("Skeleton check-in", "Disarm Skeleton Switch"):
        assert not enabled(find(name, "push button")), f"{name} is clickable while the switch is off"
    assert enabled(find("Arm Skeleton Switch", "push button")), "Arm is greyed while the switch is off"
    assert not named("Set duress PIN", "push button"), "the primary session offers to set the duress PIN"
    find("Set backup PIN", "push button")

    step("settings: lock.idle set to 10s through its field (a bad value refused); then the idle lock")
    main_window()
    click(find("Lock after", "text"))
    key("ctrl+a")
    type_text("3s")
    key("Return")
    wait_label("'3s' is not allowed for lock.idle", timeout=30, exact=False)
    click(find("Lock after", "text"))
    key("ctrl+a")
    type_text("10s")
    key("Return")
    # No more input: the app locks itself after 10 s (with the default, 5 minutes, this times out).
    wait_label("Locked after 10s without input. Enter your PIN", timeout=60)
    assert not tile_names(), "tiles are still in the tree after the idle lock"

    step("wrong PINs: the delay is shown as a countdown")
    for attempt in range(1, 6):
        unlock_typing(WRONG)
        counted = f"Wrong PIN ({attempt} failed attempt{'' if attempt == 1 else 's'})"
        if attempt < 5:
            wait_label(counted + ". Enter your PIN", timeout=30)
    countdown = wait_for(lambda: [t for t in texts("label") if re.match(r"Wrong PIN \(5 failed attempts\)\. Try again in \d+ s", t)],
                         "the countdown", 30)
    first = countdown[0]
    time.sleep(2.2)
    later = [t for t in texts("label") if "Try again in" in t]
    assert later and later[0] != first, f"the countdown does not count: {first} then {later}"
    screenshot(os.path.join(SHOTS, "wrong-pin.png"))

    step("quit with Ctrl+Q")
    main_window()
    key("ctrl+q")
    no_player_no_file("anything")


def cli_as(args, stdin, vault=None, keystore=None):
    """The CLI on a vault (the main one by default), `stdin` its input; the whole result."""
    return subprocess.run([CLI, *args, "--vault", vault or VAULT, "--keystore", keystore or KEYSTORE],
                          input=stdin, capture_output=True)


def rotation_by_another_process():
    """Issue 55: credentials replaced by another process while the app stays unlocked. A rekey
    and a recovery setup the app follows at its next import (current keys, the new phrase); a
    PIN change it cannot follow without the new PIN: its next import is refused, it locks and
    says why; unlocked with the new PIN its import opens with the new PIN only, and `recover`
    with the new phrase (a copy of the folder, a fresh key store) brings back every item.
    From here on the new PIN is the primary PIN of the rest of the story."""
    global PRIMARY
    step("issue 55: another process runs rekey and recovery setup while the app is unlocked; the app's next import follows (current keys, the new phrase)")
    cli(["rekey"], [PRIMARY])
    made = cli(["recovery", "setup"], [PRIMARY])
    phrase = re.search(r"[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}", made).group(0)
    through_chooser(photo("after-rotation.jpg", "purple"))
    wait_label("after-rotation.jpg", timeout=60)
    main_window()
    gone("Privacy cover", timeout=10)
    listed = json.loads(cli(["list", "--json"], [PRIMARY]))["items"]
    new_id = next(i["id"] for i in listed if i["name"] == "after-rotation.jpg")
    checked = subprocess.run([CLI, "check", "--vault", VAULT, "--keystore", KEYSTORE, "--pin-stdin"],
                             input=PRIMARY + "\n", capture_output=True, text=True)
    assert checked.returncode == 0, f"check after the app's import under rotated keys: {checked.stdout} {checked.stderr}"
    client = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Fixtures", "splice_client.py")
    opened = subprocess.run(["/usr/bin/python3", client, "phrase", "--vault", VAULT, "--item", new_id],
                            input=phrase + "\n", capture_output=True, text=True)
    assert opened.stdout.startswith("opened"), f"the new phrase does not open the app's import: {opened.stdout} {opened.stderr}"

    step("issue 55: another process changes the PIN while the app is unlocked: the app locks on its own and says why")
    old_pin = PRIMARY
    changed = cli_as(["pin", "change", "--pin-stdin", "--new-pin-fd", "0"], f"{old_pin}\n{NEW_PRIMARY}\n".encode())
    assert changed.returncode == 0, f"pin change in another process: {changed.stderr.decode()}"
    PRIMARY = NEW_PRIMARY
    source = photo("after-pin-change.jpg", "yellow")
    # Since issue 58 the app follows the vault folder (inotify): it meets the rotation by itself
    # and locks before anything can be done under the retired keys (it used to at its next import).
    wait_label("the PIN was changed by another program", timeout=60, exact=False)
    find("PIN", "password text", timeout=30)
    assert not tile_names(), "tiles are still in the tree after the app locked itself"
    listed = json.loads(cli(["list", "--json", "--all"], [PRIMARY]))["items"]
    assert not [i for i in listed if i["name"] == "after-pin-change.jpg"], "the app imported under the retired PIN's keys"
    screenshot(os.path.join(SHOTS, "pin-changed-elsewhere.png"))

    step("issue 55: the new PIN unlocks the app; its import opens with the new PIN, the old PIN opens nothing")
    main_window()
    unlock_with_keypad(PRIMARY)
    find("Import", "push button", timeout=60)
    wait_label("after-rotation.jpg", timeout=60)
    through_chooser(source)
    wait_label("after-pin-change.jpg", timeout=60)
    main_window()
    gone("Privacy cover", timeout=10)
    listed = json.loads(cli(["list", "--json", "--all"], [PRIMARY]))["items"]
    changed_id = next(i["id"] for i in listed if i["name"] == "after-pin-change.jpg")
    exported = cli_as(["export", changed_id, "-o", "-", "--pin-stdin"], (PRIMARY + "\n").encode())
    assert exported.returncode == 0 and exported.stdout == open(source, "rb").read(), \
        f"the new PIN does not export the app's import byte-identical: {exported.stderr.decode()}"
    refused = cli_as(["export", changed_id, "-o", "-", "--pin-stdin"], (old_pin + "\n").encode())
    assert refused.returncode == 3 and not refused.stdout, \
        f"the old PIN after the change: exit {refused.returncode}, {len(refused.stdout)} bytes, {refused.stderr.decode()}"
    # A right PIN again (the count of wrong ones starts afresh for the steps that count them).
    checked = cli_as(["check", "--pin-stdin"], (PRIMARY + "\n").encode())
    assert checked.returncode == 0, f"check after the app's import under the new PIN: {checked.stdout.decode()} {checked.stderr.decode()}"
    opened = subprocess.run(["/usr/bin/python3", client, "phrase", "--vault", VAULT, "--item", changed_id],
                            input=phrase + "\n", capture_output=True, text=True)
    assert opened.stdout.startswith("opened"), f"the phrase does not open the app's import after the PIN change: {opened.stdout} {opened.stderr}"

    step("issue 55: `recover` with the new phrase (a copy of the folder, a fresh key store) brings back every item, byte-identical")
    copy, fresh = os.path.join(WORK, "rotation-copy"), os.path.join(WORK, "rotation-keystore")
    shutil.copytree(VAULT, copy)
    recovered = recover(phrase, "recovered-55", copy, fresh)
    assert recovered.returncode == 0, f"recover with the new phrase: {recovered.stdout} {recovered.stderr}"
    back = set_of_items(cli_as(["list", "--json", "--all", "--pin-stdin"], b"recovered-55\n", copy, fresh))
    here = set_of_items(cli_as(["list", "--json", "--all", "--pin-stdin"], (PRIMARY + "\n").encode()))
    assert back == here and {new_id, changed_id} <= {i for i, _ in back}, \
        f"recover did not bring back every item: {recovered.stdout} {sorted(here - back)}"
    same_exports(("recovered-55", copy, fresh), (PRIMARY, VAULT, KEYSTORE), "the recovered vault")
    shutil.rmtree(copy)
    shutil.rmtree(fresh)


def recover(phrase, new_pin, vault, keystore):
    """`nu11vlt recover` with the phrase on descriptor 3 and the new PIN on stdin (as the CLI tests run it)."""
    script = 'exec "$0" "$@" --phrase-fd 3 --pin-stdin 3<<EOF\n' + phrase + '\nEOF\n'
    return subprocess.run(["/bin/sh", "-c", script, CLI, "recover", "--kdf-memory", "19", "--kdf-iterations", "2",
                           "--vault", vault, "--keystore", keystore], input=new_pin + "\n", capture_output=True, text=True)


def set_of_items(listed):
    """(id, name) of every item in a `list --json --all` result."""
    assert listed.returncode == 0, f"list: {listed.stderr.decode()}"
    return {(i["id"], i["name"]) for i in json.loads(listed.stdout)["items"]}


def same_exports(one, other, what):
    """`export --all` of two vaults ((pin, vault, keystore) each): the same files, byte for byte."""
    trees = []
    for n, (pin, vault, keystore) in enumerate((one, other)):
        out = os.path.join(WORK, f"compare-{n}")
        os.makedirs(out, mode=0o700)
        r = cli_as(["export", "--all", "-o", out, "--pin-stdin"], (pin + "\n").encode(), vault, keystore)
        assert r.returncode == 0, f"export --all of {vault}: {r.stderr.decode()}"
        tree = {}
        for folder, _, files in os.walk(out):
            for name in files:
                path = os.path.join(folder, name)
                tree[os.path.relpath(path, out)] = hashlib.sha256(open(path, "rb").read()).hexdigest()
        shutil.rmtree(out)
        trees.append(tree)
    assert trees[0] and trees[0] == trees[1], f"{what} differs: {sorted(trees[0].items() ^ trees[1].items())}"
    return trees[0]


def new_password(secret):
    """Fills a new-password dialog (the secret twice) and answers OK."""
    click(find("New password", "password text"))
    type_text(secret)
    click(find("Repeat password", "password text"))
    type_text(secret)
    respond("OK")


def respond(label):
    """Presses a dialog's response button. GTK 4.8 names libadwaita's response buttons twice
    over ("OK OK": the button's label and its label child), and the dialog keeps a second,
    unused row of them for its other layout: the first match answers the dialog."""
    press(f"{label} {label}")


def section_headers():
    """The gallery's date headers GTK has made (the bound part of the grid, which reaches past
    the view), in the accessibility tree's order, which is the grid's: (date, text, y)."""
    found = []
    for acc in named("Section: ", exact=False):
        try:
            if not showing(acc):
                continue
            text = acc.name[len("Section: "):]
            y = acc.queryComponent().getExtents(pyatspi.DESKTOP_COORDS).y
        except Exception:
            continue
        for form in ("%a, %b %d, %Y", "%a, %d %b %Y", "%a %d %b %Y"):
            try:
                found.append((datetime.datetime.strptime(text, form).date(), text, y))
                break
            except ValueError:
                continue
        else:
            raise AssertionError(f"a section header that is not a day: {text!r}")
    return found


def ctrl_click(acc):
    x, y = center(acc)
    subprocess.run(["xdotool", "mousemove", "--sync", str(x), str(y)], check=True)
    subprocess.run(["xdotool", "keydown", "ctrl", "click", "1", "keyup", "ctrl"], check=True)



def scan_for_plaintext():
    """After quitting: the markers of the photos and the note are nowhere on disk."""
    shutil.rmtree(PHOTOS)  # the user's own originals, and what was exported there
    os.makedirs(PHOTOS)
    places = [os.environ["HOME"], os.environ["XDG_RUNTIME_DIR"], "/tmp", "/dev/shm"]
    for marker in (MARKER, NOTE_MARKER):
        r = subprocess.run(["grep", "-rlsaF", marker, *places], capture_output=True, text=True)
        hits = [h for h in r.stdout.split() if h]
        assert not hits, f"plaintext left on disk: {hits}"
    xbel = os.path.join(os.environ["HOME"], ".local/share/recently-used.xbel")
    if os.path.exists(xbel):
        text = open(xbel, encoding="utf-8", errors="replace").read()
        for word in ("photo-1.jpg", "photo-2.jpg", "photo-3.jpg", VAULT, PHOTOS):
            assert word not in text, f"recently-used.xbel mentions {word}"


def check_sockets(strace_log):
    families = re.findall(r"socket\((AF_\w+|PF_\w+)", open(strace_log).read())
    others = sorted({f for f in families if f not in ("AF_UNIX", "PF_UNIX", "AF_LOCAL")})
    assert families, "strace saw no socket at all (X11 and D-Bus use AF_UNIX): the trace is not working"
    assert not others, f"the app opened sockets other than AF_UNIX: {others}"
    print(f"gui: sockets: {len(families)}, all AF_UNIX", flush=True)


def unlimited_core():
    """The highest core limit this process may set: unlimited where the hard limit allows it
    (raising a hard limit needs CAP_SYS_RESOURCE, which some CI containers lack), else the
    hard limit itself. Never raises: a failing preexec_fn would abort the test's own spawn."""
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (ValueError, OSError):
        hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
        except (ValueError, OSError):
            pass


def narrow_dark():
    """The vault of the main scenario again, at 360×720 (a Linux phone) in the dark style:
    one pane at a time, every screen reachable, nothing wider than the window."""
    step("at 360×720 in dark style (a phone): the sections fold, every screen is reachable; screenshots of each")
    app = start_app(APP, VAULT, KEYSTORE, os.path.join(WORK, "narrow-app.log"), {"ADW_DEBUG_COLOR_SCHEME": "prefer-dark"})
    try:
        find("PIN", "password text", timeout=60)
        wid = focus_window("^Nu11VLT$")
        subprocess.run(["xdotool", "windowsize", "--sync", wid, "360", "720"], check=True, capture_output=True)
        time.sleep(1.0)

        def width():
            out = subprocess.run(["xdotool", "getwindowgeometry", wid], capture_output=True, text=True).stdout
            return int(re.search(r"Geometry: (\d+)x(\d+)", out).group(1))
        assert width() <= 380, f"the unlock screen does not fit 360 px: the window is {width()} px wide"
        shot = lambda name: subprocess.run(["import", "-window", wid, os.path.join(SHOTS, name)], check=True, capture_output=True)
        shot("narrow-unlock.png")
        # The wrong PINs of the main scenario left a minute's delay: wait it out. The field has
        # the focus (no click: positions read before the resize may be stale).
        wait_for(lambda: not any("Try again in" in t for t in texts("label")) or None, "the delay to pass", 90)
        # The main scenario left lock.idle at 10 s: on a loaded machine this pass can go longer
        # than that without input (AT-SPI actions are not input), and the app would lock mid-way.
        cli(["settings", "set", "lock.idle", "5m"], [PRIMARY])
        main_window()
        type_text(PRIMARY)
        key("Return")
        find("photo-1.jpg", "label", timeout=60)
        time.sleep(1.5)
        assert width() <= 380, f"the gallery does not fit 360 px: the window is {width()} px wide"
        assert showing(find("Sections", "push button", timeout=15)), "no way back to the sections while folded"
        assert not [a for a in named("Import a folder", "push button") if showing(a)], "the narrow header keeps every button"
        shot("narrow-gallery.png")
        double_click(find("photo-1.jpg", "label"))
        find("Back to gallery", "push button", timeout=15)
        time.sleep(1.0)
        assert width() <= 380, f"the viewer does not fit 360 px: the window is {width()} px wide"
        shot("narrow-viewer.png")
        press("Back to gallery")
        for section, shot_name in (("Notes", "narrow-notes.png"), ("Settings", "narrow-settings.png")):
            press("Sections")
            press_row(section)
            # The section is shown (folded, its header has the way back to the sections).
            wait_for(lambda: [a for a in named("Sections", "push button") if showing(a) and enabled(a)] or None,
                     f"the {section} pane", 15)
            time.sleep(1.0)
            assert width() <= 380, f"{section} does not fit 360 px: the window is {width()} px wide"
            shot(shot_name)
        # The same dark session on a laptop's 1280×800: the sections unfold again, every button is back.
        step("dark at 1280×800: the sections unfold; screenshots of settings, gallery and viewer")
        subprocess.run(["xdotool", "windowsize", "--sync", wid, "1280", "800"], check=True, capture_output=True)
        wait_for(lambda: width() >= 1200 or None, "the window to be 1280 px wide", 15)
        # Archives is in the wide header in every section; the gallery's own buttons (Import a
        # folder…) show only in the gallery since issue 58, checked once it is back.
        wait_for(lambda: [a for a in named("Archives", "push button") if showing(a)] or None,
                 "the wide header's buttons to come back", 15)
        assert not [a for a in named("Sections", "push button") if showing(a)], "still folded at 1280 px"
        time.sleep(1.0)
        shot("dark-settings.png")
        press_row("Photos")
        find("photo-1.jpg", "label", timeout=30)
        wait_for(lambda: [a for a in named("Import a folder", "push button") if showing(a)] or None,
                 "the gallery's wide header buttons at 1280 px", 15)
        time.sleep(1.5)
        shot("dark-gallery.png")
        double_click(find("photo-1.jpg", "label"))
        find("Back to gallery", "push button", timeout=15)
        time.sleep(1.0)
        shot("dark-viewer.png")
        press("Back to gallery")
        main_window()
        key("ctrl+q")
        app.wait(timeout=30)
    except BaseException:
        screenshot(os.path.join(SHOTS, "failure-narrow.png"))
        app.kill()
        raise


def first_run():
    step("first run with no vault: create one in the app (PIN twice, strength shown), the recovery phrase once, then the gallery")
    vault, keystore = FIRST_VAULT, FIRST_KEYSTORE
    os.makedirs(os.path.dirname(vault))
    os.makedirs(os.path.dirname(keystore))
    os.makedirs(PHOTOS, exist_ok=True)
    app = start_app(APP, vault, keystore, os.path.join(WORK, "first-app.log"))
    try:
        find("Create vault", "push button", timeout=60)
        main_window()
        assert not enabled(find("Create vault", "push button")), "Create vault is live before a PIN is typed"
        click(find("New PIN", "password text"))
        type_text("12")
        wait_for(lambda: any("Too short" in t for t in texts()), "the too-short verdict", 15)
        type_text("34")
        # Issue 58: a PIN a thief tries first is refused as it is typed, not only judged weak.
        wait_for(lambda: any("first a thief tries" in t for t in texts()), "1234 refused as a common PIN", 15)
        type_text("71")
        wait_for(lambda: any(t.startswith("Weak") for t in texts()), "the weak verdict for 123471", 15)
        click(find("Repeat PIN", "password text"))
        type_text("123472")
        wait_for(lambda: any("do not match" in t for t in texts()), "the mismatch said", 15)
        assert not enabled(find("Create vault", "push button")), "Create vault is live while the two differ"
        key("BackSpace")
        type_text("1")
        # Issue 56: whether the vault folder may be backed up is asked, with the trade-off, and
        # nothing is chosen for the person.
        wait_for(lambda: any("Choose whether to back up" in t for t in texts()), "the backup question asked", 15)
        assert not enabled(find("Create vault", "push button")), "Create vault is live before the backup question is answered"
        assert any("brings back everything" in t and "after that snapshot" in t for t in texts()), \
            "the creation screen does not state the backup trade-off"
        choose("Back up the vault folder")
        wait_for(lambda: enabled(find("Create vault", "push button")), "Create vault to come alive", 15)
        screenshot(os.path.join(SHOTS, "create.png"))
        press("Create vault")
        pattern = r"[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}"
        phrase = wait_for(lambda: next((t for t in texts() if re.fullmatch(pattern, t)), None), "the recovery phrase shown", 120)
        assert any(vault in t and "What to back up" in t for t in texts()), "the screen does not say which folder to back up"
        screenshot(os.path.join(SHOTS, "recovery-phrase.png"))
        # Issue 56: the phrase is shown unselected: neither PRIMARY nor the clipboard holds
        # anything while it is on screen; "Copy" puts it on the clipboard (never PRIMARY), and
        # it is cleared from there after 10 seconds.
        held = selections()
        assert not any(held.values()), f"on the phrase screen, PRIMARY or the clipboard holds something: {held}"
        press("Copy the recovery phrase")
        wait_for(lambda: selections()["clipboard"] == phrase, "the phrase on the clipboard after Copy", 15)
        assert phrase not in selections()["primary"], "Copy put the phrase in PRIMARY"
        wait_for(lambda: phrase not in selections()["clipboard"], "the clipboard cleared after 10 seconds", 30)
        print("gui: the phrase screen: PRIMARY and the clipboard empty; Copy, then cleared after 10 s", flush=True)
        assert not enabled(find("Open the vault", "push button")), "Open the vault is live before the box is ticked"
        click(find("I have written down the recovery phrase", "check box"))
        press("Open the vault")
        find("Import", "push button", timeout=60)
        step("issue 56: two photos imported through the app into the vault whose folder is backed up")
        firsts = [photo("first-run-1.jpg", "cyan"), photo("first-run-2.jpg", "magenta")]
        for path in firsts:
            through_chooser(path)
            wait_label(os.path.basename(path), timeout=60)
        main_window()
        gone("Privacy cover", timeout=10)
        step("the shortcuts window (Ctrl+?) lists the accelerators")
        main_window()
        key("ctrl+question")
        find("Keyboard Shortcuts", "frame", timeout=15)
        wait_for(lambda: any("Lock the vault" in t for t in texts()), "the shortcuts listed", 15)
        screenshot(os.path.join(SHOTS, "shortcuts.png"))
        key("Escape")
        step("in the settings: change the PIN (asked twice); then the old PIN opens nothing and the new one opens the vault")
        main_window()
        press_row("Settings")
        press("Change PIN")
        click(find("New password", "password text", timeout=15))
        type_text(FIRST_PIN)
        click(find("Repeat password", "password text"))
        type_text(FIRST_PIN)
        respond("OK")
        wait_label("The PIN is changed", timeout=120)
    finally:
        app.send_signal(signal.SIGTERM)
        app.wait(timeout=30)
    # The CLI opens what the app made, with the PIN typed in the app; the phrase is nowhere on disk.
    r = subprocess.run([CLI, "status", "--vault", vault, "--keystore", keystore, "--pin-stdin"],
                       input="123471\n", capture_output=True, text=True)
    assert r.returncode != 0, "the PIN changed in the app still opens the vault"
    r = subprocess.run([CLI, "status", "--vault", vault, "--keystore", keystore, "--pin-stdin"],
                       input=FIRST_PIN + "\n", capture_output=True, text=True)
    assert r.returncode == 0, f"the CLI does not open the app's vault with the new PIN: {r.stderr.strip()}"
    hits = subprocess.run(["grep", "-rlsaF", phrase, vault, keystore, WORK], capture_output=True, text=True).stdout.split()
    assert not hits, f"the recovery phrase is on disk: {hits}"
    # Backups were chosen in the app: the folder carries no exclusion, and status says so.
    assert not os.path.exists(os.path.join(vault, "CACHEDIR.TAG")), "backups were chosen, yet the vault folder is excluded"
    assert os.path.exists(os.path.join(keystore, "CACHEDIR.TAG")), "the key store lost its exclusion"
    r = subprocess.run([CLI, "status", "--vault", vault, "--keystore", keystore], capture_output=True, text=True)
    assert "vault folder backup-friendly" in r.stdout, f"status disagrees with the choice made in the app: {r.stdout}"
    restic_as_the_readme_says(phrase, firsts)


README_REPO, README_RESTORED = "/media/usb/vault-backup", "/tmp/restored"


def readme_line(prefix):
    """The one command line of the README that starts with `prefix`, without its comment."""
    readme = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "README.md")
    lines = [line.strip() for line in open(readme, encoding="utf-8")]
    found = [line.split(" #")[0].strip() for line in lines if line.startswith(prefix)]
    assert len(found) == 1, f"the README has {len(found)} lines starting with {prefix!r}: {found}"
    return found[0]


def restic_as_the_readme_says(phrase, originals):
    """Issue 56: the first run's vault (backups chosen in the app) backed up with the README's
    restic commands, run as printed over the home that holds it (only the repository and the
    restore folder replaced); the home lost; the README's restore; `recover` with the phrase the
    app showed, into a fresh key store: every item, byte-identical; the snapshot holds no
    key-store file."""
    step("issue 56: the README's restic backup of that home, restored elsewhere, recovered with the phrase the app showed: every item; no key-store file in the snapshot")
    repo, restored = os.path.join(WORK, "restic-repo"), os.path.join(WORK, "restored")
    env = {"PATH": os.environ["PATH"], "HOME": FIRST_HOME, "LANG": "C.UTF-8", "XDG_CACHE_HOME": os.path.join(WORK, "restic-cache"),
           "RESTIC_PASSWORD": "restic test repository"}  # restic's own password for its repository

    def sh(line):
        r = subprocess.run(["/bin/sh", "-c", line], env=env, capture_output=True, text=True)
        assert r.returncode == 0, f"{line}: {r.stderr.strip()}"
        return r.stdout
    for verb in ("init", "backup"):
        sh(readme_line(f"restic -r {README_REPO} {verb}").replace(README_REPO, repo))
    stored = [p for p in sh(f"restic -r {repo} ls latest").split("\n") if p.startswith("/")]
    assert FIRST_VAULT + "/index.sqlite" in stored and FIRST_VAULT + "/recovery.n11r" in stored, \
        f"the README's restic command did not store the vault folder: {[p for p in stored if 'nu11vlt' in p]}"
    keys = [p for p in stored if p.startswith(FIRST_KEYSTORE + "/") and p != FIRST_KEYSTORE + "/CACHEDIR.TAG"]
    assert not keys, f"the README's restic command stored the key store: {keys}"
    assert os.path.exists(FIRST_KEYSTORE + "/master.n11k"), "the key store is not where the check looked: the check proves nothing"
    # The laptop is lost: the home with it (set aside here, to compare with what comes back).
    lost = os.path.join(WORK, "lost-home")
    shutil.move(FIRST_HOME, lost)
    try:
        sh(readme_line(f"restic -r {README_REPO} restore").replace(README_REPO, repo).replace(README_RESTORED, restored))
        # The README's recover line names the restored folder as the restore laid it out.
        line = readme_line("nu11vlt recover --vault ")
        at = re.search(r"--vault (\S+)", line).group(1)
        home_in_readme = at[len(README_RESTORED):-len("/.local/share/nu11vlt")]
        assert at.startswith(README_RESTORED + "/") and at.endswith("/.local/share/nu11vlt"), f"the README's recover line: {line}"
        vault = at.replace(README_RESTORED + home_in_readme, restored + FIRST_HOME)
        assert os.path.exists(os.path.join(vault, "index.sqlite")), f"the restore has no vault folder at {vault}"
        assert not os.path.exists(restored + FIRST_KEYSTORE + "/master.n11k"), "the restore brought a key store back"
        fresh = os.path.join(WORK, "restored-keystore")
        r = recover(phrase, "after the laptop was lost", vault, fresh)
        assert r.returncode == 0, f"recover with the phrase the app showed: {r.stdout} {r.stderr}"
        mine = (FIRST_PIN, lost + FIRST_VAULT[len(FIRST_HOME):], lost + FIRST_KEYSTORE[len(FIRST_HOME):])
        back = ("after the laptop was lost", vault, fresh)
        before = set_of_items(cli_as(["list", "--json", "--all", "--pin-stdin"], (mine[0] + "\n").encode(), mine[1], mine[2]))
        after = set_of_items(cli_as(["list", "--json", "--all", "--pin-stdin"], (back[0] + "\n").encode(), back[1], back[2]))
        assert before == after and {n for _, n in before} >= {os.path.basename(p) for p in originals}, \
            f"the recovered vault lists {sorted(after)}, the lost one {sorted(before)}"
        tree = same_exports(back, mine, "the vault recovered from the restic snapshot")
        for path in originals:
            assert tree.get(os.path.basename(path)) == hashlib.sha256(open(path, "rb").read()).hexdigest(), \
                f"{os.path.basename(path)} is not the original after the restore and recover"
        shutil.rmtree(fresh)
        shutil.rmtree(restored)
    finally:
        shutil.move(lost, FIRST_HOME)
    print(f"gui: restic: {len(stored)} paths stored, none of the key store; {len(after)} item(s) recovered byte-identical", flush=True)


def selections():
    """What X11's PRIMARY selection and the clipboard hold now (xsel; empty when nobody owns them)."""
    out = {}
    for name, flag in (("primary", "--primary"), ("clipboard", "--clipboard")):
        r = subprocess.run(["xsel", "--output", flag, "--selectionTimeout", "3000"], capture_output=True, text=True, timeout=20)
        out[name] = r.stdout
    return out


def choose(name):
    """Picks one of a group of choices (a GtkCheckButton in a group: GTK 4.8 gives it no AT-SPI
    action), by a click on it, as the "I have written down" box is ticked."""
    def look():
        return next((a for a in named(name) if a.getRoleName() in ("radio button", "check box") and showing(a)), None)
    click(wait_for(look, f"the choice {name!r}", 15))
    wait_for(lambda: look().getState().contains(pyatspi.STATE_CHECKED), f"the choice {name!r} taken", 15)


def moved_key_store():
    """The review's case: a key store moved away. The app says which half is missing, finds it
    by the vault ID in a folder the user picks, and opens the vault with it: no hint leads
    anywhere near a wipe."""
    step("a moved key store: the app says it is missing, finds it where it was moved, and opens the vault with it")
    vault, keystore = FIRST_VAULT, FIRST_KEYSTORE
    moved = os.path.join(WORK, "usb-stick", "backup", "old-laptop")
    os.makedirs(moved)
    shutil.move(keystore, os.path.join(moved, "nu11vlt-keys"))
    app = start_app(APP, vault, keystore, os.path.join(WORK, "half-app.log"))
    try:
        find("The key store is missing", timeout=60)
        assert not [t for t in texts() if "wipe" in t.lower() or "delete" in t.lower()], "the missing-half screen mentions wiping"
        screenshot(os.path.join(SHOTS, "half-vault.png"))
        main_window()
        through_chooser(os.path.join(WORK, "usb-stick"), button="Search for the key store…", title="Where to search")
        target = os.path.join(moved, "nu11vlt-keys")
        press(f"Open with {target}", timeout=60)
        find("PIN", "password text", timeout=60)
        main_window()
        type_text(FIRST_PIN)
        key("Return")
        find("Import", "push button", timeout=120)
    finally:
        app.send_signal(signal.SIGTERM)
        app.wait(timeout=30)


def moved_vault_folder():
    """Issue 56: a vault folder moved away from its default place. The app finds it once
    ("Search for the vault folder…") and records it in the key store: the next launch opens it
    with no search, and so does the CLI given no --vault."""
    step("a moved vault folder: found once in the app, remembered at the next launch and by the CLI")
    default_vault = os.path.join(os.environ["HOME"], ".local", "share", "nu11vlt")
    r = subprocess.run([CLI, "init", "--backups", "no", "--kdf-iterations", "2", "--kdf-memory", "19", "--pin-stdin"],
                       input=PRIMARY + "\n", capture_output=True, text=True)
    assert r.returncode == 0, f"init at the default places failed: {r.stderr.strip()}"
    moved = os.path.join(WORK, "second-disk", "vaults", "mine")
    os.makedirs(os.path.dirname(moved))
    shutil.move(default_vault, moved)
    env = dict(os.environ)
    env.pop("NU11VLT_FIDO2_DEVICE", None)

    def launch(log):
        return subprocess.Popen([APP], env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK, log), "w"))
    app = launch("moved-vault-app.log")
    try:
        find("The vault folder is missing", timeout=60)
        main_window()
        through_chooser(os.path.join(WORK, "second-disk"), button="Search for the vault folder…", title="Where to search")
        press(f"Open with {moved}", timeout=60)
        find("PIN", "password text", timeout=60)
    finally:
        app.send_signal(signal.SIGTERM)
        app.wait(timeout=30)
    app = launch("moved-vault-again.log")
    try:
        find("PIN", "password text", timeout=60)
        assert not [a for a in named("The vault folder is missing") if showing(a)], "the next launch lost the vault folder again"
    finally:
        app.send_signal(signal.SIGTERM)
        app.wait(timeout=30)
    r = subprocess.run([CLI, "status"], capture_output=True, text=True)
    assert r.returncode == 0 and f"vault      {moved}" in r.stdout, f"the CLI does not follow the record: {r.stdout} {r.stderr}"


def crash_check():
    step("crash the unlocked app (SIGSEGV): not dumpable, no core file")
    vault, keystore = os.path.join(WORK, "crash-vault"), os.path.join(WORK, "crash-keystore")
    name_marker = "N11NAMEMARKER" + secrets.token_hex(8)
    source = os.path.join(WORK, name_marker + ".jpg")
    subprocess.run(["convert", "-size", "320x240", "gradient:red-white", source], check=True)
    for args in (["init", "--kdf-iterations", "2", "--kdf-memory", "19"], ["import", source]):
        r = subprocess.run([CLI, *args, "--vault", vault, "--keystore", keystore, "--pin-stdin"],
                           input=PRIMARY + "\n", capture_output=True, text=True)
        assert r.returncode == 0, f"crash vault: nu11vlt {args[0]} failed: {r.stderr.strip()}"
    os.remove(source)  # the name is now only inside the vault (sealed)
    cwd = os.path.join(WORK, "crash-cwd")
    os.makedirs(cwd)
    # The control: a dumpable process with the same limit, crashed in the same folder.
    control = subprocess.Popen(["sleep", "60"], cwd=cwd, preexec_fn=unlimited_core)
    control.send_signal(signal.SIGSEGV)
    control.wait(timeout=30)
    control_cores = [n for n in os.listdir(cwd) if n.startswith("core")]
    for name in control_cores:
        os.remove(os.path.join(cwd, name))
    # The app runs without capabilities (root's uid, an empty capability set), so that a reader
    # equally without them can tell from /proc whether it is dumpable (issue 57: /proc of the
    # app, as of the helper and the CLI in SandboxProcTests).
    app = subprocess.Popen([SETPRIV, *CAPLESS, APP, "--vault", vault, "--keystore", keystore], cwd=cwd,
                           preexec_fn=unlimited_core, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_label("Enter your PIN", timeout=60)
        main_window()
        unlock_with_keypad(PRIMARY)
        wait_label(name_marker + ".jpg", timeout=60)
        check_app_proc(app.pid, vault, keystore, name_marker)
        limits = open(f"/proc/{app.pid}/limits").read()
        core_line = [line for line in limits.split("\n") if line.startswith("Max core file size")]
        assert core_line and core_line[0].split()[4:6] == ["0", "0"], f"the app's core limit: {core_line}"
        # Raise the limit again from outside: now only the app's non-dumpable flag stands
        # between the crash and a core file (the kernel dumps no non-dumpable process while
        # fs.suid_dumpable is 0; the control above shows that a dumpable one does dump).
        suid_dumpable = open("/proc/sys/fs/suid_dumpable").read().strip()
        raised = False
        if suid_dumpable == "0":
            # Needs CAP_SYS_RESOURCE (some containers lack it: then the limit and the app's
            # own report below are what is checked).
            raised = subprocess.run(["prlimit", "--pid", str(app.pid), "--core=unlimited:unlimited"],
                                    capture_output=True).returncode == 0
        app.send_signal(signal.SIGSEGV)
        app.wait(timeout=30)
    finally:
        if app.poll() is None:
            app.kill()
    assert app.returncode == -signal.SIGSEGV, f"the app ended with {app.returncode}, not SIGSEGV"
    pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
    cores_possible = hard == resource.RLIM_INFINITY or hard >= 4 << 20
    if not pattern.startswith("|") and cores_possible:
        assert control_cores, f"the control process wrote no core (core_pattern {pattern!r}): the check proves nothing"
    if not cores_possible:
        # This machine lets no process of ours write a core (a container's hard limit, which
        # only CAP_SYS_RESOURCE could raise): the non-dumpable flag, read from /proc above and
        # reported by the app below, is what protects a user's machine, and it is checked.
        print(f"gui: crash: this machine's hard core limit is {hard} bytes: no process can dump here; "
              "the app's non-dumpable flag is what is checked", flush=True)
    cores = [n for n in os.listdir(cwd) if n.startswith("core")]
    assert not cores, f"the crashed app wrote a core file: {cores}"
    places = [WORK, os.environ["HOME"], "/tmp", "/var/crash", "/var/lib/systemd/coredump"]
    r = subprocess.run(["grep", "-rlsaF", name_marker, *[p for p in places if os.path.isdir(p)]], capture_output=True, text=True)
    hits = [h for h in r.stdout.split() if h]
    assert not hits, f"the item's name is on disk after the crash: {hits}"
    report = subprocess.run([APP, "--check-hygiene"], capture_output=True, text=True).stdout.strip()
    assert report == "dumpable 0 core 0/0", f"the app's own process hygiene: {report!r}"
    how = "raised from outside, still no core file (not dumpable)" if raised else "not raisable here (no CAP_SYS_RESOURCE)"
    print(f"gui: crash: core limit 0, {how}; the app reports {report}; the control wrote {len(control_cores)}", flush=True)


SETPRIV = "/usr/bin/setpriv"
CAPLESS = ["--bounding-set=-all", "--inh-caps=-all", "--"]


def proc_status(pid):
    fields = {}
    for line in open(f"/proc/{pid}/status").read().split("\n"):
        key, sep, value = line.partition(":")
        if sep:
            fields[key] = value.strip()
    return fields


def readable_by_peer(pid):
    """A capability-less reader of the same uid may open /proc/PID/environ: PID is dumpable."""
    return subprocess.run([SETPRIV, *CAPLESS, "/bin/cat", f"/proc/{pid}/environ"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def check_app_proc(pid, vault, keystore, marker):
    """The unlocked app as /proc shows it: no capabilities, not dumpable (a control proves the
    reader reads a dumpable process), and no descriptor on a file that is not the vault's, the
    key store's or the system's: nothing decrypted sits in a file, a deleted one included."""
    control = subprocess.Popen([SETPRIV, *CAPLESS, "/bin/sleep", "60"])
    try:
        deadline = time.time() + 10
        while time.time() < deadline and os.readlink(f"/proc/{control.pid}/exe") != "/usr/bin/sleep":
            time.sleep(0.05)
        assert readable_by_peer(control.pid), "the capability-less reader cannot read even a dumpable process: the check would prove nothing"
    finally:
        control.kill()
        control.wait()
    status = proc_status(pid)
    assert status.get("CapEff") == "0000000000000000", f"the app runs with capabilities: {status.get('CapEff')}"
    assert not readable_by_peer(pid), "the unlocked app is dumpable: a process of the same user may read its memory"
    allowed = (os.path.realpath(vault) + "/", os.path.realpath(keystore) + "/", "/usr/", "/dev/", "/proc/", "/sys/",
               "/etc/", "/var/cache/fontconfig/", os.path.realpath(os.environ["HOME"]) + "/.cache/fontconfig/")
    kinds, strays = {}, []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        kind = target.split(":")[0] if ":" in target and not target.startswith("/") else "file"
        kinds[kind] = kinds.get(kind, 0) + 1
        anonymous = target.startswith("/memfd:")  # memory, named for debugging only
        if kind == "file" and not anonymous and (not target.startswith(allowed) or marker in target or target.endswith(" (deleted)")):
            strays.append(target)
    assert not strays, f"the unlocked app holds files outside the vault, the key store and the system: {strays}"
    summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    print(f"gui: crash: the unlocked app from /proc: no capabilities, not dumpable, NoNewPrivs {status.get('NoNewPrivs')}, "
          f"Seccomp {status.get('Seccomp')}; descriptors: {summary}", flush=True)


# The passes of a run, in order; NU11VLT_GUI_PASSES=name,name (run.sh passes it on) runs only
# those, with what they build on (narrow: the scenario's vault; moved_key_store: first_run's).
# "rotation" is for developing the issue-55 steps alone: a fresh vault, the app unlocked, those
# steps, then the security key; the scenario runs them in every full run.
PASSES = ("scenario", "narrow", "first_run", "moved_key_store", "moved_vault", "fling", "library", "devices", "crash")
NEEDS = {"narrow": "scenario", "moved_key_store": "first_run"}


def selected_passes():
    wanted = [p for p in os.environ.get("NU11VLT_GUI_PASSES", "").split(",") if p]
    if not wanted:
        return set(PASSES)
    unknown = [p for p in wanted if p not in PASSES + ("rotation",)]
    if unknown:
        raise SystemExit(f"gui: unknown pass(es) {unknown}; the passes: {', '.join(PASSES)}, rotation")
    chosen = set(wanted)
    for p in wanted:
        if p in NEEDS:
            chosen.add(NEEDS[p])
    print(f"gui: only the passes {', '.join(p for p in PASSES + ('rotation',) if p in chosen)}", flush=True)
    return chosen


def rotation_only():
    """The issue-55 steps alone, on the setup's vault (a pass for developing them)."""
    app, _ = run_app()
    try:
        wait_label("Enter your PIN", timeout=60)
        main_window()
        unlock_with_keypad(PRIMARY)
        find("Import", "push button", timeout=60)
        rotation_by_another_process()
        step("lock with Ctrl+L (no wrong PIN counted), then the security key still opens the vault")
        main_window()
        key("ctrl+l")
        wait_label("Locked. Enter your PIN", timeout=30)
        press("Unlock with security key")
        find("Import", "push button", timeout=60)
        wait_label("after-pin-change.jpg", timeout=60)
        main_window()
        key("ctrl+q")
        app.wait(timeout=30)
    except BaseException:
        screenshot(os.path.join(SHOTS, "failure.png"))
        app.kill()
        print(open(os.path.join(WORK, "app.log"), errors="replace").read()[-3000:], file=sys.stderr)
        raise


def main():
    passes = selected_passes()
    os.makedirs(SHOTS, exist_ok=True)
    if "scenario" in passes or "rotation" in passes:
        key_process = start_security_key()
        setup()
        if "rotation" in passes:
            try:
                rotation_only()
            finally:
                key_process.kill()
    if "scenario" in passes:
        cli(["import", "--fade", f"{FADE_SECONDS}s", photo("fading.jpg", "orange")], [PRIMARY])
        app, strace_log = run_app()
        try:
            scenario()
            app.wait(timeout=30)
        except BaseException:
            screenshot(os.path.join(SHOTS, "failure.png"))
            app.send_signal(signal.SIGTERM)
            log = open(os.path.join(WORK, "app.log"), errors="replace").read()
            at = log.find("crashed")
            print(log[at - 200:at + 2500] if at >= 0 else log[-3000:], file=sys.stderr)
            raise
        finally:
            key_process.kill()
        assert app.returncode == 0, f"the app exited with {app.returncode}"
        scan_for_plaintext()
        check_sockets(strace_log)
    if "narrow" in passes:
        narrow_dark()
    if "first_run" in passes:
        first_run()
    if "moved_key_store" in passes:
        moved_key_store()
    if "moved_vault" in passes:
        moved_vault_folder()
    if "fling" in passes:
        fling_check(CLI, APP, WORK, SHOTS, PRIMARY, step)
    if "library" in passes:
        library_check(CLI, APP, WORK, SHOTS, PRIMARY, step)
    if "devices" in passes:
        devices_check(CLI, APP, WORK, SHOTS, step)
    if "crash" in passes:
        crash_check()
    print("gui: PASS" if passes >= set(PASSES) else "gui: PASS (only the passes chosen)", flush=True)


if __name__ == "__main__":
    try:
        main()
    except (AssertionError, Timeout) as error:
        print(f"gui: FAIL: {error}", flush=True)
        sys.exit(1)
