#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds .build/deb/nu11vlt_<VERSION>_<arch>.deb from what `make release` built (`make deb`
# runs both): `make install` into a staging root with PREFIX=/usr (the helper in
# /usr/libexec/nu11vlt/), Depends computed by dpkg-shlibdeps from the binaries, the copyright
# and changelog Debian asks for, then lintian (any error fails).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
VERSION=$(tr -d '[:space:]' < VERSION)
built=$(.build/release/nu11vlt --version 2>/dev/null || echo "none")
if [ "$built" != "$VERSION" ]; then
  echo "error: .build/release/nu11vlt is version $built, VERSION says $VERSION (hint: make release)" >&2
  exit 1
fi
ARCH=$(dpkg --print-architecture)
OUT=$ROOT/.build/deb
PKG=$OUT/root
DEB=$OUT/nu11vlt_${VERSION}_${ARCH}.deb
rm -rf "$OUT"
mkdir -p "$PKG/DEBIAN" "$OUT/shlibs/debian"
umask 022
make --no-print-directory -s install DESTDIR="$PKG" PREFIX=/usr ZSH_COMPDIR=/usr/share/zsh/vendor-completions >/dev/null

# Debian's documentation files: the copyright (machine-readable), the changelog, the news.
DOC=$PKG/usr/share/doc/nu11vlt
install -d "$DOC"
DATE=$(git log -1 --format=%aD 2>/dev/null || date -R)
cat > "$DOC/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: nu11vlt
Upstream-Contact: The Nu11VLT authors <maintainers@nu11vlt.org>

Files: *
Copyright: 2026 The Nu11VLT authors
License: GPL-3+

Files: swift-runtime/*
Copyright: Apple Inc. and the Swift project authors
License: Apache-2.0 WITH Swift-exception
Comment: The Swift standard library, Foundation and Dispatch, linked statically into the
 binaries (docs/DEPENDENCIES.md lists every library and its license).

Files: swift-crypto/* swift-argument-parser/* swift-system/* swift-collections/*
Copyright: Apple Inc. and the project authors
License: Apache-2.0
Comment: Linked statically.

Files: GRDB/* ZIPFoundation/*
Copyright: Gwendal Roué; Thomas Zoechling
License: Expat
Comment: Linked statically.

License: GPL-3+
 This program is free software: you can redistribute it and/or modify it under the terms of
 the GNU General Public License as published by the Free Software Foundation, either version 3
 of the License, or (at your option) any later version.
 .
 On Debian systems, the complete text of the GNU General Public License version 3 can be found
 in "/usr/share/common-licenses/GPL-3".

License: Apache-2.0
 On Debian systems, the complete text of the Apache License 2.0 can be found in
 "/usr/share/common-licenses/Apache-2.0".

License: Apache-2.0 WITH Swift-exception
 The Apache License 2.0 with the Runtime Library Exception: the runtime may be embedded in
 compiled programs without the attribution requirements of the license. On Debian systems,
 the complete text of the Apache License 2.0 can be found in
 "/usr/share/common-licenses/Apache-2.0".

License: Expat
 Permission is hereby granted, free of charge, to any person obtaining a copy of this software
 and associated documentation files (the "Software"), to deal in the Software without
 restriction, including without limitation the rights to use, copy, modify, merge, publish,
 distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
 Software is furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in all copies or
 substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.
COPYRIGHT
cat > "$OUT/changelog" <<CHANGELOG
nu11vlt ($VERSION) unstable; urgency=medium

  * Release $VERSION (NEWS.md tells what it brings).

 -- The Nu11VLT authors <maintainers@nu11vlt.org>  $DATE
CHANGELOG
gzip -9n < "$OUT/changelog" > "$DOC/changelog.gz"
gzip -9n < NEWS.md > "$DOC/NEWS.md.gz"
gzip -9n "$PKG/usr/share/man/man1/nu11vlt.1" "$PKG/usr/share/man/man1/nu11vlt-app.1"

# Depends: the shared libraries the three binaries use, as Debian's packages name them.
printf 'Source: nu11vlt\n\nPackage: nu11vlt\nArchitecture: any\n' > "$OUT/shlibs/debian/control"
DEPENDS=$(cd "$OUT/shlibs" && dpkg-shlibdeps -O -e"$PKG/usr/bin/nu11vlt" -e"$PKG/usr/bin/nu11vlt-app" \
  -e"$PKG/usr/libexec/nu11vlt/nu11vlt-image-helper" 2>"$OUT/shlibdeps.log" | sed -n 's/^shlibs:Depends=//p')
[ -n "$DEPENDS" ] || { echo "error: dpkg-shlibdeps found no dependencies (see $OUT/shlibdeps.log)" >&2; exit 1; }

find "$PKG" -type d -exec chmod 0755 {} +
(cd "$PKG" && find usr -type f -exec md5sum {} + | sort -k2) > "$PKG/DEBIAN/md5sums"
chmod 0644 "$PKG/DEBIAN/md5sums"
cat > "$PKG/DEBIAN/control" <<CONTROL
Package: nu11vlt
Version: $VERSION
Architecture: $ARCH
Maintainer: The Nu11VLT authors <maintainers@nu11vlt.org>
Installed-Size: $(du -sk "$PKG/usr" | cut -f1)
Depends: $DEPENDS
Recommends: xdg-utils
Section: utils
Priority: optional
Description: zero-network encrypted vault for photos and notes
 Nu11VLT keeps photos, videos, files and notes encrypted on disk
 (ChaCha20-Poly1305, one key per item, Argon2id behind the PIN), with an
 optional TPM 2.0 binding, a duress PIN, fading notes and a dead man's
 switch. It never opens a network connection.
 .
 This package holds the command line (nu11vlt), the GTK 4 desktop app
 (nu11vlt-app) and the sandboxed image decoder they use.
CONTROL
dpkg-deb --root-owner-group -Zxz --build "$PKG" "$DEB" >/dev/null
echo "built $DEB"
echo "Depends: $DEPENDS"
rc=0
lintian --fail-on error --tag-display-limit 0 "$DEB" > "$OUT/lintian.log" 2>&1 || rc=$?
grep -v "running with root privileges" "$OUT/lintian.log" || true
if [ "$rc" -ne 0 ]; then
  echo "error: lintian found errors in $DEB (above)" >&2
  exit 1
fi
echo "lintian: no errors"
