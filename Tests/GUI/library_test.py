# SPDX-License-Identifier: GPL-3.0-or-later
"""A library, not a file dump (issue 58), on a vault of its own: the gallery shows photos and
videos, Files the rest; a command-line import, delete, album and note made while the app is
unlocked show up by themselves (the import within a second); the search and the filters (kind,
album, location, dates) narrow the grid; Ctrl+A selects what the view shows and nothing else;
"New note" takes the typed title straight away, with an empty state before; at 360 × 720
every viewer action is on screen or in its "More actions" menu, and each is run through the
accessibility tree. Used by gui_test.py (the pass "library")."""
import json
import os
import signal
import subprocess
import time

import pyatspi
from playback_test import TRACED, button_named, play_in_app, wait_event

from atspi_driver import (Timeout, center, press_row, click, double_click, enabled, fill_screen, find, focus_window, gone, key, named,  # noqa: E402
                          press, screenshot, showing, start_app, texts, type_text, wait_for)

NAMES = ("beach.jpg", "city.jpg", "harbour.jpg", "clip.mp4", "report.txt", "live.jpg")


class Library:
    # The clip: red for its first `red_seconds` (what the playback step looks for on screen, and
    # pauses in), then a second of testsrc. The steps' waits for its end follow from these.
    red_seconds = 8
    clip_seconds = red_seconds + 1

    def __init__(self, cli, app, work, shots, pin, step):
        self.cli_path, self.app_path, self.work, self.shots, self.pin, self.step = cli, app, work, shots, pin, step
        self.vault, self.keystore = os.path.join(work, "library-vault"), os.path.join(work, "library-keystore")
        self.folder = os.path.join(work, "library-files")
        # Every file-making call of the app, its threads and its children, from its start
        # (library_check; playback_test.py reads the playback's part).
        self.trace = os.path.join(work, "library-app.trace")

    def cli(self, *args, stdin=None):
        r = subprocess.run([self.cli_path, *args, "--vault", self.vault, "--keystore", self.keystore, "--pin-stdin"],
                           input=(stdin if stdin is not None else self.pin + "\n"), capture_output=True, text=True)
        assert r.returncode == 0, f"library: nu11vlt {' '.join(args)} failed: {r.stderr.strip()}"
        return r.stdout

    def make(self):
        os.makedirs(self.folder)
        path = lambda name: os.path.join(self.folder, name)  # noqa: E731
        for name, colour, taken, gps in (("beach.jpg", "gold", "2023:07:14 10:00:00", True),
                                         ("city.jpg", "gray", "2024:03:02 12:00:00", False),
                                         ("harbour.jpg", "navy", "2024:03:05 09:00:00", False),
                                         ("live.jpg", "green", "2024:06:01 08:00:00", False)):
            subprocess.run(["convert", "-size", "320x240", f"gradient:{colour}-white", path(name)], check=True)
            tags = [f"-DateTimeOriginal={taken}"] + (["-GPSLatitude=48.85", "-GPSLatitudeRef=N", "-GPSLongitude=2.35",
                                                      "-GPSLongitudeRef=E"] if gps else [])
            subprocess.run(["exiftool", "-q", "-overwrite_original", *tags, path(name)], check=True)
        # Solid red, then a second of testsrc; a 440 Hz tone as its sound.
        subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi",
                        "-i", f"color=c=red:size=320x240:rate=25:duration={self.red_seconds}",
                        "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=1",
                        "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={self.clip_seconds}",
                        "-filter_complex", "[0:v][1:v]concat=n=2:v=1:a=0[v]", "-map", "[v]", "-map", "2:a",
                        "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac",
                        "-metadata", "creation_time=2024-05-01T10:20:30Z", path("clip.mp4")], check=True)
        with open(path("report.txt"), "w") as f:
            f.write("a quarterly report\n")
        when = time.mktime((2022, 1, 10, 12, 0, 0, 0, 0, -1))
        os.utime(path("report.txt"), (when, when))
        self.cli("init", "--kdf-iterations", "2", "--kdf-memory", "19")
        self.cli("import", path("beach.jpg"), path("city.jpg"), path("clip.mp4"), path("report.txt"))
        self.cli("album", "create", "Trips")
        self.cli("import", "--album", "Trips", path("harbour.jpg"))

    def item_id(self, name):
        listed = json.loads(self.cli("list", "--json", "--all"))["items"]
        return next(item["id"] for item in listed if item["name"] == name)

    def note_add(self, title, body):
        read, write = os.pipe()
        os.write(write, (self.pin + "\n").encode())
        os.close(write)
        try:
            r = subprocess.run([self.cli_path, "note", "add", "--title", title, "--vault", self.vault, "--keystore", self.keystore,
                                "--pin-fd", str(read)], input=body, capture_output=True, text=True, pass_fds=(read,))
        finally:
            os.close(read)
        assert r.returncode == 0, f"library: nu11vlt note add failed: {r.stderr.strip()}"


def tiles():
    """The names on the gallery's tiles now (labels of the listed files' names)."""
    return {t for t in texts("label") if t in NAMES}


def wait_tiles(expected, what, timeout=20):
    expected = set(expected)
    try:
        return wait_for(lambda: tiles() == expected or None, what, timeout, interval=0.1)
    except Timeout:
        raise AssertionError(f"{what}: the grid shows {sorted(tiles())}, not {sorted(expected)}")



def respond(label):
    press(f"{label} {label}")


def control(name, timeout=15):
    """The shown control named `name`, whatever its role (GTK 4.8 reports a grouped toggle as a
    toggle or radio button, an entry as text or entry), never a label."""
    def look():
        hits = [a for a in named(name) if showing(a) and a.getRoleName() not in ("label", "panel", "filler")]
        return hits[0] if hits else None
    return wait_for(look, f"a control named {name!r}", timeout)


def actionable(acc):
    try:
        return acc.queryAction().nActions > 0
    except NotImplementedError:
        return False


def open_menu(name, inside):
    """Opens the menu button `name` with a click (GTK 4.8 offers no action on a menu button to
    a screen reader) until `inside`, a control in its menu, is there."""
    for _ in range(3):
        click(control(name))
        try:
            return wait_for(lambda: ([a for a in named(inside) if showing(a) and actionable(a)] or [None])[0],
                            f"{inside!r} in the menu {name!r}", 5)
        except Timeout:
            continue
    raise AssertionError(f"the menu {name!r} does not open")


def toggle(name, role=None):
    """Runs the control named `name` (GTK 4.8's menu button is a group without an action around
    the toggle button that has it: the one with an action is pressed)."""
    acc = wait_for(lambda: ([a for a in named(name) if showing(a) and actionable(a)] or [None])[0],
                   f"a control named {name!r} with an action", 15)
    acc.queryAction().doAction(0)


def entry_text(name):
    acc = control(name)
    for candidate in [acc] + [c for c in acc if c is not None]:
        try:
            t = candidate.queryText()
            return t.getText(0, t.characterCount)
        except NotImplementedError:
            continue
    raise AssertionError(f"{name} has no text")


def clear_and_type(name, text):
    click(control(name))
    key("ctrl+a")
    key("BackSpace")
    if text:
        type_text(text)


def window_box(wid):
    out = subprocess.run(["xdotool", "getwindowgeometry", wid], capture_output=True, text=True).stdout
    x, y = out.split("Position: ")[1].split(" ")[0].split(",")
    w, h = out.split("Geometry: ")[1].split()[0].split("x")
    return int(x), int(y), int(w), int(h)


def extents(acc):
    box = acc.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    return box.x, box.y, box.width, box.height


def tile_shades(name, lib):
    """The mean red (0–255: navy has none, white all) of the left, right, top and bottom thirds
    of the picture on the tile named `name`, from a screenshot: the picture is the 160-pixel
    square (Tile.side) 4 pixels above the name, centred on it; its inner 120 pixels are read."""
    from PIL import Image
    x, y, w, _ = extents(find(name, "label"))
    cx, cy = x + w // 2, y - 4 - 80
    path = os.path.join(lib.work, "tile-shades.png")
    screenshot(path)
    image = Image.open(path).convert("RGB").split()[0]
    assert 0 <= cx - 60 and cx + 60 <= image.width and 0 <= cy - 60 and cy + 60 <= image.height, f"{name}'s tile is off the screen"

    def mean(left, top, right, bottom):
        values = list(image.crop((cx + left, cy + top, cx + right, cy + bottom)).getdata())
        return sum(values) / max(1, len(values))
    return {"left": mean(-60, -60, -20, 60), "right": mean(20, -60, 60, 60),
            "top": mean(-60, -60, 60, -20), "bottom": mean(-60, 20, 60, 60)}


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def follow_other_process(lib, pid):
    step = lib.step
    step("library: a CLI import while the app is unlocked shows up within a second, a CLI delete too")
    wait_tiles({"beach.jpg", "city.jpg", "harbour.jpg", "clip.mp4"}, "the photos and the video in Photos", 60)
    time.sleep(1.0)  # the first screen's thumbnails
    started = time.monotonic()
    lib.cli("import", os.path.join(lib.folder, "live.jpg"))
    imported = time.monotonic()
    wait_tiles({"beach.jpg", "city.jpg", "harbour.jpg", "clip.mp4", "live.jpg"}, "the CLI's import in the gallery", 10)
    seen = time.monotonic() - imported
    # The app says when it painted the refreshed grid (--timings, the same monotonic clock); the
    # accessibility tree, which this test reads, follows later on a loaded machine.
    log = open(os.path.join(lib.work, "library-app.log"), errors="replace").read().split("\n")
    painted = [float(line.split()[2]) / 1000 for line in log if line.startswith("timing refresh-painted-at ")]
    after = [t - imported for t in painted if t >= started]
    step(f"  the import took {imported - started:.2f} s; the app painted its tile {after[0] if after else -1:.2f} s after it"
         f" (in the accessibility tree {seen:.2f} s after it)")
    assert after, "the app painted no refreshed grid after the CLI's import"
    assert after[0] <= 1.0, f"the CLI's import was painted {after[0]:.2f} s after it, not within a second"
    lib.cli("delete", lib.item_id("live.jpg"))
    wait_tiles({"beach.jpg", "city.jpg", "harbour.jpg", "clip.mp4"}, "the CLI's delete in the gallery", 10)
    step("library: a CLI rotate turns the photo's tile, no lock and unlock (the tile made again)")
    # harbour.jpg (on screen: its section is the second) is a gradient, navy at the top to white
    # at the bottom: turned right, navy is on the right. Read from the screen.
    before = tile_shades("harbour.jpg", lib)
    assert before["top"] + 80 < before["bottom"] and abs(before["left"] - before["right"]) < 20, f"the tile before: {before}"
    lib.cli("rotate", lib.item_id("harbour.jpg"))
    try:
        wait_for(lambda: (lambda s: s if s["right"] + 80 < s["left"] and abs(s["top"] - s["bottom"]) < 20 else None)(
            tile_shades("harbour.jpg", lib)), "the CLI's rotate on the tile", 10, interval=0.3)
    except Timeout:
        raise AssertionError(f"the tile did not turn after the CLI's rotate: {tile_shades('harbour.jpg', lib)} (before: {before})")
    lib.cli("rotate", "--left", lib.item_id("harbour.jpg"))
    step("library: a CLI album shows up in the sidebar")
    lib.cli("album", "create", "Later")
    find("Album Later", "list item", timeout=10)
    step("library: the app's own refreshes cause no more: idle, it uses next to no CPU")
    time.sleep(1.0)
    before = cpu_seconds(pid)
    time.sleep(3.0)
    used = cpu_seconds(pid) - before
    assert used < 0.6, f"the idle app used {used:.2f} s of CPU in 3 s (a refresh loop?)"


def sections(lib):
    lib.step("library: Photos shows photos and videos; Files the rest")
    assert "report.txt" not in texts(), "Photos shows a text file"
    press_row("Files")
    wait_tiles({"report.txt"}, "the Files section")
    press_row("Photos")
    wait_tiles({"beach.jpg", "city.jpg", "harbour.jpg", "clip.mp4"}, "Photos again")


def filters(lib):
    step = lib.step
    everything = {"beach.jpg", "city.jpg", "harbour.jpg", "clip.mp4"}
    step("library: the search narrows the grid by name")
    clear_and_type("Search by name", "BEA")
    wait_tiles({"beach.jpg"}, "the search for 'BEA'")
    clear_and_type("Search by name", "")
    wait_tiles(everything, "all, the search cleared")

    step("library: the filters narrow it by kind, album, location and dates")
    toggle("Filters")  # the filters show under the search
    toggle("Kind: Videos", "toggle button")
    wait_tiles({"clip.mp4"}, "Kind: Videos")
    toggle("Kind: Photos", "toggle button")
    wait_tiles({"beach.jpg", "city.jpg", "harbour.jpg"}, "Kind: Photos")
    toggle("Kind: All", "toggle button")
    wait_tiles(everything, "Kind: All")
    toggle("In album Trips")
    wait_tiles({"harbour.jpg"}, "the album Trips")
    toggle("Any album")
    wait_tiles(everything, "any album")
    toggle("Has a location", "check box")
    wait_tiles({"beach.jpg"}, "has a location")
    screenshot(os.path.join(lib.shots, "gallery-filters.png"))
    toggle("Has a location", "check box")
    wait_tiles(everything, "location or not")
    clear_and_type("Taken from", "2024-03-01")
    clear_and_type("Taken to", "2024-03-31")
    wait_tiles({"city.jpg", "harbour.jpg"}, "taken in March 2024")

    step("library: Ctrl+A selects the two items of the view, and no header or empty cell")
    click(find("city.jpg", "label", timeout=10))
    key("ctrl+a")
    time.sleep(0.5)
    grid = find("Gallery", timeout=10)
    selected = [acc for depth, acc in walk_with_depth(grid) if has_state(acc, pyatspi.STATE_SELECTED)]
    names = [describe(acc) for acc in selected]
    assert len(selected) == 2, f"Ctrl+A selected {len(selected)} cells, not the view's 2 items: {names}"
    press("Delete selected")
    find("Delete 2 items?", timeout=15)
    respond("Cancel")
    gone("Delete 2 items?", timeout=15)
    share(lib)
    press("Clear filters")
    wait_tiles(everything, "all, the filters cleared")
    toggle("Filters")


def share(lib):
    """Issue 59: the selection shared to another vault's post-quantum recipient through the app;
    the recipient's kind is said before anything is written; the other vault imports the file
    and holds the same bytes under the same names."""
    step = lib.step
    step("library: Share with… a post-quantum recipient of a second vault; that vault imports the same photos")
    other = os.path.join(lib.work, "share-vault")
    def cli_b(*args):
        r = subprocess.run([lib.cli_path, *args, "--vault", other + "/v", "--keystore", other + "/k", "--pin-stdin"],
                           input="share vault pin\n", capture_output=True, text=True)
        assert r.returncode == 0, f"library: nu11vlt {' '.join(args)} (second vault) failed: {r.stderr.strip()}"
        return r.stdout
    cli_b("init", "--kdf-iterations", "2", "--kdf-memory", "19")
    recipient = cli_b("identity", "--post-quantum").strip()
    assert recipient.startswith("age1pq1"), f"identity --post-quantum gave {recipient!r}"
    press("Share selected")
    click(find("Recipient", timeout=15))
    type_text("age1nope")
    wait_for(lambda: any(t.startswith("Not an age recipient") for t in texts()) or None, "a malformed recipient said as such", 10)
    # Pasted, as the dialog asks and as a user does (some 1,950 characters: typed key by key,
    # the entry checks the recipient at each of them).
    subprocess.run(["xsel", "--clipboard", "--input"], input=recipient, text=True, check=True)
    key("ctrl+a")
    key("ctrl+v")
    wait_for(lambda: any(t.startswith("Post-quantum recipient") for t in texts()) or None, "the recipient's kind said", 10)
    subprocess.run(["xsel", "--clipboard", "--clear"], check=True)
    step("  share: a malformed recipient refused, the post-quantum one's kind said")
    respond("Choose File…")
    path = os.path.join(lib.work, "march.age")
    focus_window("^Share$")
    time.sleep(0.5)
    key("ctrl+a")
    type_text(path)
    time.sleep(0.5)
    key("Return")
    wait_for(lambda: any(t.startswith("2 items shared to a post-quantum recipient") for t in texts()) or None, "the share's summary", 60)
    respond("OK")
    step("  share: the file chosen, written, its summary said")
    assert os.stat(path).st_mode & 0o777 == 0o600, "the share is not 0600"
    cli_b("import", path)
    theirs = json.loads(cli_b("list", "--json", "--all"))["items"]
    assert sorted(i["name"] for i in theirs) == ["city.jpg", "harbour.jpg"], f"the second vault holds {theirs}"
    for item in theirs:
        mine, got = os.path.join(lib.work, "mine-" + item["name"]), os.path.join(lib.work, "got-" + item["name"])
        lib.cli("export", lib.item_id(item["name"]), "-o", mine)
        cli_b("export", item["id"], "-o", got)
        assert open(mine, "rb").read() == open(got, "rb").read(), f"{item['name']} differs after the share"
    step("  shared 2 photos to age1pq1…; imported in the second vault byte-identical")


def walk_with_depth(acc, depth=0, out=None):
    out = [] if out is None else out
    try:
        out.append((depth, acc))
        for child in acc:
            if child is not None:
                walk_with_depth(child, depth + 1, out)
    except Exception:
        pass
    return out


def has_state(acc, state):
    try:
        return acc.getState().contains(state)
    except Exception:
        return False


def describe(acc):
    try:
        names = [acc.name] + [c.name for c in acc if c is not None]
        return f"{acc.getRoleName()}:{'/'.join(n for n in names if n)}"
    except Exception:
        return "?"


def back_to_window():
    """The main window focused again after a dialog (the privacy cover goes)."""
    focus_window("^Nu11VLT$")
    gone("Privacy cover", timeout=10)


def notes(lib):
    step = lib.step
    step("library: Notes says there are none; its header has only note actions; New note takes the typed title")
    back_to_window()
    press_row("Notes")
    find("No Notes", "label", timeout=15)
    assert not [a for a in named("Import", "push button") if showing(a)], "the Notes header offers Import"
    assert not [a for a in named("Delete selected", "push button") if showing(a)], "the Notes header offers Delete selected"
    # As a person does it: a click on New note, then typing at once (no click into the title).
    # The click and the keys are X events, delivered in order; an accessibility action is not
    # ordered with them.
    click(find("New note", "push button", timeout=15))
    type_text("Shopping list")  # straight away: no click into the title first
    try:
        wait_for(lambda: entry_text("Note title") == "Shopping list" or None, "the typed title in the title entry", 10)
    except Timeout:
        raise AssertionError(f"the title entry holds {entry_text('Note title')!r}, not the title typed after New note")
    time.sleep(2.5)  # autosaved a second after typing stops
    listed = lib_notes(lib)
    assert listed == ["Shopping list"], f"the vault holds the notes {listed}, not the one typed"
    gone("No Notes", "label", timeout=5)
    step("library: a note written on the command line shows up in the list")
    lib.note_add("From the terminal", "written elsewhere\n")
    find("From the terminal", "list item", timeout=10)


def lib_notes(lib):
    out = lib.cli("note", "list", "--json")
    data = json.loads(out)
    items = data if isinstance(data, list) else data.get("notes", data.get("items", []))
    return sorted(n["name"] for n in items)


def narrow_viewer(lib, wid):
    step = lib.step
    step("library: at 360 × 720 the viewer's actions are on screen or in its menu, and each one runs")
    back_to_window()
    press_row("Photos")
    subprocess.run(["xdotool", "windowsize", "--sync", wid, "360", "720"], check=True, capture_output=True)
    time.sleep(1.5)
    x0, _, width, _ = window_box(wid)
    assert width <= 380, f"the window is {width} px wide at 360"
    double_click(find("city.jpg", "label", timeout=15))
    find("Back to gallery", "push button", timeout=15)
    time.sleep(1.0)

    def on_screen(acc):
        x, _, w, _ = extents(acc)
        return w > 0 and x >= x0 - 1 and x + w <= x0 + width + 1

    inline = {}
    for name in ("Back to gallery", "Previous item", "Next item", "Play", "Information", "More actions"):
        hits = [a for a in named(name) if showing(a) and a.getRoleName() in ("push button", "toggle button")]
        assert hits, f"{name} is not in the narrow viewer"
        assert on_screen(hits[0]), f"{name} is off-screen at 360 px: {extents(hits[0])}, the window at {x0}+{width}"
        inline[name] = hits[0]
    subprocess.run(["import", "-window", wid, os.path.join(lib.shots, "narrow-viewer-folded.png")], check=True, capture_output=True)
    folded = ("Zoom out", "Zoom in", "Full size", "Full screen", "Rotate left", "Rotate right", "Export item", "Move to album",
              "Fade item", "Delete item")
    open_menu("More actions", "Export item")
    time.sleep(0.8)
    # The menu is a window of its own (a popover), inside the 360 px the window takes; GTK 4.8
    # gives its entries no desktop position, so the screenshot of that part of the screen shows it.
    subprocess.run(["import", "-window", "root", "-crop", "360x720+0+0", "+repage", os.path.join(lib.shots, "narrow-viewer-menu.png")],
                   check=True, capture_output=True)
    for name in folded:
        hits = [a for a in named(name, "push button") if showing(a)]
        assert hits, f"{name} is neither on screen nor in the menu at 360 px"
    key("Escape")
    time.sleep(0.5)

    def from_menu(name):
        open_menu("More actions", name)
        acc = wait_for(lambda: ([a for a in named(name, "push button") if showing(a) and enabled(a)] or [None])[0],
                       f"{name} in the menu", 10)
        acc.queryAction().doAction(0)
        time.sleep(0.5)

    step("  narrow viewer: every action on screen or in the menu; now each one run once")
    # Each action once, through the accessibility tree.
    press("Next item")
    press("Previous item")
    wait_for(lambda: "city.jpg" in texts() or None, "city.jpg again", 10)
    press("Information")
    find("Information", "label", timeout=10)
    press("Information")

    def turned(name):
        item = next(i for i in json.loads(lib.cli("list", "--json", "--all"))["items"] if i["name"] == name)
        return item["rotation"], item["width"], item["height"]
    # Rotate: the vault keeps the turn (its displayed size follows), and turns back.
    from_menu("Rotate right")
    wait_for(lambda: turned("city.jpg") == (90, 240, 320) or None, "city.jpg turned right in the vault", 15)
    from_menu("Rotate left")
    wait_for(lambda: turned("city.jpg") == (0, 320, 240) or None, "city.jpg back in its own orientation", 15)
    wait_for(lambda: "city.jpg" in texts() or None, "the viewer still on city.jpg", 10)
    step("  narrow viewer: next, previous, information, rotate right and left run")
    from_menu("Full size")  # first: zooming in past the fit shows the full size too (and greys it)
    wait_for(lambda: not [a for a in named("Full size", "push button") if enabled(a)] or None, "Full size to grey out once shown", 15)
    from_menu("Zoom in")
    find("Zoom 125%", "label", timeout=10)
    from_menu("Zoom out")
    find("Fit", "label", timeout=10)
    from_menu("Full screen")
    time.sleep(1.0)
    # Full screen may widen the window past the narrow layout: out again from where the action is now.
    if window_box(wid)[2] < 600:
        from_menu("Full screen")
    else:
        press("Full screen")
    time.sleep(1.0)
    subprocess.run(["xdotool", "windowsize", "--sync", wid, "360", "720"], check=True, capture_output=True)
    time.sleep(1.0)
    step("  narrow viewer: full size, zoom in and out, full screen run")
    from_menu("Export item")
    focus_window("^Export$")
    key("Escape")
    wait_for(lambda: not subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^Export$"],
                                        capture_output=True, text=True).stdout.split() or None, "the export chooser to close", 15)
    back_to_window()
    from_menu("Move to album")
    respond("Cancel")
    back_to_window()
    from_menu("Fade item")
    respond("Cancel")
    back_to_window()
    from_menu("Delete item")
    find("Delete “city.jpg”?", timeout=15)
    respond("Cancel")
    back_to_window()
    step("  narrow viewer: export, move, fade and delete each open their dialog")
    # Play, on the video (a photo has nothing to play): Previous until it is the video.
    for _ in range(4):
        if [a for a in named("Play", "push button") if showing(a) and enabled(a)]:
            break
        press("Previous item")
        time.sleep(1.0)
    button = wait_for(lambda: ([a for a in named("Play", "push button") if showing(a) and enabled(a)] or [None])[0],
                      "Play for the video", 15)
    pressed = time.monotonic()
    button.queryAction().doAction(0)
    # It plays in place: the button turns into Pause, and back into Play at the end (the
    # held button's name is read, no walk of the tree that could miss the clip's seconds).
    button_named(button, "Pause", 30)
    wait_event(lib, "play-first-frame-shown", pressed, 60)
    ended = wait_event(lib, "play-ended", pressed, lib.clip_seconds + 30)
    button_named(button, "Play", 30)
    step(f"  the clip played {ended - pressed:.1f} s in place and ended by itself")
    back_to_window()
    press("Back to gallery")
    _, _, width, _ = window_box(wid)
    assert width <= 380, f"the window grew to {width} px in the narrow viewer"


def library_check(cli, app, work, shots, pin, step):
    lib = Library(cli, app, work, shots, pin, step)
    step("library: a vault of photos, a video, a text file and an album")
    lib.make()
    # --timings: the app says when it saw another process's change and when it showed it, and
    # what its video player did. strace follows it, its threads and its children from the start
    # (the playback step reads it); the filter in the kernel (--seccomp-bpf) stops only the
    # traced calls, so the app keeps its pace.
    process = subprocess.Popen(["strace", "-f", "--seccomp-bpf", "-qq", "-z", "-ttt", "-e", f"trace={TRACED}", "-o", lib.trace,
                                app, "--vault", lib.vault, "--keystore", lib.keystore, "--timings"],
                               env={k: v for k, v in os.environ.items() if k != "NU11VLT_FIDO2_DEVICE"},
                               stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "library-app.log"), "w"))
    pid = None
    try:
        pid = traced_app(process)
        find("PIN", "password text", timeout=60)
        wid = focus_window("^Nu11VLT$")
        fill_screen(wid)
        time.sleep(1.0)
        click(find("PIN", "password text"))
        type_text(pin)
        key("Return")
        find("Import", "push button", timeout=60)
        follow_other_process(lib, pid)
        sections(lib)
        filters(lib)
        play_in_app(lib)
        narrow_viewer(lib, wid)
        subprocess.run(["xdotool", "windowsize", "--sync", wid, "1280", "800"], check=True, capture_output=True)
        time.sleep(1.0)
        notes(lib)
        focus_window("^Nu11VLT$")
        key("ctrl+q")
        process.wait(timeout=30)
        assert process.returncode == 0, f"the app (under strace) exited with {process.returncode}"
    except BaseException:
        screenshot(os.path.join(shots, "failure-library.png"))
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # the app is gone already: the failure above is what to report
        process.kill()
        raise


def traced_app(tracer):
    """The app's process ID: the child of its strace that runs the app. Not just the first child:
    `strace --seccomp-bpf` first forks a short-lived child of its own to test the filter, and a
    loaded machine once let the test take that one (gone a moment later: /proc/PID/stat missing)."""
    def child():
        try:
            with open(f"/proc/{tracer.pid}/task/{tracer.pid}/children") as f:
                found = f.read().split()
        except FileNotFoundError:
            return None
        for pid in found:
            try:
                if os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "nu11vlt-app":
                    return int(pid)
            except OSError:
                continue
        return None
    return wait_for(child, "the app started under strace", 30, interval=0.05)
