#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs the GUI test (gui_test.py) on a private X server (Xvfb) and session bus
# (dbus-run-session), with a HOME and XDG_RUNTIME_DIR of its own.
#   Tests/GUI/run.sh BIN_DIR SCREENSHOT_DIR
# NU11VLT_GUI_PASSES=name,name runs only those passes (gui_test.py lists them; while
# developing a step); unset, every pass runs. The run's logs (the apps' stderr, the traces)
# are copied to SCREENSHOT_DIR/logs when it fails, and always with NU11VLT_GUI_KEEP_LOGS=1.
set -eu
BIN=$(cd "$1" && pwd)
SHOTS=$2
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/n11gui.XXXXXX")
mkdir -p "$WORK/home" "$WORK/run" "$SHOTS"
chmod 700 "$WORK/run"
# A display number nobody uses.
n=90
while [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ]; do n=$((n + 1)); done
Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp -noreset >"$WORK/xvfb.log" 2>&1 &
XVFB=$!
keep_logs() {
  mkdir -p "$SHOTS/logs"
  find "$WORK" -maxdepth 1 -type f \( -name '*.log' -o -name '*.trace' \) -exec cp {} "$SHOTS/logs/" \;
}
cleanup() {
  [ "${NU11VLT_GUI_KEEP_LOGS:-}" = 1 ] && keep_logs
  kill "$XVFB" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
i=0
while [ ! -e "/tmp/.X11-unix/X$n" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
env -i PATH="$PATH" HOME="$WORK/home" XDG_RUNTIME_DIR="$WORK/run" DISPLAY=":$n" GDK_BACKEND=x11 \
  LANG=C.UTF-8 NO_AT_BRIDGE=0 GTK_A11Y=atspi NU11VLT_GUI_PASSES="${NU11VLT_GUI_PASSES:-}" \
  dbus-run-session -- /usr/bin/python3 "$HERE/gui_test.py" "$BIN" "$SHOTS" "$WORK" 2>"$WORK/stderr.log" || {
    status=$?
    keep_logs
    grep -v -e "failed to suspend thread" -e "dbus-daemon" "$WORK/stderr.log" | tail -60 >&2
    exit $status
  }
