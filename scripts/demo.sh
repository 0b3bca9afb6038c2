#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Walks a throwaway vault through the main features. The PIN goes through a file
# descriptor fed by a pipe, as a script would do it — never argv or the environment.
set -eu
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/nu11vlt-demo.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export NU11VLT_VAULT="$WORK/vault" NU11VLT_KEYSTORE="$WORK/keystore"
PIN="demo-passphrase"
n11() { printf '%s\n' "$PIN" | "$BIN" "$@" --pin-stdin; }
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "nu11vlt --help"
"$BIN" --help | head -20

step "generate three images (PPM), a phone-like JPEG (EXIF orientation, capture date, GPS) and a file that only claims to be a JPEG"
mkdir photos
for i in 1 2 3; do
  { printf 'P6\n64 48\n255\n'; head -c $((64 * 48 * 3)) /dev/urandom; } > "photos/image-$i.ppm"
done
convert -size 1200x900 plasma:fractal -quality 88 photos/big-photo.jpg
exiftool -q -overwrite_original -Orientation#=6 -DateTimeOriginal="2025:08:01 18:30:00" -Make=Demo -Model="Demo Phone" \
  -GPSLatitude=48.8584 -GPSLatitudeRef=N -GPSLongitude=2.2945 -GPSLongitudeRef=E photos/big-photo.jpg
head -c 2048 /dev/urandom > photos/not-really.jpg
ls -l photos

step "init (Argon2id at the floor for a quick demo: 2 passes, 19 MiB; real vaults calibrate to ~0.5 s)"
n11 init --kdf-iterations 2 --kdf-memory 19 | tee init.out
PHRASE=$(grep -E '^ +[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}$' init.out | tr -d ' ')

step "album create Holidays; import two images into it and the rest into Photos"
n11 album create Holidays
n11 import --album Holidays photos/image-1.ppm photos/image-2.ppm
n11 import photos/image-3.ppm photos/big-photo.jpg photos/not-really.jpg   # the fake JPEG imports with a warning

step "photos: sealed thumbnails made at import (decoded in a locked-down helper), EXIF facts, location stripped on export"
PHOTO=$(n11 list --json | sed -n 's/.*"id" : "\([0-9a-f]*\)".*/\1/p' | sed -n 4p)
n11 list --json --sort taken --limit 1 | grep -E '"(name|width|height|taken|camera|gps|thumbnail)"'
n11 thumbnail "$PHOTO" --size grid -o tile.jpg && ls -l tile.jpg
ls vault/Thumbnails
n11 export "$PHOTO" --strip-location -o stripped.jpg
echo "GPS tags before: $(exiftool -s -gps:all photos/big-photo.jpg | wc -l), after --strip-location: $(exiftool -s -gps:all stripped.jpg | wc -l) (same size: $(wc -c < photos/big-photo.jpg) = $(wc -c < stripped.jpg) bytes)"

step "list (human and --json)"
n11 list
n11 list --json --limit 1
n11 album list

step "album rename, move an item back to Photos"
n11 album rename Holidays "Summer 2026"
FIRST=$(n11 list --album "Summer 2026" --json | sed -n 's/.*"id" : "\([0-9a-f]*\)".*/\1/p' | head -1)
n11 album move --photos "$FIRST"

step "export every item and compare byte for byte with the originals"
n11 list --json | sed -n 's/.*"id" : "\([0-9a-f]*\)".*/\1/p' > ids
while read -r id; do
  name=$(n11 list --json | grep -A8 "\"id\" : \"$id\"" | sed -n 's/.*"name" : "\(.*\)",*/\1/p' | head -1)
  n11 export "$id" -o "out-$name"
  cmp "photos/$name" "out-$name" && echo "identical: $name"
done < ids

step "one unlock, many commands: export a whole album into a folder, then nu11vlt shell (commands after one PIN)"
n11 export --album "Summer 2026" -o album-copy && ls album-copy
printf '%s\nlist\nalbum list\nexport --all -o all-copy\n' "$PIN" | "$BIN" shell --pin-stdin
ls all-copy

step "what an attacker sees: opaque names, no plaintext"
find vault keystore -type f | sed "s|$WORK/||" | sort
if grep -rq "image-1" vault keystore; then echo "LEAK: a file name is visible" >&2; exit 1; fi
echo "no file name found in the vault or key store"

step "delete (crypto-shredding) one item, then the album with its items"
n11 delete "$FIRST"
n11 album delete "Summer 2026" --items delete
n11 list

step "notes: add from stdin (PIN on fd 3), list, show"
printf 'Buy film.\nCall the lab.\n' | "$BIN" note add --title "Errands" --pin-fd 3 3<<PINEOF
$PIN
PINEOF
n11 note list
NOTE=$(n11 note list --json | sed -n 's/.*"id" : "\([0-9a-f]*\)".*/\1/p' | head -1)
n11 note show "$NOTE"

step "fade: an item that self-destructs after 2 seconds"
n11 import --fade 2s photos/image-3.ppm
n11 list
sleep 3
echo "(3 seconds later)"
"$BIN" sweep
n11 list

step "settings are typed and validated; secure deletion by default"
"$BIN" settings list
n11 settings set deletion.mode secure
n11 settings set preview.cache_mib 99999 || echo "(refused, as it should be)"

step "archive: a portable export, inspected, decrypted by the independent Python tool, imported into a second vault"
printf '%s\n%s\n' "$PIN" "violet-quartz-tulip-orbit-canyon" | "$BIN" archive export --portable -o "$WORK/demo.nu11vlt" --pin-stdin --password-fd 0 --kdf-memory 19 --kdf-iterations 2
"$BIN" archive inspect "$WORK/demo.nu11vlt"
if /usr/bin/python3 -c 'import cryptography, argon2' 2>/dev/null; then
  printf 'violet-quartz-tulip-orbit-canyon\n' | /usr/bin/python3 "$ROOT/tools/nu11vlt_decrypt.py" "$WORK/demo.nu11vlt" "$WORK/py-out"
fi
printf 'second-pin\n' | NU11VLT_VAULT="$WORK/vault2" NU11VLT_KEYSTORE="$WORK/keystore2" "$BIN" init --pin-stdin --kdf-iterations 2 --kdf-memory 19 >/dev/null
printf 'second-pin\nviolet-quartz-tulip-orbit-canyon\n' | NU11VLT_VAULT="$WORK/vault2" NU11VLT_KEYSTORE="$WORK/keystore2" "$BIN" archive import "$WORK/demo.nu11vlt" --pin-stdin --password-fd 0
printf 'second-pin\n' | NU11VLT_VAULT="$WORK/vault2" NU11VLT_KEYSTORE="$WORK/keystore2" "$BIN" list --pin-stdin

step "TPM 2.0: a vault whose PINs the TPM guards (a software TPM stands in for the laptop's)"
# start_tpm DIR: a software TPM on DIR/sock (a "machine"); its process ID in TPMPIDS.
TPMPIDS=""
start_tpm() {
  mkdir -p "$1"
  swtpm socket --tpm2 --tpmstate dir="$1" --server type=unixio,path="$1/sock" \
    --ctrl type=unixio,path="$1/sock.ctrl" --flags not-need-init,startup-clear >/dev/null 2>&1 &
  TPMPIDS="$TPMPIDS $!"
  trap 'kill -9 $TPMPIDS 2>/dev/null; rm -rf "$WORK"' EXIT
  for _ in 1 2 3 4 5 6 7 8 9 10; do [ -S "$1/sock" ] && break; sleep 0.1; done
}
if command -v swtpm >/dev/null 2>&1; then
  start_tpm "$WORK/tpm"
  export NU11VLT_TPM_TCTI="swtpm:path=$WORK/tpm/sock"
  t3() { NU11VLT_VAULT="$WORK/vault3" NU11VLT_KEYSTORE="$WORK/keystore3" "$BIN" "$@"; }
  printf '482913\n' | t3 init --tpm --pin-stdin --kdf-iterations 2 --kdf-memory 19 | grep -E "TPM|Recovery|-.*-.*-" || true
  printf '111111\n' | t3 list --pin-stdin || echo "(a wrong PIN: the TPM counted it)"
  t3 tpm status
  cp -a "$WORK/keystore3" "$WORK/keystore3-copy"
  echo "a copy of the key store on another machine opens nothing there: try with a second TPM"
  start_tpm "$WORK/tpm2"
  printf '482913\n' | NU11VLT_TPM_TCTI="swtpm:path=$WORK/tpm2/sock" t3 list --pin-stdin || true
  t3 wipe --yes >/dev/null
  unset NU11VLT_TPM_TCTI
else
  echo "(swtpm is not installed: make test installs it)"
fi

step "backups and recovery: back up the vault folder only; the key store is lost; the folder and the phrase rebuild it"
n11 backup enable
"$BIN" backup status
cp -a vault vault-backup                      # what restic or rsync would copy (see README)
mv keystore keystore-lost                     # the disk with the key store died
# The phrase (typed at the prompt in real life), then the new PIN, one line each on stdin.
printf '%s\n%s\n' "$PHRASE" "$PIN" | "$BIN" recover --vault "$WORK/vault-backup" --kdf-iterations 2 --kdf-memory 19 \
  --phrase-fd 0 --pin-stdin
NU11VLT_VAULT="$WORK/vault-backup" n11 list
rm -rf vault-backup keystore && mv keystore-lost keystore   # back to the original pair for the last steps
n11 backup disable

step "two devices: pair, let the folder sync (copied here as Syncthing would), join with the one-time code, import on both"
CODE=$(n11 device pair --name laptop | grep -oE '[a-z]{4}(-[a-z]{4}){7}')
sync_folder() {   # every file but the device-local ones (the vault's .stignore)
  (cd "$1" && find . -type f ! -name 'index.sqlite*' ! -name '.lock' ! -name 'CACHEDIR.TAG' ! -name '.stignore' ! -name '.n11tmp-*') \
    | while read -r f; do mkdir -p "$2/$(dirname "$f")"; cp -p "$1/$f" "$2/$f"; done
}
sync_folder vault phone-vault
printf '%s\n' "$CODE" > code   # typed at the prompt in real life
printf '%s\n' "$PIN" | "$BIN" device add --vault "$WORK/phone-vault" --keystore "$WORK/phone-keystore" --name phone \
  --kdf-iterations 2 --kdf-memory 19 --code-fd 3 --pin-stdin 3<code
rm -f code
printf 'taken on the phone\n' > from-phone.txt
printf '%s\n' "$PIN" | "$BIN" import --vault "$WORK/phone-vault" --keystore "$WORK/phone-keystore" from-phone.txt --pin-stdin
sync_folder phone-vault vault
n11 list
n11 device list
rm -rf phone-vault phone-keystore

step "status"
n11 status

step "wipe: every key first, then every file"
"$BIN" wipe --yes
ls -A "$WORK" | grep -E '^(vault|keystore)$' || echo "vault and key store are gone"
printf '\nDemo finished; the throwaway vault in %s is removed.\n' "$WORK"
