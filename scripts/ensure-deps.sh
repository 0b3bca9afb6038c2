#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs, from Debian's packages only, what this machine lacks for one job:
#   scripts/ensure-deps.sh build    build everything and run `make demo` (C libraries' -dev
#                                   packages, and the demo's image tools)
#   scripts/ensure-deps.sh package  build, plus dpkg-shlibdeps and lintian (`make deb`)
#   scripts/ensure-deps.sh test     package, plus the tools the test suite calls (software TPM,
#                                   headless X, terminals, validators, Python modules)
#   scripts/ensure-deps.sh --list build|package|test   prints every package that job may install
# Nothing comes from pip: the tests' Python modules are Debian's python3-* packages, run by
# /usr/bin/python3.
set -eu
list=false
if [ "${1:-}" = "--list" ]; then list=true; shift; fi
job=${1:-build}
case "$job" in build|package|test) ;; *) echo "error: unknown job '$job' (hint: build, package or test)" >&2; exit 64 ;; esac

missing=""
all=""
# need PACKAGES CHECK...: PACKAGES are installed when the shell command CHECK fails.
need() {
  packages=$1; shift
  all="$all $packages"
  $list && return 0
  sh -c "$*" >/dev/null 2>&1 || missing="$missing $packages"
}

# ---- build (and make demo) ----
need "pkg-config" "command -v pkg-config"
need "gcc" "command -v cc"
need "libsodium-dev" "pkg-config --exists libsodium"
# The content cipher: OpenSSL 3's libcrypto EVP (chosen by bench/run's cipher row).
need "libssl-dev" "pkg-config --exists libcrypto"
need "libsqlite3-dev" "pkg-config --exists sqlite3"
need "zlib1g-dev" "test -f /usr/include/zlib.h"
# Photos: libvips (decoding in the image helper, with libheif).
need "libvips-dev" "pkg-config --exists vips"
# Videos: FFmpeg's libraries (poster frames, duration, creation date), in the same helper.
need "libavformat-dev libavcodec-dev libswscale-dev libavutil-dev" "pkg-config --exists libavformat libavcodec libswscale libavutil"
# TPM 2.0: tpm2-tss (ESAPI).
need "libtss2-dev" "pkg-config --exists tss2-esys tss2-tctildr tss2-mu tss2-rc"
# FIDO2 security keys: libfido2.
need "libfido2-dev" "pkg-config --exists libfido2"
# The desktop app: GTK 4 + libadwaita.
need "libgtk-4-dev libadwaita-1-dev" "pkg-config --exists gtk4 libadwaita-1"
# make demo: it makes its photos with ImageMagick and exiftool, and decrypts an archive with
# the independent Python decrypter (tools/nu11vlt_decrypt.py).
need "imagemagick" "test -x /usr/bin/convert"
need "libimage-exiftool-perl" "command -v exiftool"
need "python3-cryptography python3-argon2" "/usr/bin/python3 -c 'import cryptography, argon2'"

# ---- test ----
if [ "$job" = test ]; then
  need "sqlite3" "command -v sqlite3"
  need "faketime" "command -v faketime"
  need "tar" "command -v tar"
  need "unzip" "command -v unzip"
  need "strace" "command -v strace"
  need "bsdutils" "command -v script"
  need "procps" "command -v ps"
  need "libvips-tools" "command -v vipsthumbnail"
  need "libheif-examples" "command -v heif-enc"
  need "ffmpeg" "command -v ffmpeg"  # the video tests make their clips
  need "time" "test -x /usr/bin/time"
  # The photo tests make a 96-megapixel JPEG with Pillow (over ImageMagick's default policy).
  need "python3-pil" "/usr/bin/python3 -c 'import PIL'"
  # A software TPM and tpm2-tools (the TPM tests attack it as a thief would).
  need "swtpm swtpm-tools" "command -v swtpm"
  need "tpm2-tools" "command -v tpm2_setclock"
  # The software FIDO2 authenticator (Tests/Tools/soft_fido2.py): CBOR from python3-fido2.
  need "python3-fido2" "/usr/bin/python3 -c 'import fido2.cbor'"
  # The GUI test: a headless X server, a session bus, the accessibility stack, xdotool; the
  # validators of the desktop files.
  need "xvfb" "command -v Xvfb"
  need "dbus-x11" "command -v dbus-run-session"
  need "xdotool" "command -v xdotool"
  need "xsel" "command -v xsel"      # the GUI test reads PRIMARY and the clipboard on the phrase screen
  need "python3-pyatspi gir1.2-atspi-2.0 at-spi2-core" "/usr/bin/python3 -c 'import pyatspi'"
  need "appstream" "command -v appstreamcli"
  need "desktop-file-utils" "command -v desktop-file-validate"
  need "fish" "command -v fish"      # the completion test loads the fish script
  need "tmux" "command -v tmux"      # the terminal test (progress, prompts)
  need "vim" "command -v vim"        # the editor-traces test (vi on Debian)
  need "syncthing" "command -v syncthing"  # the sync test (issue 60): three instances on 127.0.0.1
  need "iproute2" "command -v ss"    # ... and what they listen on
  need "restic" "command -v restic"  # the backup-and-recover test, and the README's backup commands
  need "age" "test -x /usr/bin/age && test -x /usr/bin/age-keygen"  # the age round trips (issue 59: age 1.1.1 both ways)
  need "bsdutils" "test -x /usr/bin/script"  # runs age -p / age -d with a terminal for its passphrase
  need "borgbackup" "command -v borg" # the README's borg command never stores the key store
  need "man-db" "command -v man"     # `man -l` renders the generated page
  need "groff-base" "command -v groff"
fi
# ---- package (make deb, and the package test) ----
if [ "$job" = test ] || [ "$job" = package ]; then
  need "dpkg-dev" "command -v dpkg-shlibdeps"
  need "lintian" "command -v lintian"
fi

if $list; then
  for p in $all; do echo "$p"; done
  exit 0
fi
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
$SUDO apt-get install -y -q $missing >/dev/null 2>&1 || {
  $SUDO apt-get update -q >/dev/null
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -q $missing >/dev/null
}
