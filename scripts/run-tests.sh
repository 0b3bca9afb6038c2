#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs the Swift test suite (built already) and, when it fails, repeats every failure at the
# end of the output: CI shows the tail of a run, and a failure 600 lines up is lost there.
set -u
log=.build/test.log
# The suite's scratch folders (tens of thousands of short-lived vaults and files, made and
# removed) go to a private folder in memory when /dev/shm is tmpfs with room to spare: on ext4
# the inode allocator's search past recently deleted inodes (recently_deleted, find_get_block)
# took about a third of the suite's CPU. Nothing the tests check depends on it: the durability
# tests model power loss from strace, and the full- and read-only-disk tests mount their own
# tmpfs. A TMPDIR set by the caller is kept.
scratch=""
if [ -z "${TMPDIR:-}" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
   [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt 4194304 ]; then
  scratch=$(mktemp -d /dev/shm/nu11vlt-tests.XXXXXX) && export TMPDIR="$scratch"
fi
trap '[ -z "$scratch" ] || rm -rf "$scratch"' EXIT
echo "test scratch folder: ${TMPDIR:-/tmp}"
# Three test processes side by side: the fault and crash suites (hundreds of short programs each,
# CPU-bound) split in two, and everything else. One process runs as many tests at once as the
# machine has cores, and a test that waits (a timeout, a TPM, a terminal, Xvfb) holds one of them
# idle: alone, it kept the two cores of CI busy about 70% of the time. The filters cover every
# test exactly once. The two extra processes are the test bundle itself, as `swift test` starts
# it: two `swift test` at once would take turns (SwiftPM locks the build folder for the run).
heavy='EndToEndTests\.(FaultTests|CrashTests)/'
part1='EndToEndTests\.(FaultTests/[a-h]|CrashTests/)'
part2='EndToEndTests\.FaultTests/[i-z]'
bundle="$(swift build --show-bin-path)/Nu11VLTPackageTests.xctest"
rm -f .build/test-heavy1.rc .build/test-heavy2.rc
for n in 1 2; do
  eval "filter=\$part$n"
  { NO_COLOR=1 "$bundle" --testing-library swift-testing --filter "$filter" > .build/test-heavy$n.log 2>&1; echo $? > .build/test-heavy$n.rc; } &
done
{ swift test --skip-build --skip "$heavy" 2>&1; echo $? > .build/test.rc; } | tee "$log"
wait
heavy_rc=0
ran=0
for n in 1 2; do
  echo "=== the fault and crash suites, part $n of 2 (run beside the above) ==="
  tail -n 20 .build/test-heavy$n.log
  cat .build/test-heavy$n.log >> "$log"
  [ "$(cat .build/test-heavy$n.rc 2>/dev/null || echo 1)" -eq 0 ] || heavy_rc=1
  count=$(sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} .*/\1/p' .build/test-heavy$n.log | tail -n 1)
  ran=$((ran + ${count:-0}))
done
# A filter that matched nothing would pass: the fault and crash suites hold about sixty tests.
if [ "$ran" -lt 50 ]; then
  echo "error: the fault and crash suites ran $ran tests (their filters matched too few; see .build/test-heavy*.log)"
  heavy_rc=1
fi
rc=$(cat .build/test.rc 2>/dev/null || echo 1)
[ "$heavy_rc" -eq 0 ] || [ "$rc" -ne 0 ] || rc=$heavy_rc
if [ "$rc" -ne 0 ]; then
  echo
  echo "=== what failed (repeated from above) ==="
  grep -E "✘|recorded an issue|Expectation failed|error:|fatal|Fatal|crashed|signal" "$log" | grep -v "^✔" | cut -c1-400 | head -80
  if [ -f .build/gui-test.log ] && ! grep -q "gui: PASS" .build/gui-test.log; then
    echo "=== the GUI test's log (tail) ==="
    tail -20 .build/gui-test.log
  fi
  if [ -f .build/sync-test.log ] && ! grep -q "sync: PASS" .build/sync-test.log; then
    echo "=== the sync test's log (tail) ==="
    tail -20 .build/sync-test.log
  fi
fi
exit "$rc"
