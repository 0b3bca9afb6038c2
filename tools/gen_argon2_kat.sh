#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Known answers for Argon2id v1.3 (parallelism 1), computed with the reference `argon2`
# command (Debian package `argon2`, the PHC reference implementation), checked in as data
# for Tests/Nu11FormatTests/Argon2idTests.swift.  Usage: tools/gen_argon2_kat.sh > FILE
set -eu
command -v argon2 >/dev/null || { echo "install Debian's argon2 package" >&2; exit 1; }
echo '{"source": "argon2 (PHC reference, Debian package) via tools/gen_argon2_kat.sh", "tests": ['
sep=""
while IFS='|' read -r pw salt t kib len; do
  hash=$(printf '%s' "$pw" | argon2 "$salt" -id -v 13 -t "$t" -k "$kib" -p 1 -l "$len" -r)
  printf '%s {"password": "%s", "salt": "%s", "iterations": %s, "memoryKiB": %s, "length": %s, "hash": "%s"}\n' \
    "$sep" "$pw" "$salt" "$t" "$kib" "$len" "$hash"
  sep=","
done <<LIST
password|somesaltsomesalt|2|19456|32
correct horse battery staple|0123456789abcdef|3|32768|32
1234|nu11vlt-kat-salt|2|65536|32
été-pin|saltsaltsaltsalt|4|20480|64
x|SALTSALTSALTSALT|1|8|32
LIST
echo ']}'
