# SPDX-License-Identifier: GPL-3.0-or-later
"""The gallery after a fling (issue 36): thumbnails are queued a few at a time and a tile that
scrolled away before its turn is skipped, so what stops on screen must still get its own
thumbnail. 400 photos, each of two colours (top and bottom) that name it; the wheel flings
down and part of the way back; each time, the pictures inside the grid's viewport, read from
a screenshot, must be a gap-free run in the gallery's order, each its own photo's colours —
not an empty tile, not another photo's. Used by gui_test.py."""
import colorsys
import os
import signal
import subprocess
import time

from PIL import Image

from atspi_driver import Timeout, fill_screen, find, focus_window, press, screenshot, start_app, wait_for

COUNT = 400


def hue(k):
    r, g, b = colorsys.hsv_to_rgb(k / 20, 0.9, 0.95)
    return int(r * 255), int(g * 255), int(b * 255)


def colours(i):
    """Photo i: its top half one of 20 hues, its bottom half another (20 × 20 = 400 photos,
    neighbouring hues 18° apart: no two photos alike after JPEG and scaling)."""
    return hue(i % 20), hue(i // 20)


def make_vault(cli, work, pin):
    vault, keystore = os.path.join(work, "fling-vault"), os.path.join(work, "fling-keystore")
    folder = os.path.join(work, "fling-photos")
    os.makedirs(folder)
    morning = time.mktime((2021, 6, 1, 0, 30, 0, 0, 0, -1))
    for i in range(COUNT):
        path = os.path.join(folder, f"fling-{i:03}.jpg")
        image = Image.new("RGB", (200, 150), colours(i)[0])
        image.paste(colours(i)[1], (0, 75, 200, 150))
        image.save(path, quality=95)
        os.utime(path, (morning + 60 * i, morning + 60 * i))  # one day: one section, fling-399 first
    for args in (["init", "--kdf-iterations", "2", "--kdf-memory", "19"], ["import", "--quiet", "-r", folder]):
        r = subprocess.run([cli, *args, "--vault", vault, "--keystore", keystore, "--pin-stdin"],
                           input=pin + "\n", capture_output=True, text=True)
        assert r.returncode == 0, f"fling vault: nu11vlt {args[0]} failed: {r.stderr.strip()}"
    return vault, keystore


def extents(acc):
    box = acc.queryComponent().getExtents(0)  # desktop coordinates
    return box.x, box.y, box.width, box.height


def blocks(shot, viewport, step=4):
    """The pictures in a screenshot: blocks of saturated colours at least 140 px on a side,
    wholly inside the grid's viewport, as (top, left, (its top colour, its bottom colour)), found on a 4-px lattice.
    (The accessibility tree cannot say where a tile is: GTK keeps recycled tiles in it with
    the places they last had.)"""
    image = Image.open(shot).convert("RGB")
    vx, vy, vw, vh = viewport
    xs, ys = range(vx + 2, vx + vw - 2, step), range(vy + 2, vy + vh - 2, step)
    lit = {(i, j) for j, y in enumerate(ys) for i, x in enumerate(xs)
           if (lambda p: max(p) - min(p) >= 40)(image.getpixel((x, y)))}
    found, seen = [], set()
    for cell in sorted(lit):
        if cell in seen:
            continue
        seen.add(cell)
        todo, cells = [cell], []
        while todo:
            i, j = todo.pop()
            cells.append((i, j))
            for n in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
                if n in lit and n not in seen:
                    seen.add(n)
                    todo.append(n)
        i0, i1 = min(c[0] for c in cells), max(c[0] for c in cells)
        j0, j1 = min(c[1] for c in cells), max(c[1] for c in cells)
        inside = i0 > 0 and j0 > 0 and i1 < len(xs) - 1 and j1 < len(ys) - 1
        if inside and (i1 - i0) * step >= 140 and (j1 - j0) * step >= 140:
            middle = xs[(i0 + i1) // 2]
            found.append((ys[j0], xs[i0], (image.getpixel((middle, ys[j0 + (j1 - j0) // 4])),
                                           image.getpixel((middle, ys[j0 + 3 * (j1 - j0) // 4])))))
    return sorted(found)


def photo_index(pair):
    """Which photo has these two colours (JPEG's tolerance), or None."""
    near = [next((k for k in range(20) if max(abs(a - b) for a, b in zip(rgb, hue(k))) <= 30), None) for rgb in pair]
    return None if None in near else near[0] + 20 * near[1]


def screen_problem(shot, viewport):
    """What is wrong with the tiles on screen, or None: in the gallery's order (newest first:
    fling-399 … fling-000) they must be a run without a gap, each row full (but the list's
    last), each picture its own photo's colours — an empty tile or another photo's thumbnail
    breaks the run."""
    found = blocks(shot, viewport)
    if len(found) < 8:
        return f"only {len(found)} pictures on screen"
    rows = {}
    for top, left, rgb in found:
        rows.setdefault(min((t for t in rows if abs(t - top) <= 8), default=top), []).append((left, rgb))
    order = [photo_index(rgb) for top in sorted(rows) for _, rgb in sorted(rows[top])]
    if None in order:
        return f"a picture of no photo's colours on screen (an empty or wrong tile): {order}"
    if order != list(range(order[0], order[0] - len(order), -1)):
        return f"the pictures on screen are not a run in the gallery's order: {order}"
    columns = max(len(r) for r in rows.values())
    short = [top for top in sorted(rows)[:-1] if len(rows[top]) < columns]
    if short or (order[-1] != 0 and len(rows[max(rows)]) < columns):
        return f"a row with a tile missing its picture: {order}"
    return None


def check_screen(shots, what):
    """Waits until the pictures on screen are complete and right; returns how many there were."""
    viewport = extents(find("Gallery", timeout=30))
    shot = os.path.join(shots, f"fling-{what.replace(' ', '-')}.png")
    last = {"problem": "not looked"}

    def settled():
        screenshot(shot)
        last["problem"] = screen_problem(shot, viewport)
        return None if last["problem"] else True
    try:
        wait_for(settled, f"every tile on screen {what} to show its own thumbnail", 20, interval=1.0)
    except Timeout:
        raise AssertionError(f"{what}: {last['problem']}")
    return len(blocks(shot, viewport))


def fling_check(cli, app_binary, work, shots, pin, step):
    step(f"a fling through {COUNT} photos: every tile where it stops shows its own thumbnail")
    vault, keystore = make_vault(cli, work, pin)
    app = start_app(app_binary, vault, keystore, os.path.join(work, "fling-app.log"))
    try:
        find("Enter your PIN", "label", timeout=60)
        fill_screen(focus_window("^Nu11VLT$"))
        for digit in pin:
            press(f"Digit {digit}")
        press("Unlock with keypad")
        first = check_screen(shots, "after unlock")
        x, y, w, h = extents(find("Gallery"))
        subprocess.run(["xdotool", "mousemove", "--sync", str(x + w // 2), str(y + h // 2)], check=True)
        subprocess.run(["xdotool", "click", "--repeat", "120", "--delay", "10", "5"], check=True)
        down = check_screen(shots, "after the fling down")
        subprocess.run(["xdotool", "click", "--repeat", "50", "--delay", "10", "4"], check=True)
        up = check_screen(shots, "after the fling back up")
        print(f"gui: fling: {first}, {down} and {up} tiles on screen checked, each its own colour", flush=True)
    finally:
        app.send_signal(signal.SIGTERM)
        app.wait(timeout=30)
