# SPDX-License-Identifier: GPL-3.0-or-later
"""Drives nu11vlt-app the way a screen reader and a keyboard would: the accessibility tree
(AT-SPI: GTK's cache and D-Bus calls, atspi_tree; pyatspi's constants) to find and press
controls by their accessible names, xdotool for keys, text and pointer clicks. Used by
gui_test.py."""
import os
import subprocess
import time

import pyatspi

import atspi_tree


class Timeout(Exception):
    pass


def app_root(name="nu11vlt-app"):
    """The app's root accessible (the first of that name the registry lists), or None."""
    bus_name = atspi_tree.app_node(name)
    return None if bus_name is None else atspi_tree.Node(bus_name, atspi_tree.ROOT)


def walk(acc, depth=0, out=None):
    out = [] if out is None else out
    try:
        out.append((depth, acc))
        for child in acc:
            if child is not None:
                walk(child, depth + 1, out)
    except Exception:
        pass  # a widget went away while we walked: the next poll sees the new tree
    return out


# What the tree walks cost: step() prints and resets it, so a slow step shows whether it
# waited on the app or on walking its tree.
WALKS = {"count": 0, "seconds": 0.0, "nodes": 0}


def walk_stats():
    stats = dict(WALKS)
    WALKS.update(count=0, seconds=0.0, nodes=0)
    return stats


def everything():
    """Every presented accessible of the app (atspi_tree: GTK's cache in one call, then the
    children of each accessible that has some), depth first."""
    started = time.monotonic()
    try:
        found = atspi_tree.tree("nu11vlt-app")
    except Exception:
        found = []  # the app went away during the walk (or is not up yet): the next poll sees
    WALKS["count"] += 1
    WALKS["seconds"] += time.monotonic() - started
    WALKS["nodes"] += len(found)
    return found


def named(name, role=None, exact=True):
    found = []
    for acc in everything():
        try:
            n = acc.snap_name or ""
            if (n == name if exact else name in n) and (role is None or acc.getRoleName() == role):
                found.append(acc)
        except Exception:
            continue
    return found


def showing(acc):
    # GTK 4.8 reports VISIBLE (gtk_widget_get_visible), not SHOWING.
    try:
        return acc.getState().contains(pyatspi.STATE_VISIBLE)
    except Exception:
        return False


def wait_for(predicate, what, timeout=30.0, interval=0.25):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise Timeout(f"timed out after {timeout:.0f} s waiting for {what}")


def find(name, role=None, timeout=30.0, exact=True, visible=True):
    def look():
        hits = [a for a in named(name, role, exact) if not visible or showing(a)]
        return hits[0] if hits else None
    acc = wait_for(look, f"{role or 'widget'} named {name!r}", timeout)
    # How it was found, so a click can find it again when the app replaced the widget in between
    # (a gallery that refreshes its sections re-creates its tiles; a loaded machine widens that gap).
    try:
        acc.found_by = (name, role, exact, visible)
    except AttributeError:
        pass
    return acc


def gone(name, role=None, timeout=30.0, exact=True):
    wait_for(lambda: not [a for a in named(name, role, exact) if showing(a)], f"{name!r} to disappear", timeout)


def enabled(acc):
    """Whether the control can be used now: a button bound to a disabled GAction is insensitive."""
    try:
        return acc.getState().contains(pyatspi.STATE_SENSITIVE)
    except Exception:
        return False


def press(name, role="push button", timeout=30.0):
    """Presses the control once it is shown and enabled (its action may wait for a state)."""
    def look():
        hits = [a for a in named(name, role) if showing(a) and enabled(a)]
        return hits[0] if hits else None
    acc = wait_for(look, f"an enabled {role} named {name!r}", timeout)
    acc.queryAction().doAction(0)
    return acc


def texts(role="label"):
    out = []
    for acc in everything():
        try:
            if acc.getRoleName() == role and acc.snap_state(pyatspi.STATE_VISIBLE):
                out.append(acc.snap_name)
        except Exception:
            continue
    return out


def center(acc):
    box = acc.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    return box.x + box.width // 2, box.y + box.height // 2


def settled_center(acc, timeout=5.0):
    """Where to click `acc`: its centre once it stands still. A page that slides in (the
    gallery after the viewer, a folded sidebar) moves its controls for a few hundred ms, and
    a click taken from the first answer lands where the control was. A widget the app replaced
    since it was found (its accessible object gone) is found again, once, the same way."""
    try:
        last = center(acc)
    except Exception as e:  # noqa: BLE001 - GLib.Error "Object does not exist" from the bus
        query = getattr(acc, "found_by", None)
        if query is None or "does not exist" not in str(e):
            raise
        name, role, exact, visible = query
        acc = find(name, role=role, timeout=10.0, exact=exact, visible=visible)
        last = center(acc)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        time.sleep(0.15)
        now = center(acc)
        if now == last:
            break
        last = now
    return last


def xdo(*args):
    subprocess.run(["xdotool", *args], check=True, capture_output=True)


def focus_window(title, timeout=15.0):
    def look():
        # Mapped windows only: a program creates its window before it maps it, and focusing it
        # in between fails silently (a loaded machine widens that gap).
        r = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", title], capture_output=True, text=True)
        ids = r.stdout.split()
        return ids[-1] if ids else None
    wid = wait_for(look, f"window {title!r}", timeout)
    subprocess.run(["xdotool", "windowfocus", "--sync", wid], capture_output=True)
    time.sleep(0.3)
    return wid


def type_text(text):
    """Types `text` as keystrokes, 40 ms a key (a loaded machine)."""
    xdo("type", "--delay", "40", text)


def key(*keys):
    xdo("key", *keys)


def move_to(x, y):
    """The pointer to (x, y). `mousemove --sync` waits for the pointer to move, and when it is
    there already (the same menu button clicked again) it waits for nothing that comes: some
    15 s on this xdotool. So it moves only when it has to."""
    out = subprocess.run(["xdotool", "getmouselocation", "--shell"], capture_output=True, text=True).stdout
    at = dict(line.split("=", 1) for line in out.split() if "=" in line)
    if (at.get("X"), at.get("Y")) != (str(x), str(y)):
        xdo("mousemove", "--sync", str(x), str(y))


def double_click(acc):
    x, y = settled_center(acc)
    move_to(x, y)
    xdo("click", "--repeat", "2", "--delay", "80", "1")


def click(acc):
    x, y = settled_center(acc)
    move_to(x, y)
    xdo("click", "1")


def screenshot(path):
    subprocess.run(["import", "-window", "root", path], check=True, capture_output=True)


def start_app(binary, vault, keystore, log, extra_env=None, **popen):
    """nu11vlt-app on the given vault, without the test's security key; its stderr to `log`."""
    env = dict(os.environ, **(extra_env or {}))
    env.pop("NU11VLT_FIDO2_DEVICE", None)
    return subprocess.Popen([binary, "--vault", vault, "--keystore", keystore], env=env,
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"), **popen)


def fill_screen(wid, width=1280, height=800):
    """A laptop's screen: the window moved to the corner and sized to the display."""
    subprocess.run(["xdotool", "windowmove", "--sync", wid, "0", "0"], capture_output=True)
    subprocess.run(["xdotool", "windowsize", "--sync", wid, str(width), str(height)], check=True, capture_output=True)


def press_row(name):
    """Clicks a sidebar row once it stands still."""
    row = find(name, "list item", timeout=30)
    # A folded sidebar slides in after "Sections" (and GTK 4.8 calls a row VISIBLE before it
    # is on screen): click only once the row stands still, or the click lands where it was.
    last = []

    def still():
        now = center(row)
        settled = bool(last) and last[-1] == now
        last.append(now)
        return settled
    wait_for(still, f"the row {name!r} to stand still", 15, interval=0.3)
    click(row)
    time.sleep(0.5)
