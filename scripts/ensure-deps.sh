#!/bin/sh
# Installs what a fresh Debian machine lacks to build and test Nu11VLT: the C libraries
# (libsodium, SQLite, zlib headers, libvips, tpm2-tss) and the tools the tests call (sqlite3, faketime,
# tar, ImageMagick, exiftool, heif-enc).
set -eu
missing=""
pkg-config --exists libsodium 2>/dev/null || missing="$missing libsodium-dev"
# The content cipher: OpenSSL 3's libcrypto EVP (chosen by bench/run's cipher row).
pkg-config --exists libcrypto 2>/dev/null || missing="$missing libssl-dev"
pkg-config --exists sqlite3 2>/dev/null || missing="$missing libsqlite3-dev"
[ -f /usr/include/zlib.h ] || missing="$missing zlib1g-dev"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
command -v sqlite3 >/dev/null 2>&1 || missing="$missing sqlite3"
command -v faketime >/dev/null 2>&1 || missing="$missing faketime"
command -v tar >/dev/null 2>&1 || missing="$missing tar"
command -v unzip >/dev/null 2>&1 || missing="$missing unzip"
command -v strace >/dev/null 2>&1 || missing="$missing strace"
command -v script >/dev/null 2>&1 || missing="$missing bsdutils"
command -v ps >/dev/null 2>&1 || missing="$missing procps"
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
# Photos: libvips (decoding, with libheif), and the tools the photo tests and bench call.
pkg-config --exists vips 2>/dev/null || missing="$missing libvips-dev"
command -v vipsthumbnail >/dev/null 2>&1 || missing="$missing libvips-tools"
command -v heif-enc >/dev/null 2>&1 || missing="$missing libheif-examples"
command -v exiftool >/dev/null 2>&1 || missing="$missing libimage-exiftool-perl"
[ -x /usr/bin/convert ] || missing="$missing imagemagick"
[ -x /usr/bin/time ] || missing="$missing time"
# TPM 2.0: tpm2-tss (ESAPI) to build; a software TPM and tpm2-tools for the TPM tests.
pkg-config --exists tss2-esys tss2-tctildr tss2-mu tss2-rc 2>/dev/null || missing="$missing libtss2-dev"
command -v swtpm >/dev/null 2>&1 || missing="$missing swtpm swtpm-tools"
command -v tpm2_setclock >/dev/null 2>&1 || missing="$missing tpm2-tools"
# The desktop app: GTK 4 + libadwaita to build; a headless X server, a session bus, the
# accessibility stack and xdotool for its GUI test; the validators of its desktop files.
pkg-config --exists gtk4 libadwaita-1 2>/dev/null || missing="$missing libgtk-4-dev libadwaita-1-dev"
command -v Xvfb >/dev/null 2>&1 || missing="$missing xvfb"
command -v dbus-run-session >/dev/null 2>&1 || missing="$missing dbus-x11"
command -v xdotool >/dev/null 2>&1 || missing="$missing xdotool"
/usr/bin/python3 -c 'import pyatspi' 2>/dev/null || missing="$missing python3-pyatspi gir1.2-atspi-2.0 at-spi2-core"
command -v appstreamcli >/dev/null 2>&1 || missing="$missing appstream"
command -v desktop-file-validate >/dev/null 2>&1 || missing="$missing desktop-file-utils"
command -v fish >/dev/null 2>&1 || missing="$missing fish"   # the completion test loads the fish script
command -v tmux >/dev/null 2>&1 || missing="$missing tmux"   # the terminal test (progress, prompts)
command -v vim >/dev/null 2>&1 || missing="$missing vim"     # the editor-traces test (vi on Debian)
command -v restic >/dev/null 2>&1 || missing="$missing restic"  # the backup-and-recover test
command -v man >/dev/null 2>&1 || missing="$missing man-db"  # `man -l` renders the generated page
command -v groff >/dev/null 2>&1 || missing="$missing groff-base"
# The independent archive decrypter (tools/nu11vlt_decrypt.py) needs Python's cryptography and argon2-cffi.
# The photo tests make a 96-megapixel JPEG with Pillow (over ImageMagick's default policy).
python3 -c 'import cryptography, argon2, PIL' 2>/dev/null || {
  echo "installing: python3 cryptography argon2-cffi pillow" >&2
  python3 -m pip install -q cryptography argon2-cffi pillow 2>/dev/null \
    || python3 -m pip install -q --break-system-packages cryptography argon2-cffi pillow >/dev/null
}
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
