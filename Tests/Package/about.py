#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Starts the installed nu11vlt-app (run by Tests/Package/run.sh under Xvfb and
dbus-run-session, inside the namespace that hides the toolchain), waits for its unlock
screen, opens Main menu → About Nu11VLT and prints the version the About window shows:
"about: VERSION". The vault and key store come from NU11VLT_VAULT / NU11VLT_KEYSTORE.

usage: about.py APP EXPECTED_VERSION"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "GUI"))
from atspi_driver import Timeout, find, named, press, showing, wait_for  # noqa: E402

APP, VERSION = sys.argv[1], sys.argv[2]
app = subprocess.Popen([APP], stderr=subprocess.PIPE, text=True)
try:
    find("PIN", "password text", timeout=60)
    find("Unlock vault", "push button", timeout=10)
    print("app: the unlock screen is up", flush=True)
    # GtkMenuButton: the name is on the menu button, the action on the toggle button inside it.
    menu = find("Main menu", None, timeout=10)
    target = menu
    try:
        if menu.queryAction().nActions == 0:
            raise NotImplementedError
    except Exception:
        target = next(c for c in menu if c is not None)
    target.queryAction().doAction(0)
    press("About Nu11VLT")
    # AdwAboutWindow shows the version as its own label (under the name).
    shown = wait_for(lambda: [a.name for a in named(VERSION, "label") if showing(a)], f"a label {VERSION!r} in the About window", 20)
    print(f"about: {shown[0]}", flush=True)
except Timeout as e:
    print(f"about: FAIL: {e}", flush=True)
    app.kill()
    print(app.communicate()[1][-2000:], file=sys.stderr)
    sys.exit(1)
app.terminate()
try:
    app.wait(10)
except subprocess.TimeoutExpired:
    app.kill()
