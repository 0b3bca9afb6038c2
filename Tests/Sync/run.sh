#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The sync test (issue 60): three Syncthing instances on 127.0.0.1 share a vault folder made by
# NU11VLT — two trusted devices and one untrusted (receive-encrypted) peer — isolated from every
# other address and checked under strace (Tests/Sync/syncthing_pair.py says what it proves).
#   Tests/Sync/run.sh [NU11VLT]      (default: .build/release/nu11vlt)
# make test runs it in the background beside the suite (.build/sync-test.rc, .log); SyncTests
# reads its result. Prints "sync: PASS" last when everything held.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$ROOT/.build/release/nu11vlt}
[ -x "$BIN" ] || { echo "sync: FAIL: no nu11vlt at $BIN (build it first)"; exit 1; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
for tool in syncthing strace ss; do
  command -v "$tool" >/dev/null 2>&1 || { echo "sync: FAIL: $tool is missing (scripts/ensure-deps.sh test installs it)"; exit 1; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/n11sync.XXXXXX")
# Whatever happens to the Python harness (even SIGKILL), its processes are stopped by the PIDs
# it recorded (strace and each syncthing under it), never by name.
# (A PID is signalled only while it is still strace or syncthing: never a reused one.)
ours() { case "$({ tr '\0' ' ' < "/proc/$1/cmdline"; } 2>/dev/null)" in strace*|syncthing*) return 0 ;; esac; return 1; }
cleanup() {
  if [ -f "$WORK/pids" ]; then
    for sig in TERM KILL; do
      while read -r pid; do ours "$pid" && kill -"$sig" "$pid" 2>/dev/null; done < "$WORK/pids"
      [ $sig = TERM ] && sleep 2
    done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
start=$(date +%s)
rc=0
/usr/bin/python3 "$ROOT/Tests/Sync/syncthing_pair.py" "$BIN" "$WORK" || rc=$?
echo "sync: the harness took $(( $(date +%s) - start )) s"
exit $rc
