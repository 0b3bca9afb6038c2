#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs the Swift test suite (built already) and, when it fails, repeats every failure at the
# end of the output: CI shows the tail of a run, and a failure 600 lines up is lost there.
set -u
log=.build/test.log
{ swift test --skip-build 2>&1; echo $? > .build/test.rc; } | tee "$log"
rc=$(cat .build/test.rc 2>/dev/null || echo 1)
if [ "$rc" -ne 0 ]; then
  echo
  echo "=== what failed (repeated from above) ==="
  grep -E "✘|recorded an issue|Expectation failed|error:|fatal|Fatal|crashed|signal" "$log" | grep -v "^✔" | cut -c1-400 | head -80
  if [ -f .build/gui-test.log ] && ! grep -q "gui: PASS" .build/gui-test.log; then
    echo "=== the GUI test's log (tail) ==="
    tail -20 .build/gui-test.log
  fi
fi
exit "$rc"
