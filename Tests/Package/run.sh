#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The package test, as a user who installs the .deb would meet it (make test runs it, from the
# release build; PackageTests reads its result):
#  1. scripts/make-deb.sh builds the .deb and runs lintian (no error);
#  2. apt-get installs it; each binary's libraries belong to Debian packages (none from the
#     Swift toolchain);
#  3. in a private mount namespace where the Swift toolchain's folder and the build folder are
#     empty tmpfs mounts, the demo's main steps run against /usr/bin/nu11vlt (init, import a
#     JPEG with a thumbnail made by the packaged helper, list, export byte-identical) and
#     /usr/bin/nu11vlt-app starts under Xvfb to its unlock screen, whose About window shows the
#     version; then wipe;
#  4. the four versions agree: VERSION, `nu11vlt --version`, the About window, the metainfo
#     release and the package;
#  5. apt-get remove --purge leaves no file of the package behind; what the install pulled in
#     (its dependencies and recommends, e.g. xdg-utils on a machine without it) is marked
#     automatic, so `apt-get autoremove --purge` takes it; purged, the installed packages are
#     those from before.
# Prints "package: PASS" last when everything held.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
VERSION=$(tr -d '[:space:]' < VERSION)
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/n11pkg.XXXXXX")
chmod 755 "$WORK"
fail() { echo "package: FAIL: $*"; exit 1; }
cleanup() { $SUDO dpkg --purge nu11vlt >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM
export DEBIAN_FRONTEND=noninteractive
step() { echo "package: $*"; }

# A package left by an interrupted run is removed first: "before" is a system without it.
$SUDO dpkg --purge nu11vlt >/dev/null 2>&1 || true
dpkg-query -W -f '${Package} ${Version}\n' | sort > "$WORK/packages-before"

step "make-deb (release build $(.build/release/nu11vlt --version))"
scripts/make-deb.sh > "$WORK/make-deb.log" 2>&1 || { cat "$WORK/make-deb.log"; fail "make-deb.sh failed"; }
sed 's/^/  /' "$WORK/make-deb.log"
DEB=$(ls .build/deb/nu11vlt_"$VERSION"_*.deb)
cp "$DEB" "$WORK/"
DEB="$WORK/$(basename "$DEB")"
deb_version=$(dpkg-deb -f "$DEB" Version)
case "$(dpkg-deb -f "$DEB" Depends)" in
  *-dev*|*swtpm*|*tpm2-tools*|*xvfb*|*lintian*) fail "Depends names a build or test package: $(dpkg-deb -f "$DEB" Depends)" ;;
esac

step "apt-get install $DEB"
$SUDO apt-get install -y -q "$DEB" > "$WORK/install.log" 2>&1 || { tail -20 "$WORK/install.log"; fail "apt-get install failed"; }
dpkg-query -L nu11vlt > "$WORK/files"
dpkg-query -W -f '${Package} ${Version}\n' | sort > "$WORK/packages-installed"
for f in /usr/bin/nu11vlt /usr/bin/nu11vlt-app /usr/libexec/nu11vlt/nu11vlt-image-helper /usr/share/man/man1/nu11vlt.1.gz \
         /usr/share/man/man1/nu11vlt-app.1.gz /usr/share/applications/org.nu11vlt.Nu11VLT.desktop \
         /usr/share/metainfo/org.nu11vlt.Nu11VLT.metainfo.xml /usr/share/icons/hicolor/scalable/apps/org.nu11vlt.Nu11VLT.svg \
         /usr/share/bash-completion/completions/nu11vlt /usr/share/zsh/vendor-completions/_nu11vlt \
         /usr/share/fish/vendor_completions.d/nu11vlt.fish /usr/share/doc/nu11vlt/copyright; do
  grep -qx "$f" "$WORK/files" || fail "the package lacks $f"
done
[ -e /usr/bin/nu11vlt-image-helper ] && fail "the helper is in /usr/bin (it belongs in /usr/libexec/nu11vlt)"

step "the binaries' libraries all come from Debian packages"
for b in /usr/bin/nu11vlt /usr/bin/nu11vlt-app /usr/libexec/nu11vlt/nu11vlt-image-helper; do
  readelf -d "$b" | grep -qE "RPATH|RUNPATH" && fail "$b carries an RPATH/RUNPATH"
  ldd "$b" > "$WORK/ldd" 2>&1 || fail "ldd $b failed"
  grep -q "not found" "$WORK/ldd" && fail "$b: a library is not found: $(grep 'not found' "$WORK/ldd")"
  grep -qi swift "$WORK/ldd" && fail "$b still needs a Swift runtime library: $(grep -i swift "$WORK/ldd")"
  n=0
  for lib in $(awk '/=> \// { print $3 }' "$WORK/ldd"); do
    real=$(readlink -f "$lib")
    dpkg -S "$lib" >/dev/null 2>&1 || dpkg -S "$real" >/dev/null 2>&1 || fail "$b uses $lib, which no Debian package owns"
    n=$((n + 1))
  done
  echo "  $b: $n libraries, each from a Debian package"
done

TOOLCHAIN=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swiftc)")")")")
step "in a namespace without the toolchain ($TOOLCHAIN) and the build folder"
[ -d "$TOOLCHAIN" ] && [ "$TOOLCHAIN" != "/" ] && [ "$TOOLCHAIN" != "/usr" ] || fail "cannot tell the Swift toolchain's folder ($TOOLCHAIN)"
convert -size 640x480 plasma:fractal -quality 90 "$WORK/photo.jpg"
n=120
while [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ]; do n=$((n + 1)); done
cat > "$WORK/inside.sh" <<INSIDE
set -eu
mount -t tmpfs -o mode=0755 none "$TOOLCHAIN"
mount -t tmpfs -o mode=0755 none "$ROOT/.build"
[ -z "\$(ls -A "$TOOLCHAIN")" ] && [ -z "\$(ls -A "$ROOT/.build")" ] || { echo "the folders are not hidden"; exit 1; }
command -v swift >/dev/null 2>&1 && { echo "swift still runs"; exit 1; }
export HOME="$WORK/home" NU11VLT_VAULT="$WORK/vault" NU11VLT_KEYSTORE="$WORK/keystore"
mkdir -p "\$HOME"
n11() { printf '%s\n' "482913-package-test" | /usr/bin/nu11vlt "\$@" --pin-stdin; }
n11 init --kdf-iterations 2 --kdf-memory 19 > "$WORK/init.out"
n11 import "$WORK/photo.jpg" > /dev/null
n11 list --json > "$WORK/list.json"
id=\$(sed -n 's/.*"id" : "\([0-9a-f]*\)".*/\1/p' "$WORK/list.json" | head -1)
[ -n "\$id" ] || { echo "list shows no item"; exit 1; }
grep -q '"thumbnail" : true' "$WORK/list.json" || { echo "the imported JPEG has no thumbnail (the packaged helper did not run)"; cat "$WORK/list.json"; exit 1; }
grep -q '"width" : 640' "$WORK/list.json" || { echo "the helper did not read the JPEG's size"; exit 1; }
n11 export "\$id" -o "$WORK/out.jpg" > /dev/null
cmp "$WORK/photo.jpg" "$WORK/out.jpg" || { echo "the export differs from the imported file"; exit 1; }
echo "cli: init, import (thumbnail by /usr/libexec/nu11vlt/nu11vlt-image-helper), list, export byte-identical"
# The software authenticator's AF_UNIX transport is for debug builds: the package refuses it.
fido=\$(NU11VLT_FIDO2_DEVICE=unix:/tmp/no-such-socket n11 fido2 enroll 2>&1) && { echo "fido2 enroll took a unix: device"; exit 1; }
echo "\$fido" | grep -q "only test builds accept" || { echo "the release build did not refuse the unix: transport: \$fido"; exit 1; }
echo "cli: the release build refuses NU11VLT_FIDO2_DEVICE=unix: (the tests' software authenticator)"
/usr/bin/nu11vlt --version > "$WORK/cli-version"
mkdir -p "$WORK/run" && chmod 700 "$WORK/run"
Xvfb ":$n" -screen 0 1024x768x24 -nolisten tcp -noreset > "$WORK/xvfb.log" 2>&1 &
xvfb=\$!
i=0; while [ ! -e "/tmp/.X11-unix/X$n" ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
rc=0
env -i PATH=/usr/bin:/bin HOME="\$HOME" XDG_RUNTIME_DIR="$WORK/run" DISPLAY=":$n" GDK_BACKEND=x11 LANG=C.UTF-8 \
  NO_AT_BRIDGE=0 GTK_A11Y=atspi NU11VLT_VAULT="\$NU11VLT_VAULT" NU11VLT_KEYSTORE="\$NU11VLT_KEYSTORE" \
  dbus-run-session -- /usr/bin/python3 "$ROOT/Tests/Package/about.py" /usr/bin/nu11vlt-app "$VERSION" > "$WORK/about.out" 2> "$WORK/about.err" || rc=\$?
kill \$xvfb 2>/dev/null || true
cat "$WORK/about.out"
[ \$rc -eq 0 ] || { grep -v -e "failed to suspend thread" -e dbus-daemon "$WORK/about.err" | tail -20; exit 1; }
/usr/bin/nu11vlt wipe --yes > /dev/null
[ ! -e "$WORK/keystore/master.n11k" ] || { echo "wipe left the key store"; exit 1; }
echo "cli: wipe"
INSIDE
unshare --mount --propagation private sh "$WORK/inside.sh" 2>&1 | sed 's/^/  /' > "$WORK/inside.log"
cat "$WORK/inside.log"
grep -q "^  cli: wipe$" "$WORK/inside.log" || fail "the steps without the toolchain failed (above)"

step "one version: VERSION, --version, the About window, the metainfo and the package"
cli_version=$(cat "$WORK/cli-version")
about_version=$(sed -n 's/^about: //p' "$WORK/about.out")
meta_version=$(sed -n 's/.*<release version="\([^"]*\)".*/\1/p' /usr/share/metainfo/org.nu11vlt.Nu11VLT.metainfo.xml | head -1)
echo "  VERSION $VERSION, nu11vlt --version $cli_version, About $about_version, metainfo $meta_version, package $deb_version"
for v in "$cli_version" "$about_version" "$meta_version" "$deb_version"; do
  [ "$v" = "$VERSION" ] || fail "a version disagrees with VERSION ($VERSION): $v"
done

step "apt-get remove --purge nu11vlt"
$SUDO apt-get remove --purge -y -q nu11vlt > "$WORK/remove.log" 2>&1 || { tail -20 "$WORK/remove.log"; fail "apt-get remove failed"; }
left=""
while read -r f; do
  [ "$f" = "/." ] && continue
  if [ -d "$f" ]; then
    # A folder stays only when another package owns it too.
    dpkg -S "$f" >/dev/null 2>&1 || left="$left $f"
  elif [ -e "$f" ] || [ -L "$f" ]; then
    left="$left $f"
  fi
done < "$WORK/files"
[ -z "$left" ] || fail "apt-get remove --purge left:$left"
# What the install pulled in must be automatic (apt-get autoremove takes it); purge exactly that.
pulled=$(comm -13 "$WORK/packages-before" "$WORK/packages-installed" | cut -d' ' -f1 | grep -vx nu11vlt || true)
if [ -n "$pulled" ]; then
  auto=$(apt-mark showauto)
  for p in $pulled; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || continue
    echo "$auto" | grep -qx "$p" || fail "the install left $p marked manual: apt-get autoremove would keep it"
  done
  echo "  the install pulled in $(echo "$pulled" | wc -w) packages, all automatic; purging them"
  # shellcheck disable=SC2086
  $SUDO apt-get purge -y -q $pulled > "$WORK/purge.log" 2>&1 || { tail -20 "$WORK/purge.log"; fail "apt-get purge of what the install pulled in failed"; }
fi
dpkg-query -W -f '${Package} ${Version}\n' | sort > "$WORK/packages-after"
diff "$WORK/packages-before" "$WORK/packages-after" > "$WORK/packages.diff" || fail "the installed packages changed: $(cat "$WORK/packages.diff")"
echo "  $(wc -l < "$WORK/files") paths of the package: none left; the installed packages are those from before"
echo "package: PASS"
